"""Catalogs a translator can trust: the checks before a build and in `make check`.

Before a translated build, ``python -m tools.catalogs validate zh_CN`` checks
that GNU ``msgfmt --check`` accepts each catalog and that each translation
keeps the markup of its English; ``check zh_CN`` (``make check``) adds the rest
of docs/translating.md, "What make check checks". Each problem is one line
naming file and line.
"""

from __future__ import annotations

import argparse
import os
import re
import subprocess
import sys
from pathlib import Path

import polib

from ext.translation.languages import LOCALE, ROOT, LanguageError, check_language, rel


class CatalogError(Exception):
    """A catalog that cannot be read, with what to do about it."""


def catalogs(lang: str, locale_dir: Path = LOCALE) -> dict[str, Path]:
    """Map each catalog domain of *lang* (a docname, or any other .po) to its file."""
    base = locale_dir / lang / "LC_MESSAGES"
    return {p.relative_to(base).with_suffix("").as_posix(): p for p in sorted(base.rglob("*.po"))}


def msgfmt(path: Path) -> tuple[list[str], list[str]]:
    """``msgfmt --check``'s first error about *path* (if any) and its warnings, each
    naming the line: GNU gettext's parser is the reference (polib accepts some errors)."""
    command = ["msgfmt", "--check", "-o", os.devnull, str(path)]  # `make system` installs it
    result = subprocess.run(command, capture_output=True, text=True)
    found = re.findall(rf"^{re.escape(str(path))}:(\d+): (.*)$", result.stderr, flags=re.M)
    said = [f"{rel(path)}:{line}: {text}" for line, text in found]
    warnings = [line for line in said if ": warning: " in line]
    if not result.returncode:
        return [], warnings
    error = next((line for line in said if line not in warnings), f"{rel(path)}: {result.stderr}")
    return [f"{error.strip()} (msgfmt --check); fix the file and rebuild"], warnings


# Inline markup that a translation must carry over unchanged. For a role or a
# link with an explicit title, only the target must survive: the title is text.
# Whether the rest of a translation parses, Sphinx checks when it builds.
_RST_TOKENS = re.compile(
    r"(?P<role>:[\w.+-]+(?::[\w.+-]+)*:`(?P<rc>[^`]+)`)"
    r"|(?P<literal>``[^`]+``)"
    r"|(?P<link>`(?P<lc>[^`]+)`__?)"
    r"|(?P<subst>\|[^|\s][^|]*\|)"
)
_MD_TOKENS = re.compile(
    r"(?P<role>\{[\w.+-]+(?::[\w.+-]+)*\}`(?P<rc>[^`]+)`)"
    r"|(?P<literal>(?P<ticks>`+)(?!`).+?(?<!`)(?P=ticks)(?!`))"
    r"|(?P<link>\]\((?P<lc>[^)]+)\))"
)


def markup_tokens(text: str, syntax: str = "rst") -> list[str]:
    """The inline markup in *text* that a translation must keep, normalised."""
    pattern = _MD_TOKENS if syntax == "md" else _RST_TOKENS
    tokens = []
    for m in pattern.finditer(text):
        token = m.group(0)
        if m["role"]:
            target = re.search(r"<([^<>]+)>$", m["rc"])
            if target and not token.startswith((":math:", "{math}")):
                token = token.split("`")[0] + "<" + target[1] + ">"
        elif m["link"] and syntax == "rst":
            target = re.search(r"<([^<>]+)>$", m["lc"])
            token = "<" + target[1] + ">" if target else token
        elif m["link"]:
            token = "(" + m["lc"] + ")"
        tokens.append(token)
    return sorted(tokens)


def markup_problems(msgid: str, msgstr: str, syntax: str) -> list[str]:
    """What *msgstr* lost of the markup of *msgid*."""
    want, got = markup_tokens(msgid, syntax), markup_tokens(msgstr, syntax)
    if want == got:
        return []
    lost = ", ".join(sorted(set(want) - set(got)) or want)
    return [
        f"msgstr does not keep the markup of its msgid ({lost}); "
        "copy roles, literals and link targets unchanged"
    ]


# Sphinx's roles (:ref:, :doc:, ...) are unknown to plain docutils; the check
# of their targets is markup_problems'.
_UNKNOWN_ROLE = re.compile(
    r'\((?:ERROR|INFO)/\d\) (?:Unknown interpreted text role|No role entry for) "'
)


def rst_problems(texts: list[str]) -> list[list[str]]:
    """docutils' complaints about each of *texts* as reST. One parse for a
    whole catalog: the texts are separate blocks, so no markup leaks between
    them. Sphinx's -W build would fail too, but naming the English page."""
    import bisect

    from docutils import nodes
    from docutils.core import publish_doctree

    chunks, starts, line = [], [], 1
    for text in texts:
        chunk = text.strip("\n") + ("\n\n   literal" if text.rstrip().endswith("::") else "")
        starts.append(line)
        chunks.append(chunk + "\n\n")
        line += chunk.count("\n") + 2
    settings = {"report_level": 5, "halt_level": 5, "warning_stream": False}
    found: list[list[str]] = [[] for _ in texts]
    for msg in publish_doctree("".join(chunks), settings_overrides=settings).findall(
        nodes.system_message
    ):
        text = " ".join(msg.astext().split())
        if msg["level"] >= 2 and not _UNKNOWN_ROLE.search(text):
            where = bisect.bisect_right(starts, msg.get("line") or 1) - 1
            found[max(where, 0)].append(f"broken reST in msgstr: {text}")
    return found


# Chinese style: the rules of docs/translating.md, which holds the one table of
# terms (term | 中文 | note).
GLOSSARY = ROOT / "docs" / "translating.md"
CJK = "[\u3400-\u9fff]"
# Known mistranslations, each with the right word.
FORBIDDEN = {
    "渐变": "gradient is 梯度",
    "坡度": "gradient is 梯度",
    "自动分级": "autograd is 自动微分",
    "转发": "forward is 前向",
    "后向传播": "backward pass is 反向传播",
    "课程": "a lesson is 课 (本课, 上一课, 下一课); 课程 is a whole course",
}
# Emphasis around Chinese text: *斜体* (reST and Markdown) or _斜体_
# (Markdown). Chinese fonts have no italics; browsers slant the glyphs.
_ITALIC_CJK = re.compile(
    rf"(?<![*\w\\])\*(?![*\s])[^*]*{CJK}[^*]*(?<![*\s\\])\*(?!\*)"
    rf"|(?<![\w\\])_(?![_\s])[^_]*{CJK}[^_]*(?<![_\s\\])_(?![\w])"
)


def term_rows(path: Path = GLOSSARY) -> list[list[str]]:
    """The rows of the table of terms in *path*: the table headed "| Term | 中文"."""
    text = path.read_text(encoding="utf-8")
    table = re.search(r"^\| *Term *\| *中文 *\|.*\n\|[-|: ]+\n((?:\|.*\n?)*)", text, flags=re.M)
    return [[c.strip() for c in row.strip().strip("|").split("|")] for row in table[1].splitlines()]


def read_glossary(path: Path = GLOSSARY) -> dict[str, str]:
    """The table of terms of *path*: English term -> Chinese translation."""
    return {cells[0]: cells[1] for cells in term_rows(path) if len(cells) >= 2 and cells[1]}


def glossary_words(path: Path = GLOSSARY) -> list[str]:
    """The Chinese words of the table of terms (translations and notes), for search."""
    cells = [row[1] + " " + row[2] for row in term_rows(path) if len(row) >= 3]
    return sorted({word for text in cells for word in re.findall(rf"{CJK}{{2,}}", text)})


def zh_style_problems(msgid: str, msgstr: str, syntax: str, glossary: dict[str, str]) -> list[str]:
    """What a Chinese msgstr does against the rules of the translators' guide.

    *syntax* is "md", "rst", or "code" for a comment or docstring in a code
    block, where names (``forward``) and expressions (``(x, exp(x))``) are
    code, unmarked: a glossary term kept as it is and ASCII brackets are allowed.
    """
    code = syntax == "code"
    markup = _MD_TOKENS if syntax == "md" else _RST_TOKENS
    problems = [
        f"uses {bad}: {right}"
        for bad, right in FORBIDDEN.items()
        if bad in msgstr and bad not in msgid  # a page may quote the mistake itself
    ]
    english = markup.sub(" ", msgid)
    for term in sorted(glossary, key=len, reverse=True):
        # A term inside a dotted name (torch.autograd) is code, not prose; so
        # is a capitalised term in lower case (Hessian, but torch.func's
        # hessian, which a card's plain text shows without its markup).
        case = 0 if term[:1].isupper() else re.IGNORECASE
        found = re.compile(rf"(?<![\w.]){re.escape(term)}(?:s|es)?(?!\w|\.\w)", case)
        if found.search(english):
            english = found.sub(" ", english)
            kept = code and re.search(rf"(?<!\w){re.escape(term)}(?!\w)", msgstr)
            if glossary[term] not in msgstr and not kept:
                problems.append(f"'{term}' is translated as '{glossary[term]}' (see the glossary)")
    text = markup.sub("X", msgstr)
    if not re.search(CJK, text):
        return problems
    brackets = "" if code else rf"|{CJK}\s*\(|\)\s*{CJK}"
    if re.search(rf"{CJK}\s*[,;:!?]|[,;:!?]\s*{CJK}{brackets}|{CJK}\.(\s|$)", text):
        problems.append("use full-width punctuation (，。：；！？（）) in Chinese sentences")
    if re.search(rf"{CJK}[A-Za-z0-9]|[A-Za-z0-9]{CJK}", text):
        problems.append("put one space between Chinese and Latin text, numbers or code")
    if re.search(r"[A-Za-z0-9] +[，。：；！？、（）]|[，。：；！？、（）] +[A-Za-z0-9]", text):
        problems.append(
            "no space between full-width punctuation and Latin text or code"
            + (r" (in reST, ``x``\ （ after inline markup)" if syntax != "md" else "")
        )
    if _ITALIC_CJK.search(text if syntax == "md" else text.replace("_", " ")):
        problems.append("no italics on Chinese (*斜体*): use bold (**粗体**)")
    return problems


def code_messages(domain: str, srcdir: Path) -> set[str]:
    """The messages of a lesson's page that are comments or docstrings in its
    code blocks and its exercise's solution (ext/translation/code_comments.py)."""
    script = srcdir.parent / "gallery" / f"{Path(domain).name}.py"
    if not domain.startswith("lessons/") or not script.exists():
        return set()
    from sphinx_gallery.py_source_parser import split_code_and_text_blocks

    from ext.lessons.exercises import solution_file
    from ext.translation.code_comments import messages

    code = [b.content for b in split_code_and_text_blocks(str(script))[1] if b.type == "code"]
    solution = solution_file(domain)  # shown on the page too (ext/lessons/exercises.py)
    if solution is not None:
        code.append(solution.read_text(encoding="utf-8"))
    return {m for text in code for m in messages(text)}


# translate-toolkit's pofilter: the generic checks that fit reST and MyST
# catalogs in Chinese (docs/translating.md says why each other one does not).
POFILTER_CHECKS = (
    "accelerators acronyms blank compendiumconflicts credits doublespacing doublewords "
    "emails endwhitespace filepaths functions kdecomments long newlines nplurals options "
    "printf purepunc pythonbraceformat simplecaps startcaps startwhitespace tabs variables "
    "xmltags"
).split()


def pofilter_problems(path: Path, catalog: polib.POFile, lang: str) -> list[str]:
    """What pofilter's checks find in one catalog, each at its line."""
    from translate.filters import checks
    from translate.storage.pypo import pounit

    checker = checks.TeeChecker(  # as the pofilter command builds it
        checkerconfig=checks.CheckerConfig(targetlanguage=lang),
        limitfilters=POFILTER_CHECKS,
        checkerclasses=[checks.StandardChecker, checks.StandardUnitChecker],
        languagecode=lang,
    )
    problems = []
    for entry in catalog:
        unit = pounit(entry.msgid)
        unit.target = entry.msgstr
        for name, failure in checker.run_filters(unit, categorised=True).items():
            problems.append(f"{rel(path)}:{entry.linenum}: pofilter {name}: {failure['message']}")
    return problems


def check(langs: list[str], finished: bool = True, srcdir: Path = ROOT / "docs", locale_dir=LOCALE):
    """Every problem in the catalogs of *langs*: what a build needs (msgfmt
    accepts them, markup kept) and, for a *finished* translation, the rest."""
    errors: list[str] = []
    for lang in langs:
        check_language(lang, locale_dir)
        style = zh_style_problems if finished and lang == "zh_CN" else None  # rules of its own
        for domain, path in catalogs(lang, locale_dir).items():
            broken, warnings = msgfmt(path)
            if broken:  # the other checks read the catalog: fix this first
                errors += broken
                continue
            catalog = polib.pofile(str(path), wrapwidth=79)
            syntax = "md" if (srcdir / f"{domain}.md").exists() else "rst"  # MyST or reST
            in_code = code_messages(domain, srcdir) if style else set()
            # The page with the table of terms lists the English terms themselves.
            terms = {} if domain == GLOSSARY.stem else read_glossary()
            entries = catalog.translated_entries()
            parsed = rst_problems([e.msgstr for e in entries]) if syntax == "rst" else []
            for i, entry in enumerate(entries):
                found = markup_problems(entry.msgid, entry.msgstr, syntax)
                found += parsed[i] if parsed and not found else []
                if style:
                    kind = "code" if entry.msgid in in_code else syntax
                    found += style(entry.msgid, entry.msgstr, kind, terms)
                errors += [f"{rel(path)}:{entry.linenum}: {message}" for message in found]
            if not finished:
                continue
            errors += warnings  # msgfmt's: a header left unsigned
            errors += pofilter_problems(path, catalog, lang)
            fuzzy, untranslated = catalog.fuzzy_entries(), catalog.untranslated_entries()
            if fuzzy or untranslated:
                errors.append(
                    f"{rel(path)}: {len(untranslated)} untranslated and {len(fuzzy)} fuzzy "
                    "entries; translate them and remove the fuzzy flags"
                )
            elif catalog.obsolete_entries():
                errors.append(
                    f"{rel(path)}: {len(catalog.obsolete_entries())} obsolete entries (#~); "
                    "when nothing is left to translate, `make prune-po` drops them"
                )
    return errors


def run(doc: str, commands: dict, argv: list[str] | None = None) -> int:
    """``python -m tools.<module> COMMAND LANG...``: print each problem, fail if any."""
    parser = argparse.ArgumentParser(description=doc.splitlines()[0])
    parser.add_argument("command", choices=commands)
    parser.add_argument("langs", nargs="+")
    args = parser.parse_args(argv)
    try:
        errors = commands[args.command](args.langs)
    except (LanguageError, CatalogError) as exc:
        errors = [str(exc)]
    for line in errors:
        print(f"error: {line}", file=sys.stderr)
    return 1 if errors else 0


if __name__ == "__main__":
    sys.exit(run(__doc__, {"validate": lambda langs: check(langs, False), "check": check}))
