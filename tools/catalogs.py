"""Catalogs a translator can trust: the checks before a build and in `make check`.

Translators edit ``locale/<lang>/LC_MESSAGES/**.po`` and nothing else. Before
a translated build reads them, the Makefile checks every catalog of that
language (``python -m tools.catalogs validate zh_CN``): its syntax (GNU msgfmt
is the reference parser), and that each translation keeps the reST or MyST
markup of its English (roles, literals, link targets) and parses cleanly. A
problem stops the build with one line per problem, naming file and line, and
nothing is built.

``make check`` (``python -m tools.catalogs check zh_CN``) adds what a build
does not need but a finished translation does: every entry translated and
none fuzzy, the language's own rules (for Chinese: the glossary's words,
full-width punctuation, spacing; see docs/translating.md, whose table of
terms is the one these checks read), and the wrapping that powrap gives the
files.
"""

from __future__ import annotations

import argparse
import bisect
import os
import re
import shutil
import subprocess
import sys
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path

from ext.translation.languages import LOCALE, ROOT, LanguageError, check_language, rel


class CatalogError(Exception):
    """A catalog that cannot be read, with what to do about it."""


@dataclass(frozen=True)
class Problem:
    path: Path
    line: int
    message: str

    def __str__(self) -> str:
        return f"{rel(self.path)}:{self.line}: {self.message}"


def catalogs(lang: str, locale_dir: Path = LOCALE) -> dict[str, Path]:
    """Map each catalog domain (a docname) of *lang* to its .po file."""
    base = locale_dir / lang / "LC_MESSAGES"
    return {p.relative_to(base).with_suffix("").as_posix(): p for p in sorted(base.rglob("*.po"))}


def msgfmt(path: Path, *options: str) -> subprocess.CompletedProcess:
    """GNU msgfmt's verdict on *path* (nothing is written)."""
    program = shutil.which("msgfmt")
    if program is None:
        raise CatalogError(
            "GNU gettext's `msgfmt` is missing; install it with: sudo apt-get install gettext"
        )
    command = [program, *options, "-o", os.devnull, str(path)]
    return subprocess.run(command, capture_output=True, text=True)


def load(path: Path, verdict: subprocess.CompletedProcess | None = None):
    """Parse a catalog strictly, or raise :class:`CatalogError` naming the line.

    GNU msgfmt is the reference parser (polib and Babel accept some broken
    files, such as an unterminated string), so the syntax check is its;
    *verdict* is its result when the caller has already run it.
    """
    import polib

    result = verdict or msgfmt(path)
    if result.returncode:
        lines = result.stderr.strip().splitlines()
        found = (re.match(rf"^{re.escape(str(path))}:(\d+):\s*(.*)$", ln) for ln in lines)
        m = next((m for m in found if m), None)
        line, detail = (m[1], m[2]) if m else ("?", lines[0])
        raise CatalogError(f"{rel(path)}:{line}: syntax error ({detail}); fix the file and rebuild")
    return polib.pofile(str(path), wrapwidth=79)


# Inline markup that a translation must carry over unchanged. For a role or a
# link with an explicit title, only the target must survive: the title is text.
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


def rst_problems(text: str) -> list[str]:
    """docutils' complaints about *text* as reST (roles are accepted)."""
    return rst_problems_many([text])[0]


# Sphinx's roles (:ref:, :doc:, ...) are unknown to plain docutils; the check
# of their targets is markup_tokens'. Sphinx itself judges the rest at build.
_UNKNOWN_ROLE = re.compile(
    r'\((?:ERROR|INFO)/\d\) (?:Unknown interpreted text role|No role entry for) "'
)


def rst_problems_many(texts: list[str]) -> list[list[str]]:
    """docutils' complaints about each of *texts*, parsed as one document.

    One parse for a whole catalog instead of one per message: the texts are
    separated by blank lines, so each is a block of its own and inline markup
    cannot leak from one to the next.
    """
    from docutils import nodes
    from docutils.core import publish_doctree

    chunks, starts, line = [], [], 1
    for text in texts:
        chunk = text.strip("\n")
        if chunk.endswith("::"):  # as Sphinx does: give it its literal block
            chunk += "\n\n   dummy literal"
        starts.append(line)
        chunks.append(chunk + "\n\n")
        line += chunk.count("\n") + 2
    doctree = publish_doctree(
        "".join(chunks),
        settings_overrides={"report_level": 5, "halt_level": 5, "warning_stream": False},
    )
    found: list[list[str]] = [[] for _ in texts]
    for msg in doctree.findall(nodes.system_message):
        text = " ".join(msg.astext().split())
        if msg["level"] >= 2 and not _UNKNOWN_ROLE.search(text):
            where = bisect.bisect_right(starts, msg.get("line") or 1) - 1
            found[max(where, 0)].append(text)
    return found


def source_syntax(domain: str, srcdir: Path) -> str:
    """'md' for a MyST page, else 'rst' (hand-written or generated reST)."""
    return "md" if (srcdir / f"{domain}.md").exists() else "rst"


def check_catalog(
    path: Path, domain: str, srcdir: Path, verdict: subprocess.CompletedProcess | None = None
) -> list[Problem]:
    """Every problem in one catalog: syntax first, then markup in each msgstr."""
    catalog = load(path, verdict)
    syntax = source_syntax(domain, srcdir)
    problems = []
    to_parse = []
    for entry in catalog.translated_entries():
        want = markup_tokens(entry.msgid, syntax)
        got = markup_tokens(entry.msgstr, syntax)
        if want != got:
            lost = sorted(set(want) - set(got)) or want
            problems.append(
                Problem(
                    path,
                    entry.linenum,
                    "msgstr does not keep the markup of its msgid "
                    f"({', '.join(lost)}); copy roles, literals and link targets unchanged",
                )
            )
        elif syntax == "rst":
            to_parse.append(entry)
    complaints = rst_problems_many([e.msgstr for e in to_parse]) if to_parse else []
    for entry, found in zip(to_parse, complaints, strict=True):
        for complaint in found:
            problems.append(Problem(path, entry.linenum, f"broken reST in msgstr: {complaint}"))
    return sorted(problems, key=lambda p: p.line)


def check_language_catalogs(lang: str, srcdir: Path, locale_dir: Path = LOCALE) -> list[Problem]:
    """What a build needs of *lang*'s catalogs: syntax and markup."""
    paths = catalogs(lang, locale_dir)
    with ThreadPoolExecutor(max_workers=8) as pool:  # msgfmt is a process per catalog
        verdicts = list(pool.map(msgfmt, paths.values()))
    problems = []
    for (domain, path), verdict in zip(paths.items(), verdicts, strict=True):
        problems += check_catalog(path, domain, srcdir, verdict)
    return problems


# --------------------------------------------------------------------------
# Chinese style: the table of terms and the rules of docs/translating.md

# The translators' guide holds the one table of terms (term | 中文 | note).
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
    """The rows of the table of terms in *path* (the one headed "| Term | 中文")."""
    rows, inside = [], False
    for line in path.read_text(encoding="utf-8").splitlines():
        cells = [c.strip() for c in line.strip().strip("|").split("|")]
        if not line.lstrip().startswith("|"):
            inside = False
        elif cells[:2] == ["Term", "中文"]:
            inside = True
        elif inside and not set("".join(cells)) <= set("-: "):
            rows.append(cells)
    return rows


def read_glossary(path: Path = GLOSSARY) -> dict[str, str]:
    """The table of terms of *path*: English term -> Chinese translation."""
    return {cells[0]: cells[1] for cells in term_rows(path) if len(cells) >= 2 and cells[1]}


def _without_markup(text: str, syntax: str, placeholder: str) -> str:
    pattern = _MD_TOKENS if syntax == "md" else _RST_TOKENS
    return pattern.sub(placeholder, text)


def zh_style_problems(msgid: str, msgstr: str, syntax: str, glossary: dict[str, str]) -> list[str]:
    """What a Chinese msgstr does against the rules of the translators' guide.

    *syntax* is "md", "rst", or "code" for a comment or docstring in a code
    block (ext/translation/code_comments.py): there, names such as ``forward`` and
    expressions such as ``(x * exp(x), exp(x))`` are code, unmarked, so a
    glossary term kept as it is and ASCII brackets are allowed.
    """
    code = syntax == "code"
    syntax = "rst" if code else syntax
    problems = []
    for bad, right in FORBIDDEN.items():
        if bad in msgstr and bad not in msgid:  # a page may quote the mistake itself
            problems.append(f"uses {bad}: {right}")
    english = _without_markup(msgid, syntax, " ")
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
    text = _without_markup(msgstr, syntax, "X")
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


STYLE = {"zh_CN": zh_style_problems}


def code_messages(domain: str, srcdir: Path) -> set[str]:
    """The messages of a lesson's page that are comments or docstrings in its
    code blocks and its exercise's solution (the same definition the pages
    use, ext/translation/code_comments.py)."""
    from ext.translation.code_comments import messages

    script = srcdir.parent / "gallery" / f"{Path(domain).name}.py"
    if not domain.startswith("lessons/") or not script.exists():
        return set()
    from sphinx_gallery.py_source_parser import split_code_and_text_blocks

    from ext.lessons.exercises import solution_file

    blocks = split_code_and_text_blocks(str(script))[1]
    code = [block.content for block in blocks if block.type == "code"]
    solution = solution_file(domain)  # shown on the page too (ext/lessons/exercises.py)
    if solution is not None:
        code.append(solution.read_text(encoding="utf-8"))
    return {m for text in code for m in messages(text)}


def style_problems(lang: str, srcdir: Path, locale_dir: Path = LOCALE) -> list[Problem]:
    """The language's own rules (for zh_CN: glossary, punctuation, spacing)."""
    rule = STYLE.get(lang)
    if rule is None:
        return []
    glossary = read_glossary()
    problems = []
    for domain, path in catalogs(lang, locale_dir).items():
        syntax = source_syntax(domain, srcdir)
        in_code = code_messages(domain, srcdir)
        # The page with the table of terms lists the English terms themselves.
        terms = {} if domain == GLOSSARY.stem else glossary
        for entry in load(path).translated_entries():
            kind = "code" if entry.msgid in in_code else syntax
            for message in rule(entry.msgid, entry.msgstr, kind, terms):
                problems.append(Problem(path, entry.linenum, message))
    return problems


def glossary_words(path: Path = GLOSSARY) -> list[str]:
    """The Chinese words of the table of terms (translations and notes)."""
    words = set()
    for cells in term_rows(path):
        if len(cells) >= 3:
            words.update(re.findall(rf"{CJK}{{2,}}", cells[1] + " " + cells[2]))
    return sorted(words)


# translate-toolkit's pofilter: the generic checks that fit reST and MyST
# catalogs in Chinese. Each of the others reports what is right here:
# brackets, puncspacing, endpunc, startpunc, doublequoting, singlequoting
# (Chinese uses full-width punctuation and “”); escapes (reST's "\ " before
# a full-width bracket); numbers (Chinese writes some numbers in words:
# 模式四); urls (Markdown links that gettext wrapped); unchanged (code,
# formulas and PyTorch's own messages are meant to stay); sentencecount and
# short (Chinese sentences split and join differently); simpleplurals,
# spellcheck, validchars, musttranslatewords, notranslatewords (our own
# glossary check does these for Chinese); hassuggestion and isreview (no
# such workflow here); untranslated and isfuzzy (counted above, with what to
# do). docs/translating.md lists them for translators.
POFILTER_CHECKS = (
    "accelerators acronyms blank compendiumconflicts credits doublespacing doublewords "
    "emails endwhitespace filepaths functions kdecomments long newlines nplurals options "
    "printf purepunc pythonbraceformat simplecaps startcaps startwhitespace tabs variables "
    "xmltags"
).split()


def pofilter_problems(lang: str, locale_dir: Path = LOCALE) -> list[Problem]:
    """What translate-toolkit's pofilter finds in the catalogs of *lang*.

    pofilter writes each failing message, with a ``(pofilter) check: what``
    comment, into a copy of its catalog; each is reported at its line in the
    real catalog.
    """
    import tempfile

    import polib

    source = locale_dir / lang / "LC_MESSAGES"
    with tempfile.TemporaryDirectory() as tmp:
        out = Path(tmp) / "out"
        cmd = [sys.executable, "-m", "translate.filters.pofilter", "--progress=none"]
        cmd += [f"--language={lang}", *(f"--test={name}" for name in POFILTER_CHECKS)]
        result = subprocess.run([*cmd, str(source), str(out)], capture_output=True, text=True)
        if result.returncode:
            raise CatalogError(f"pofilter failed: {result.stderr.strip()}")
        problems = []
        for found in sorted(out.rglob("*.po")):
            path = source / found.relative_to(out)
            lines = {(e.msgctxt, e.msgid): e.linenum for e in load(path)}
            for entry in polib.pofile(str(found)):
                for note in re.findall(r"\(pofilter\) (.+)", entry.tcomment or ""):
                    line = lines.get((entry.msgctxt, entry.msgid), 0)
                    problems.append(Problem(path, line, f"pofilter {note}"))
    return problems


def header_problems(path: Path) -> list[str]:
    """A catalog's header must say who translated it last, and when."""
    metadata = load(path).metadata
    problems = []
    if metadata.get("Last-Translator", "FULL NAME").startswith("FULL NAME"):
        problems.append("fill in Last-Translator in the header (a name, or the team)")
    if metadata.get("PO-Revision-Date", "YEAR").startswith("YEAR"):
        problems.append("fill in PO-Revision-Date in the header (when you last edited it)")
    return problems


def unwrapped(paths: list[Path]) -> list[Path]:
    """The catalogs that powrap would re-wrap (``make wrap``)."""
    cmd = [sys.executable, "-m", "powrap", "--check", "--quiet", *map(str, paths)]
    result = subprocess.run(cmd, capture_output=True, text=True)
    named = re.findall(r"^Would rewrap: (.+)$", result.stderr, flags=re.M)
    if result.returncode and not named:
        raise CatalogError(f"powrap failed: {result.stderr.strip() or result.stdout.strip()}")
    return [Path(name) for name in named]


def check(langs: list[str], srcdir: Path = ROOT / "docs", locale_dir: Path = LOCALE) -> list[str]:
    """Every problem in the catalogs of *langs*, as lines naming file and line."""
    errors: list[str] = []
    for lang in langs:
        try:
            check_language(lang, locale_dir)
        except LanguageError as exc:
            errors.append(str(exc))
            continue
        paths = list(catalogs(lang, locale_dir).values())
        strict = [msgfmt(path, "--check") for path in paths]
        broken = [verdict.stderr.strip() for verdict in strict if verdict.returncode]
        if broken:
            errors += broken
            continue
        try:
            errors += [str(p) for p in check_language_catalogs(lang, srcdir, locale_dir)]
            errors += [str(p) for p in style_problems(lang, srcdir, locale_dir)]
            for path in paths:
                catalog = load(path)
                fuzzy = len(catalog.fuzzy_entries())
                untranslated = len(catalog.untranslated_entries())
                if fuzzy or untranslated:
                    errors.append(
                        f"{rel(path)}: {untranslated} untranslated and {fuzzy} fuzzy entries; "
                        "translate them and remove the fuzzy flags"
                    )
                elif catalog.obsolete_entries():
                    errors.append(
                        f"{rel(path)}: {len(catalog.obsolete_entries())} obsolete entries (#~); "
                        "when nothing is left to translate, `make prune-po` drops them"
                    )
                errors += [f"{rel(path)}:1: {message}" for message in header_problems(path)]
            errors += [str(p) for p in pofilter_problems(lang, locale_dir)]
            for path in unwrapped(paths):
                errors.append(f"{rel(path)}: not wrapped by powrap (run `make wrap` to fix)")
        except CatalogError as exc:
            errors.append(str(exc))
    return errors


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m tools.catalogs", description=__doc__.splitlines()[0]
    )
    parser.add_argument("command", choices=["validate", "check"])
    parser.add_argument("langs", nargs="+")
    args = parser.parse_args(argv)
    errors: list[str] = []
    try:
        if args.command == "validate":
            for lang in args.langs:
                check_language(lang)
                errors += [str(p) for p in check_language_catalogs(lang, ROOT / "docs")]
        else:
            errors = check(args.langs)
    except (LanguageError, CatalogError) as exc:
        errors = [str(exc)]
    for line in errors:
        print(f"error: {line}", file=sys.stderr)
    return 1 if errors else 0


if __name__ == "__main__":
    sys.exit(main())
