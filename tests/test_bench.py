"""The benchmark keeps working, without building the site again.

`make bench` builds the site some ten times; the tests already build it and
assert what each build executes (tests/test_build.py). Here the bench runs
with every command it would start answered by a made-up time, which checks
the builds it asks for, in order, and the report it writes from them. No
timing is asserted: targets live in the report of `make bench`.
"""

from __future__ import annotations

import json
import shutil

import polib
from conftest import ROOT

from tools import bench


def test_the_bench_runs_each_figure_and_reports_it(tmp_path, monkeypatch):
    commands = []

    def made_up(cmd, cwd):
        target = "floor" if cmd[0] != "make" else " ".join(cmd[2:-1])
        commands.append(target)
        return {"floor": 4.0, "html": 8.0, "html-en": 5.0}.get(target, 2.0), 0

    monkeypatch.setattr(bench, "timed", made_up)
    assert bench.main(["--quick", "--out", str(tmp_path)]) == 0
    assert commands == ["floor", "html", "html-en", "html-zh", "html", "html-zh", "html-zh", "html"]
    data = json.loads((tmp_path / "report.json").read_text())
    figures = data["trees"]["this"]
    assert figures["clean"]["ratio"]["median"] == 2.0  # 8 s against the 4 s floor
    assert figures["zh_after_en"]["ratio"]["median"] == 0.4
    text = (tmp_path / "report.md").read_text()
    assert text.startswith("# make bench (quick")
    # 0 lessons executed where the author's edit must execute one: reported, not hidden.
    assert "| this | author |" in text and text.count("| OVER |") == 1


def test_the_translators_edit_changes_one_message(tmp_path):
    shutil.copytree(ROOT / "locale", tmp_path / "locale")
    shutil.copytree(ROOT / "gallery", tmp_path / "gallery")
    folder = tmp_path / "locale" / "zh_CN" / "LC_MESSAGES" / "lessons"
    before = {
        p.name: {e.msgid: e.msgstr for e in polib.pofile(str(p))} for p in folder.glob("*.po")
    }
    bench.edit_one_msgstr(tmp_path, 3)
    after = {p.name: {e.msgid: e.msgstr for e in polib.pofile(str(p))} for p in folder.glob("*.po")}
    changed = [
        (name, msgid)
        for name in before
        for msgid in before[name]
        if before[name][msgid] != after[name][msgid]
    ]
    assert len(changed) == 1, changed
    assert after[changed[0][0]][changed[0][1]].endswith("（基准 3）")
