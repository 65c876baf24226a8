"""The catalogs: complete, stable under update-po, and never losing work."""

from __future__ import annotations

import subprocess
import sys

import polib
import pytest
from conftest import ROOT, copy_project, make, snapshot

pytestmark = pytest.mark.build


def test_the_catalogs_pass_every_check():
    result = subprocess.run(
        [sys.executable, "-m", "ext.catalogs", "check", "zh_CN"],
        cwd=ROOT,
        capture_output=True,
        text=True,
    )
    assert result.returncode == 0, result.stderr


@pytest.fixture(scope="module")
def updated(site, tmp_path_factory):
    """A copy of the project after `make update-po` (which extracts the
    messages first), and its catalogs from before."""
    root = copy_project(tmp_path_factory.mktemp("p"), with_generated=site.root)
    before = snapshot(root / "locale")
    run = make(root, "update-po")
    assert run.returncode == 0, run.output
    assert "executed 0 lesson(s)" in run.output
    return root, before


def test_update_po_on_an_unchanged_tree_changes_nothing(updated):
    root, before = updated
    assert snapshot(root / "locale") == before


def test_catalogs_are_in_step_with_the_sources(updated):
    """Every message of the sources is in a catalog: nobody forgot update-po."""
    root, _ = updated
    for pot in sorted((root / "_build" / "gettext").rglob("*.pot")):
        rel = pot.relative_to(root / "_build" / "gettext").with_suffix(".po")
        po = polib.pofile(str(ROOT / "locale" / "zh_CN" / "LC_MESSAGES" / rel))
        have = {e.msgid for e in po if not e.obsolete}
        missing = [e.msgid for e in polib.pofile(str(pot)) if e.msgid not in have]
        assert not missing, f"{rel}: run `make update-po`: {missing[:3]}"


def test_a_changed_sentence_keeps_its_translation_as_a_fuzzy_suggestion(site, tmp_path):
    """Edit one English paragraph and delete another: both translations survive."""
    root = copy_project(tmp_path / "p", with_generated=site.root)
    page = root / "docs" / "building.md"
    po_path = root / "locale" / "zh_CN" / "LC_MESSAGES" / "building.po"
    blocks = page.read_text().split("\n\n")
    plain = [i for i, b in enumerate(blocks) if b[:1].isalpha()]  # paragraphs
    by_text = {" ".join(blocks[i].split()): i for i in plain}
    catalog = polib.pofile(str(po_path))
    changed, removed = [e for e in catalog if e.msgstr and e.msgid in by_text][:2]
    blocks[by_text[changed.msgid]] += " Really."
    del blocks[by_text[removed.msgid]]
    page.write_text("\n\n".join(blocks))

    run = make(root, "update-po")
    assert run.returncode == 0, run.output
    after = polib.pofile(str(po_path))
    (fuzzy,) = [e for e in after.fuzzy_entries() if e.previous_msgid == changed.msgid]
    assert fuzzy.msgid == changed.msgid + " Really."
    assert fuzzy.msgstr == changed.msgstr
    (obsolete,) = [e for e in after.obsolete_entries() if e.msgid == removed.msgid]
    assert obsolete.msgstr == removed.msgstr
    # prune-po keeps the old translation while the catalog still has work to
    # do, and drops it, and only it, once the suggestion is confirmed.
    run = make(root, "prune-po")
    assert run.returncode == 0, run.output
    assert "kept locale/zh_CN/LC_MESSAGES/building.po: 1 message(s)" in run.output
    assert polib.pofile(str(po_path)).obsolete_entries()
    fuzzy.flags.remove("fuzzy")
    fuzzy.previous_msgid = None
    after.save(str(po_path))
    run = make(root, "prune-po")
    assert run.returncode == 0, run.output
    assert "pruned locale/zh_CN/LC_MESSAGES/building.po: 1 obsolete entries" in run.output
    pruned = polib.pofile(str(po_path))
    assert not pruned.obsolete_entries()
    assert {e.msgid: e.msgstr for e in pruned} == {
        e.msgid: e.msgstr for e in after if not e.obsolete
    }
