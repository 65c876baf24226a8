"""Comments and docstrings in code blocks, translated like the prose.

A Chinese reader should read no English prose, and code blocks carry some
(``# the mistake: untracked values kept on ctx``, a docstring), while the
code must stay exactly the code that ran. So each Python code block becomes
an ``addnodes.translatable``, Sphinx's own interface for nodes with messages:
its messages are its comments and docstrings, and a translated build replaces
each one's text, and only that, where it stands. A docstring of several lines
is one message, its lines without their indentation (as ``inspect.cleandoc``
gives them); its translation keeps the translator's line breaks and takes the
docstring's indentation back. A comment whose
English changes is a new message, so a stale translation never shows.

Comments for tools (``noqa``, ``fmt:``, ``type:``) are not messages, nor are
comments with no word in them (a shape such as ``(T, N, C)``): their
translation would be the text itself, and Sphinx 9.0 then marks the whole
block as translated and leaves its other comments in English
(sphinx/transforms/i18n.py, phase 1: ``msgstr == msg`` sets
``node['translated']`` for the node, not the message). :func:`messages` is
the one definition of what is translated; ext/lessons/downloads.py and
tools/catalogs.py use it too.
"""

from __future__ import annotations

import ast
import inspect
import io
import itertools
import re
import tokenize
from dataclasses import dataclass

from docutils import nodes
from sphinx import addnodes
from sphinx.transforms import SphinxTransform

# A comment for a tool, not for a reader.
_TOOL = re.compile(r"^\s*(noqa|fmt:|type:|pragma|pylint:|isort:|ruff:)", re.I)
# A word of two letters or more: a comment without one is code, not prose.
_WORD = re.compile(r"[^\W\d_]{2,}")


@dataclass(frozen=True)
class Span:
    """A translatable text: its offsets in the code, and for a docstring the
    quotes that close it and, when it has several lines, their
    indentation."""

    start: int
    end: int
    text: str
    quote: str = ""
    indent: str | None = None

    def render(self, new: str, old: str) -> str | None:
        """*new* written where *old* (the code's text of this span) stands,
        or None if it would break the code."""
        if self.quote and (self.quote in new or new.endswith((self.quote[0], "\\"))):
            return None
        if self.indent is None:
            return None if "\n" in new else new
        lines = new.split("\n")
        body = "\n".join([lines[0], *(self.indent + line if line else "" for line in lines[1:])])
        lead = old[: len(old) - len(old.lstrip())]
        trail = old[len(old.rstrip()) :]
        return lead + body + trail


def spans(code: str) -> list[Span]:
    """The comments (text after ``#``) and docstrings of *code*; none if it
    does not tokenize or parse as Python."""
    try:
        tokens = list(tokenize.generate_tokens(io.StringIO(code).readline))
        tree = ast.parse(code)
    except (tokenize.TokenError, SyntaxError):
        return []
    lines = code.splitlines(keepends=True)
    starts = [0, *itertools.accumulate(map(len, lines))]

    def offset(row: int, col: int, in_bytes: bool = False) -> int:
        # ast counts columns in UTF-8 bytes, tokenize in characters.
        return starts[row - 1] + (len(lines[row - 1].encode()[:col].decode()) if in_bytes else col)

    found = []
    for tok in tokens:
        text = tok.string[1:].strip()
        if tok.type == tokenize.COMMENT and _WORD.search(text) and not _TOOL.match(text):
            begin = offset(*tok.start) + tok.string.index(text, 1)
            found.append(Span(begin, begin + len(text), text))
    for node in ast.walk(tree):
        if not isinstance(node, ast.FunctionDef | ast.ClassDef | ast.Module):
            continue
        first = node.body[0] if node.body else None
        if ast.get_docstring(node, clean=False) is None:
            continue
        begin = offset(first.lineno, first.col_offset, in_bytes=True)
        literal = code[begin : offset(first.end_lineno, first.end_col_offset, in_bytes=True)]
        quote = '"""' if literal.endswith('"""') else literal[-1]
        inner = literal.index(quote) + len(quote)
        text = literal[inner : len(literal) - len(quote)]
        start, end = begin + inner, begin + inner + len(text)
        if first.lineno != first.end_lineno and text.strip():
            indent = re.match(r"[ \t]*", lines[first.lineno - 1]).group()
            found.append(Span(start, end, inspect.cleandoc(text), quote, indent))
        elif text.strip():
            found.append(Span(start, end, text, quote))
    return sorted(found, key=lambda span: span.start)


def messages(code: str) -> list[str]:
    """The translatable texts of *code*, in order."""
    return [span.text for span in spans(code)]


def translate(code: str, lookup) -> str:
    """*code* with each comment and docstring replaced by ``lookup(text)``
    (the text itself when it has no translation). A translation on two lines
    of a comment or a one-line docstring, or one that would close a
    docstring's quotes, leaves the English."""
    out, last = [], 0
    for span in spans(code):
        old = code[span.start : span.end]
        new = lookup(span.text)
        new = old if new == span.text else span.render(new, old)
        out += [code[last : span.start], old if new is None else new]
        last = span.end
    return "".join(out) + code[last:]


class translatable_code(nodes.literal_block, addnodes.translatable):
    """A Python code block whose comments and docstrings are messages. HTML
    writes it as the literal_block it is (Sphinx's translators dispatch on the
    node's base classes: SphinxTranslator.dispatch_visit)."""

    def preserve_original_messages(self) -> None:
        self["original_code"] = self.astext()

    def extract_original_messages(self) -> list[str]:
        return messages(self["original_code"])

    def apply_translated_message(self, original_message: str, translated_message: str) -> None:
        table = self.setdefault("translations", {})
        table[original_message] = translated_message
        code = translate(self["original_code"], lambda text: table.get(text, text))
        self.children = [nodes.Text(code)]
        self.rawsource = code


class CodeWithComments(SphinxTransform):
    """Turn each Python code block that has comments into translatable code,
    before Sphinx preserves the original messages (priority 10) and
    translates them (priority 20)."""

    default_priority = 5

    def apply(self) -> None:
        for block in list(self.document.findall(nodes.literal_block)):
            language = block.get("language", "").lower()
            if isinstance(block, translatable_code) or language not in ("python", "py", "python3"):
                continue
            if messages(block.astext()):
                node = translatable_code(block.rawsource, "", *block.children, **block.attributes)
                node.source, node.line = block.source, block.line
                block.replace_self(node)


def setup(app):
    app.add_transform(CodeWithComments)
    app.add_node(translatable_code)
    return {"parallel_read_safe": True, "parallel_write_safe": True}
