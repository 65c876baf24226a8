"""The translators' commands: ``make update-po`` and ``make prune-po``.

``update-po`` merges the messages that ``make gettext`` extracted
(``_build/gettext/**.pot``) into each language's catalogs with GNU gettext's
``msgmerge --previous``; docs/translating.md, "Fuzzy entries", says why not
``sphinx-intl update`` (``make stat`` is ``sphinx-intl stat``).
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import polib

from ext.translation.languages import LOCALE, ROOT, check_language, rel
from tools.catalogs import CatalogError, catalogs, run


def gettext(*command: str | Path) -> None:
    """Run a GNU gettext program, or raise :class:`CatalogError` with its first
    complaint: for a broken catalog, which it leaves as it is, its file and line."""
    result = subprocess.run([str(arg) for arg in command], capture_output=True, text=True)
    if result.returncode:
        first = result.stderr.strip().splitlines()[0].replace(f"{ROOT}/", "")
        raise CatalogError(f"{first} ({command[0]}); fix the file and run it again")


def update_po(langs: list[str], pot_dir: Path = ROOT / "_build" / "gettext", locale_dir=LOCALE):
    """Merge the templates in *pot_dir* into the catalogs of *langs*, keeping
    every translation (docs/translating.md, "Fuzzy entries"). ``--update``
    leaves a catalog whose messages did not change as it is, byte for byte,
    and writes the others wrapped as powrap would. A new page's catalog is a
    copy of its template."""
    pots = {p.relative_to(pot_dir).with_suffix("").as_posix(): p for p in pot_dir.rglob("*.pot")}
    if not pots:
        raise CatalogError(f"no templates in {rel(pot_dir)}: run `make gettext` first")
    for lang in langs:
        check_language(lang, locale_dir, need_catalogs=False)
        for domain, pot in sorted(pots.items()):
            po = locale_dir / lang / "LC_MESSAGES" / f"{domain}.po"
            if po.exists():
                before = po.read_bytes()
                gettext("msgmerge", "--quiet", "--update", "--backup=none", "--previous", po, pot)
                if po.read_bytes() != before:
                    print(f"updated {rel(po)}")
            else:
                po.parent.mkdir(parents=True, exist_ok=True)
                gettext("msgcat", f"--lang={lang}", "-o", po, pot)
                print(f"created {rel(po)}")
        for domain, path in catalogs(lang, locale_dir).items():
            if domain not in pots:
                print(f"kept {rel(path)}: no template for it; if its page is gone, delete it")
        print(f"{rel(locale_dir / lang)}: {len(pots)} templates merged")
    return []


def prune_po(langs: list[str], locale_dir: Path = LOCALE) -> list[str]:
    """Drop the obsolete entries (``#~``) of each fully translated catalog;
    while a catalog has work left, they may be the text it needs."""
    for lang in langs:  # `make prune-po` validates the catalogs first
        for path in catalogs(lang, locale_dir).values():
            catalog = polib.pofile(str(path))
            obsolete = len(catalog.obsolete_entries())
            pending = len(catalog.fuzzy_entries()) + len(catalog.untranslated_entries())
            if obsolete and pending:
                print(f"kept {rel(path)}: {pending} message(s) still to translate")
            elif obsolete:
                gettext("msgattrib", "--no-obsolete", "-o", path, path)
                print(f"pruned {rel(path)}: {obsolete} obsolete entries")
    return []


if __name__ == "__main__":
    sys.exit(run(__doc__, {"update-po": update_po, "prune-po": prune_po}))
