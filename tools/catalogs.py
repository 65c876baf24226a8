"""Catalogs a translator can trust: the checks before a build and in `make check`.

Before a translated build, ``python -m tools.catalogs validate zh_CN`` checks
that GNU ``msgfmt --check`` accepts each catalog and that each translation
keeps the markup of its English; ``check zh_CN`` (``make check``) adds the rest
of docs/translating.md, "What make check checks". Each problem is one line
naming file and line.
"""

from __future__ import annotations

import argparse
import bisect
import collections
import itertools
import os
import re
import subprocess
import sys
from dataclasses import dataclass
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
    """What *msgstr* lost of the markup of *msgid*, or added: in reST, two
    backslashes are one backslash shown on the page, not an escaped space."""
    if syntax == "rst" and "\\\\" in msgstr and "\\\\" not in msgid:
        return ["msgstr shows a backslash (\\\\): an escaped space is one backslash (\\ )"]
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


def _parse(texts: list[str]):
    """*texts* as one reST document, and the line where each begins. One parse
    for a whole catalog: the texts are separate blocks, so no markup leaks."""
    from docutils.core import publish_doctree

    chunks, starts, line = [], [], 1
    for text in texts:
        chunk = text.strip("\n") + ("\n\n   literal" if text.rstrip().endswith("::") else "")
        starts.append(line)
        chunks.append(chunk + "\n\n")
        line += chunk.count("\n") + 2
    settings = {"report_level": 5, "halt_level": 5, "warning_stream": False}
    return publish_doctree("".join(chunks), settings_overrides=settings), starts


def _inline_markup(texts: list[str]) -> list[collections.Counter]:
    """The inline markup docutils recognises in each of *texts*, by kind. Bold
    and italics are left out: Chinese writes bold for italics, and a gloss."""
    from docutils import nodes

    kinds = (nodes.literal, nodes.problematic, nodes.math, nodes.reference)
    kinds += (nodes.title_reference, nodes.substitution_reference, nodes.footnote_reference)
    document, starts = _parse(texts)
    found = [collections.Counter() for _ in texts]
    for node in document.findall(lambda n: isinstance(n, kinds)):
        block = node
        while block.parent is not None and not block.line:
            block = block.parent
        where = bisect.bisect_right(starts, block.line or 1) - 1
        found[max(where, 0)][type(node).__name__] += 1
    return found


def rst_problems(texts: list[str], english: list[str] | None = None) -> list[list[str]]:
    """docutils' complaints about each of *texts* as reST and, given the
    *english* of each, the markup docutils no longer sees in it: a role after
    ）, say, which reST reads as text (write ）\\ :ref:). Sphinx's -W build
    would fail too, but naming the English page."""
    from docutils import nodes

    document, starts = _parse(texts)
    found: list[list[str]] = [[] for _ in texts]
    for msg in document.findall(nodes.system_message):
        text = " ".join(msg.astext().split())
        if msg["level"] >= 2 and not _UNKNOWN_ROLE.search(text):
            where = bisect.bisect_right(starts, msg.get("line") or 1) - 1
            found[max(where, 0)].append(f"broken reST in msgstr: {text}")
    if english is not None:
        for i, (want, got) in enumerate(
            zip(_inline_markup(english), _inline_markup(texts), strict=True)
        ):
            if want != got and not found[i]:
                found[i].append(
                    "reST does not see all the markup of the msgid here: inline markup "
                    "must follow a space or an opening bracket, and precede a space or "
                    "punctuation; after ） or before （, write an escaped space (\\ )"
                )
    return found


# Chinese style: the rules of docs/translating.md, which holds the one table of
# terms (term | 中文 | note) and the one table of renderings never to use.
GLOSSARY = ROOT / "docs" / "translating.md"
CJK = "[\u3400-\u9fff]"
# Full-width punctuation, which needs no space beside Chinese or a link.
FULL_WIDTH = "，。：；！？、（）“”‘’《》「」【】"
# Emphasis around Chinese text: *斜体* (reST and Markdown) or _斜体_
# (Markdown). Chinese fonts have no italics; browsers slant the glyphs.
_ITALIC_CJK = re.compile(
    rf"(?<![*\w\\])\*(?![*\s])[^*]*{CJK}[^*]*(?<![*\s\\])\*(?!\*)"
    rf"|(?<![\w\\])_(?![_\s])[^_]*{CJK}[^_]*(?<![_\s\\])_(?![\w])"
)


def table_rows(header: str, path: Path = GLOSSARY) -> list[list[str]]:
    """The rows of the Markdown table of *path* whose first header cell is *header*."""
    text = path.read_text(encoding="utf-8")
    found = re.search(rf"^\| *{header} *\|.*\n\|[-|: ]+\n((?:\|.*\n?)*)", text, flags=re.M)
    if found is None:
        raise CatalogError(f"{rel(path)}: no table headed '| {header} |'; the checks read it")
    return [[c.strip() for c in row.strip().strip("|").split("|")] for row in found[1].splitlines()]


def term_rows(path: Path = GLOSSARY) -> list[list[str]]:
    """The rows of the table of terms in *path*: the table headed "| Term | 中文"."""
    return table_rows(r"Term *\| *中文", path)


def read_glossary(path: Path = GLOSSARY) -> dict[str, str]:
    """The table of terms of *path*: English term -> Chinese translation."""
    return {cells[0]: cells[1] for cells in term_rows(path) if len(cells) >= 2 and cells[1]}


def glossary_words(path: Path = GLOSSARY) -> list[str]:
    """The Chinese words of the table of terms (translations and notes), for search."""
    cells = [row[1] + " " + row[2] for row in term_rows(path) if len(row) >= 3]
    return sorted({word for text in cells for word in re.findall(rf"{CJK}{{2,}}", text)})


@dataclass(frozen=True)
class Variant:
    """A rendering never to use (*bad*), with the one to use (*right*) and
    why (*note*); with *english*, only in a message whose English has one of
    those words."""

    bad: str
    right: str
    english: tuple[str, ...]
    note: str

    def problem(self, msgid: str, msgstr: str, glossary: dict[str, str]) -> str | None:
        """What *msgstr* does wrong by this rule, if anything. A page may quote
        the variant itself, and a translation of the table of terms may hold
        it (原地修改检查 is a term, so 检查 stays in it)."""
        if self.bad in msgid or (self.english and not any(w in msgid for w in self.english)):
            return None
        text = msgstr
        for term in glossary.values():
            text = text.replace(term, "") if self.bad in term else text
        if self.bad not in text:
            return None
        where = f" where the English has {' or '.join(self.english)}" if self.english else ""
        return (
            f"uses {self.bad}{where}: write {self.right}, says the table of variants: {self.note}"
        )


def read_variants(path: Path = GLOSSARY) -> list[Variant]:
    """The table of renderings never to use in *path*, headed "| Never | Write |":
    its first cell lists the variants (separated by 、), its third the English
    words that scope the rule, as inline code (none: everywhere)."""
    return [
        Variant(bad, cells[1], tuple(re.findall(r"`([^`]+)`", cells[2])), cells[3])
        for cells in table_rows(r"Never *\| *Write", path)
        for bad in re.split(r"[、,]\s*", cells[0])
    ]


# A lesson number with a leading zero: 第 01 课, （第 08 课）, 05 课.
_PADDED_LESSON = re.compile(r"第\s*0+(\d+)\s*课|(?<![\w.])0+(\d+)\s*课")
# A link and its text: a role with an explicit title, a reST hyperlink, a
# Markdown link, and a reference to a section or page without one, whose
# text is that title, Chinese on a Chinese page (written 链 here). A link
# whose text is Chinese at one end takes no space there beside Chinese text or
# full-width punctuation: the space rule is for Latin words.
_RST_LINKS = re.compile(
    r":(?!math:)[\w.+-]+(?::[\w.+-]+)*:`(?P<text>[^`<]*?)\s*<[^<>`]+>`"
    r"|(?<!`)`(?P<link>[^`<]*?)\s*<[^<>`]+>`__?"
    r"|:(?:std:)?(?P<xref>ref|doc|numref):`[^`<]+`"
)
_MD_LINKS = re.compile(
    r"\{(?!math\})[\w.+-]+(?::[\w.+-]+)*\}`(?P<text>[^`<]*?)\s*<[^<>`]+>`"
    r"|\[(?P<link>[^\]]+)\]\([^)]+\)"
    r"|\{(?:std:)?(?P<xref>ref|doc|numref)\}`[^`<]+`"
)


def link_text(m: re.Match) -> str:
    """The text a match of _RST_LINKS or _MD_LINKS shows."""
    return m["text"] or m["link"] or ("链" if m["xref"] else "")


def link_space_problems(msgstr: str, syntax: str) -> list[str]:
    """A space between a link whose text starts or ends with Chinese and the
    Chinese text or full-width punctuation beside it."""
    found = []
    for m in (_MD_LINKS if syntax == "md" else _RST_LINKS).finditer(msgstr):
        text, before, after = link_text(m), msgstr[: m.start()], msgstr[m.end() :]
        if re.match(CJK, text) and re.search(rf"(?:{CJK}|[{FULL_WIDTH}]) +$", before):
            found.append(before.rstrip()[-1] + " " + m[0][:20])
        if re.search(rf"{CJK}$", text) and re.match(rf" +(?:{CJK}|[{FULL_WIDTH}])", after):
            found.append(m[0][-20:] + " " + after.lstrip()[0])
    if not found:
        return []
    fix = "write 见{ref}`…` with no space" if syntax == "md" else r"write 见\ :ref:`…`\ 的"
    return [
        f"no space between a link whose text is Chinese and the Chinese beside it "
        f"({'; '.join(found)}): {fix}"
    ]


def zh_style_problems(
    msgid: str,
    msgstr: str,
    syntax: str,
    glossary: dict[str, str],
    variants: list[Variant] | None = None,
) -> list[str]:
    """What a Chinese msgstr does against the rules of the translators' guide.

    *syntax* is "md", "rst", or "code" for a comment or docstring in a code
    block, where names (``forward``) and expressions (``(x, exp(x))``) are
    code, unmarked: a glossary term kept as it is and ASCII brackets are allowed.
    """
    code = syntax == "code"
    markup = _MD_TOKENS if syntax == "md" else _RST_TOKENS
    variants = read_variants() if variants is None else variants
    problems = [p for v in variants if (p := v.problem(msgid, msgstr, glossary))]
    if code and msgstr == msgid:  # Sphinx then marks the whole block translated
        problems.append(
            "a comment translated as itself leaves the other comments of its code block "
            "in English (Sphinx marks the block translated): write it in Chinese"
        )
    for m in _PADDED_LESSON.finditer(msgstr):
        problems.append(f"lesson number with a leading zero ({m[0]}): write 第 {m[1] or m[2]} 课")
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
    # A link reads as its text (Chinese text beside Chinese needs no space),
    # other markup as a Latin word.
    links = _MD_LINKS if syntax == "md" else _RST_LINKS
    text = markup.sub("X", links.sub(lambda m: link_text(m) or "X", msgstr))
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
    if syntax == "md" and "\\ " in text:
        problems.append(
            "MyST has no escaped space: \\ shows as a backslash; "
            "write no space between Chinese and markup"
        )
    if not code:
        problems += link_space_problems(msgstr, syntax)
    return problems


# reST inline markup as it reads on a page: a role or link shows its title
# (its target's last name after ~), a literal its text, an escaped space nothing.
_READS_AS = [
    (r":[\w.+-]+(?::[\w.+-]+)*:`([^`]*?)\s*<[^<>`]+>`", r"\1"),
    (r":[\w.+-]+(?::[\w.+-]+)*:`~(?:[^`]*\.)?([^`.]+)`", r"\1"),
    (r":[\w.+-]+(?::[\w.+-]+)*:`([^`]+)`", r"\1"),
    (r"``([^`]+)``", r"\1"),
    (r"`([^`<]*?)\s*<[^<>`]+>`__?", r"\1"),
    (r"\*\*([^*]+)\*\*", r"\1"),
    (r"\*([^*]+)\*", r"\1"),
    (r"\\ ", ""),
]


def reads_as(rst: str) -> str:
    """The text a reader sees of the reST paragraph *rst*, spaces collapsed."""
    for pattern, text in _READS_AS:
        rst = re.sub(pattern, text, rst)
    return " ".join(rst.split())


def card_text(rst: str) -> str:
    """The text of a lesson's card on the lessons' index when *rst* opens the
    lesson: sphinx-gallery's tooltip, that paragraph without its markup, which
    ext/lessons/cards.py makes a message of the index."""
    from sphinx_gallery.gen_rst import extract_intro_and_title

    return extract_intro_and_title("lesson.py", "Title\n\n" + rst)[0]


CARDS = "lessons/index"


def card_openings(srcdir: Path) -> dict[str, str]:
    """Each card's text, a message of the lessons' index, mapped to the
    paragraph of the lesson it comes from, with its markup. The rules on terms
    read that paragraph: where it writes ``forward`` as code, the card's plain
    "forward" is the method, not the word the table of terms translates."""
    from sphinx_gallery.py_source_parser import split_code_and_text_blocks

    found = {}
    for script in sorted((srcdir.parent / "gallery").glob("[0-9][0-9]_*.py")):
        docstring = split_code_and_text_blocks(str(script))[1][0].content
        paragraphs = [p for p in docstring.lstrip().split("\n\n") if p and not p.startswith(".. ")]
        if len(paragraphs) > 1:  # the title, then the opening (as sphinx-gallery reads them)
            opening = " ".join(paragraphs[1].split())
            found[card_text(opening)] = opening
    return found


def same_text_problems(translated: dict[str, tuple[Path, list[polib.POEntry]]]) -> list[str]:
    """Each English text rendered two ways: the same msgid translated
    differently (in two catalogs, or twice in one), and a card of the lessons'
    index that does not read as the opening of its lesson. *translated* maps a
    domain to its catalog's path and translated entries. The translators' guide
    may keep an English term as it is (its table of terms lists them)."""
    problems, first = [], {}
    for domain, (path, entries) in translated.items():
        for entry in entries:
            if domain == GLOSSARY.stem and entry.msgstr == entry.msgid:
                continue
            where, other = first.setdefault(entry.msgid, (path, entry))
            if other.msgstr != entry.msgstr:
                problems.append(
                    f"{rel(path)}:{entry.linenum}: the same English as "
                    f"{rel(where)}:{other.linenum}, translated differently; translate both alike"
                )
    if CARDS not in translated:
        return problems
    index, cards = translated[CARDS][0], {e.msgid: e for e in translated[CARDS][1]}
    for domain, (path, entries) in translated.items():
        if not domain.startswith("lessons/") or domain == CARDS:
            continue
        for entry in entries:
            card = cards.get(card_text(entry.msgid))
            if card is None or card.msgid == entry.msgid:  # the same msgid: above
                continue
            if reads_as(card.msgstr) != reads_as(entry.msgstr):
                problems.append(
                    f"{rel(index)}:{card.linenum}: a card reads as the opening of its lesson "
                    f"({rel(path)}:{entry.linenum}) without markup: {reads_as(entry.msgstr)}"
                )
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


# A heading of the error pages that quotes PyTorch's message: one inline literal.
_MESSAGE_HEADING = re.compile(r"``[^`]+``")
GLOSS = "**含义**："


# What gettext's templates put in a header, which msgfmt --check misses once
# part of the field is filled in ("简体中文 <LL@li.org>").
_PLACEHOLDERS = ("LL@li.org", "EMAIL@ADDRESS", "FULL NAME", "YEAR-MO-DA")


def header_problems(path: Path, catalog: polib.POFile) -> list[str]:
    """The header fields of *catalog* that still hold a template placeholder,
    and a header still marked fuzzy, as the template leaves it."""
    found = [
        f"{rel(path)}: header {field} still says {placeholder!r}; "
        "sign it (docs/translating.md, step 5)"
        for field, value in catalog.metadata.items()
        for placeholder in _PLACEHOLDERS
        if placeholder in value
    ]
    if catalog.metadata_is_fuzzy:
        found.append(f"{rel(path)}: the header is marked fuzzy; sign it and remove the flag")
    return found


def gloss_code(msgstr: str) -> str:
    """*msgstr* with the inline literals of its gloss (GLOSS up to the first
    。) made plain words: the gloss renders PyTorch's English message, whose
    names (``grad_fn``) are code in Chinese too, though the English has no
    such literals to keep. Only for the markup checks."""
    start = msgstr.find(GLOSS)
    if start < 0:
        return msgstr
    end = msgstr.find("。", start)
    end = len(msgstr) if end < 0 else end
    gloss = re.sub(r"``[^`]+``", "code", msgstr[start:end])
    return msgstr[:start] + gloss + msgstr[end:]


def gloss_problems(path: Path, entries: list[polib.POEntry]) -> list[str]:
    """PyTorch's messages stay English in the error pages' headings; the Chinese
    of the paragraph under each begins its explanation with a gloss, GLOSS."""
    return [
        f"{rel(path)}:{below.linenum}: under PyTorch's message {heading.msgid}, "
        f"say what it means in Chinese: {GLOSS}…"
        for heading, below in itertools.pairwise(entries)
        if _MESSAGE_HEADING.fullmatch(heading.msgid) and below.msgstr and GLOSS not in below.msgstr
    ]


def check(
    langs: list[str],
    finished: bool = True,
    srcdir: Path = ROOT / "docs",
    locale_dir=LOCALE,
):
    """Every problem in the catalogs of *langs*: what a build needs (msgfmt
    accepts them, markup kept) and, for a *finished* translation, the rest."""
    errors: list[str] = []
    for lang in langs:
        check_language(lang, locale_dir)
        style = zh_style_problems if finished and lang == "zh_CN" else None  # rules of its own
        variants = read_variants() if style else []
        openings = card_openings(srcdir) if style else {}
        translated: dict[str, tuple[Path, list[polib.POEntry]]] = {}
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
            translated[domain] = (path, entries)
            parsed = (
                rst_problems([gloss_code(e.msgstr) for e in entries], [e.msgid for e in entries])
                if syntax == "rst"
                else []
            )
            for i, entry in enumerate(entries):
                found = markup_problems(entry.msgid, gloss_code(entry.msgstr), syntax)
                found += parsed[i] if parsed and not found else []
                if style:
                    kind = "code" if entry.msgid in in_code else syntax
                    english = (
                        openings.get(entry.msgid, entry.msgid) if domain == CARDS else entry.msgid
                    )
                    found += style(english, entry.msgstr, kind, terms, variants)
                errors += [f"{rel(path)}:{entry.linenum}: {message}" for message in found]
            if not finished:
                continue
            errors += warnings  # msgfmt's: a header left unsigned
            errors += header_problems(path, catalog)
            errors += pofilter_problems(path, catalog, lang)
            if style:
                errors += gloss_problems(path, [e for e in catalog if not e.obsolete])
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
        if style:  # across the catalogs
            errors += same_text_problems(translated)
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
