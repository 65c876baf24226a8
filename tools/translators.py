"""The translators' commands ``make update-po`` and ``make prune-po``.

``python -m tools.translators update-po zh_CN`` merges the English messages
that ``make gettext`` extracted (``_build/gettext/**.pot``) into each
language's catalogs, keeping every translation, and ``python -m
ext.translators prune-po zh_CN`` drops the obsolete entries of the catalogs
that no longer need them. ``make stat`` is sphinx-intl's own ``stat``. See
docs/translating.md for the translators' loop.

Why the merge is GNU gettext's msgmerge (as python-docs-fr's is) and not
``sphinx-intl update``: sphinx-intl 2.4 writes the catalogs through babel
2.18, which drops the previous English of a changed message (msgmerge's
``#|`` lines, which Poedit shows beside the new English: sphinx-intl does not
pass babel's ``include_previous``), flags every message with a MyST role
(``{ref}`...```) as ``python-brace-format``, and rewrites each header
(``Generated-By: Babel``). Measured on this project's catalogs in issue 20.
"""

from __future__ import annotations

import argparse
import re
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

from ext.translation.languages import LOCALE, ROOT, LanguageError, check_language, display_name, rel
from tools.catalogs import CatalogError, catalogs, load


def _without_creation_date(text: str) -> str:
    return re.sub(r'^"POT-Creation-Date: .*\\n"\n', "", text, flags=re.M)


def _new_catalog(pot: Path, lang: str, out: Path) -> None:
    import polib
    from babel import Locale
    from babel.messages.plurals import get_plural

    catalog = polib.pofile(str(pot), wrapwidth=79)
    catalog.header = (
        f"{display_name(lang)} ({lang}) translation of this page.\n"
        "Edit the msgstr lines only; see the translators' guide."
    )
    catalog.metadata_is_fuzzy = False
    plural = get_plural(Locale.parse(lang))
    catalog.metadata.update(
        {
            "Language": lang,
            "Language-Team": f"{display_name(lang)} <LL@li.org>",
            "Plural-Forms": f"nplurals={plural.num_plurals}; plural={plural.plural_expr};",
        }
    )
    catalog.save(str(out))


def powrap(paths: list[Path], check: bool = False) -> subprocess.CompletedProcess:
    cmd = [sys.executable, "-m", "powrap", "--quiet"] + (["--check"] if check else [])
    return subprocess.run(cmd + [str(p) for p in paths], capture_output=True, text=True)


def update_po(pot_dir: Path, langs: list[str], locale_dir: Path = LOCALE) -> dict[str, int]:
    """Merge the templates in *pot_dir* into each language's catalogs.

    Translations are never dropped: a message whose English changed keeps its
    old translation as a fuzzy suggestion with the previous msgid (``#|``), and
    a message that left the sources stays in the file as obsolete (``#~``).
    A catalog whose messages did not change is left untouched, byte for byte.
    """
    counts = {"created": 0, "updated": 0, "unchanged": 0}
    pots = sorted(pot_dir.rglob("*.pot"))
    if not pots:
        raise CatalogError(f"no templates in {rel(pot_dir)}: run `make gettext` first")
    with tempfile.TemporaryDirectory() as tmp:
        for lang in langs:
            check_language(lang, locale_dir, need_catalogs=False)
            for pot in pots:
                name = pot.relative_to(pot_dir).with_suffix(".po")
                po = locale_dir / lang / "LC_MESSAGES" / name
                out = Path(tmp) / lang / name
                out.parent.mkdir(parents=True, exist_ok=True)
                if po.exists():
                    load(po)  # refuse to merge into a broken file
                    subprocess.run(
                        [
                            "msgmerge",
                            "--quiet",
                            "--previous",
                            f"--lang={lang}",
                            "-o",
                            str(out),
                            str(po),
                            str(pot),
                        ],
                        check=True,
                    )
                else:
                    _new_catalog(pot, lang, out)
                result = powrap([out])
                if result.returncode:
                    raise CatalogError(f"powrap failed on {name}: {result.stderr}")
                new = out.read_text(encoding="utf-8")
                if po.exists():
                    old = po.read_text(encoding="utf-8")
                    if _without_creation_date(old) == _without_creation_date(new):
                        counts["unchanged"] += 1
                        continue
                    counts["updated"] += 1
                    print(f"updated {rel(po)}")
                else:
                    counts["created"] += 1
                    print(f"created {rel(po)}")
                po.parent.mkdir(parents=True, exist_ok=True)
                shutil.copyfile(out, po)
            known = {p.relative_to(pot_dir).with_suffix("").as_posix() for p in pots}
            for domain, path in catalogs(lang, locale_dir).items():
                if domain not in known:
                    print(f"kept {rel(path)}: its page is gone; delete it by hand if unwanted")
    return counts


def prune_po(langs: list[str], locale_dir: Path = LOCALE) -> dict[str, int]:
    """Drop the obsolete entries (``#~``) of each catalog of *langs* that is
    fully translated.

    An obsolete entry is an old translation kept for the translator; while
    its catalog still has fuzzy or untranslated messages, it may be the very
    text they need, so such a catalog is left as it is and named. Nothing is
    lost: git has every earlier version of the file.
    """
    counts = {"dropped": 0, "pruned": 0, "kept": 0}
    for lang in langs:
        check_language(lang, locale_dir)
        for path in catalogs(lang, locale_dir).values():
            catalog = load(path)
            obsolete = len(catalog.obsolete_entries())
            if not obsolete:
                continue
            pending = len(catalog.fuzzy_entries()) + len(catalog.untranslated_entries())
            if pending:
                counts["kept"] += 1
                print(
                    f"kept {rel(path)}: {pending} message(s) still to translate; "
                    f"its {obsolete} obsolete entries may help"
                )
                continue
            subprocess.run(["msgattrib", "--no-obsolete", "-o", str(path), str(path)], check=True)
            result = powrap([path])
            if result.returncode:
                raise CatalogError(f"powrap failed on {rel(path)}: {result.stderr}")
            counts["dropped"] += obsolete
            counts["pruned"] += 1
            print(f"pruned {rel(path)}: {obsolete} obsolete entries")
    return counts


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m tools.translators", description=__doc__.splitlines()[0]
    )
    sub = parser.add_subparsers(dest="cmd", required=True)
    p = sub.add_parser("update-po", help="merge templates into catalogs")
    p.add_argument("--pot", type=Path, default=ROOT / "_build" / "gettext")
    p.add_argument("langs", nargs="+")
    p = sub.add_parser("prune-po", help="drop obsolete entries of fully translated catalogs")
    p.add_argument("langs", nargs="+")
    args = parser.parse_args(argv)
    try:
        if args.cmd == "update-po":
            counts = update_po(args.pot, args.langs)
            print(", ".join(f"{v} {k}" for k, v in counts.items()))
        elif args.cmd == "prune-po":
            counts = prune_po(args.langs)
            print(
                f"{counts['dropped']} obsolete entries dropped from {counts['pruned']} catalog(s);"
                f" {counts['kept']} catalog(s) kept theirs"
            )
    except (CatalogError, LanguageError) as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
