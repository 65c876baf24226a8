"""Comments and docstrings in code blocks, translated like the prose.

A Chinese reader should read no English prose, and code blocks carry some: a
``# the mistake: untracked values kept on ctx`` or a docstring. The code
itself must stay exactly the code that ran, and a translation that has gone
stale must never show.

So every Python code block becomes a node that Sphinx's own translation
machinery knows how to translate (an ``addnodes.translatable``): its messages
are the texts of its comments and docstrings, one message each, so gettext
puts them in the page's catalog beside the prose. A translated build replaces
each comment's text, and only that text, by its translation, at the
position where it stands in the code; everything else is left byte for byte.
A comment whose English changes is a new message: its old translation is no
longer looked up, and the English shows until a translator translates it.

Comments that are instructions to tools (``noqa``, ``fmt:``, ``type:``) are
not messages, nor are comments with no word in them (a shape such as
``(T, N, C)``, a formula): their translation would be the text itself, and
Sphinx 9.0 then marks the whole code block as translated and leaves its other
comments in English (sphinx/transforms/i18n.py, phase 1: ``msgstr == msg``
sets ``node['translated'] = True`` for the node, not the message). :func:`messages` is the single definition of what is
translated; the Chinese downloads (ext/lessons/downloads.py) and the catalog checks
(tools/catalogs.py) use it too.
"""

from __future__ import annotations

import ast
import io
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
    """Where a translatable text sits in the code: its offsets and its text,
    and, for a docstring, the quote that closes it."""

    start: int
    end: int
    text: str
    quote: str = ""


def _offsets(code: str) -> list[int]:
    starts, total = [], 0
    for line in code.splitlines(keepends=True):
        starts.append(total)
        total += len(line)
    return starts + [total]


def spans(code: str) -> list[Span]:
    """The comments (text after ``#``) and one-line docstrings of *code*.

    Code that does not tokenize or parse as Python has none.
    """
    try:
        tokens = list(tokenize.generate_tokens(io.StringIO(code).readline))
        tree = ast.parse(code)
    except (tokenize.TokenError, SyntaxError, IndentationError):
        return []
    starts = _offsets(code)
    lines = code.splitlines(keepends=True)

    def offset(row: int, col: int) -> int:
        return starts[row - 1] + col

    def node_offset(row: int, col: int) -> int:
        # ast counts columns in UTF-8 bytes, tokenize in characters.
        return starts[row - 1] + len(lines[row - 1].encode()[:col].decode())

    found = []
    for tok in tokens:
        if tok.type != tokenize.COMMENT:
            continue
        body = tok.string[1:]
        text = body.strip()
        if not _WORD.search(text) or _TOOL.match(text):
            continue
        begin = offset(*tok.start) + 1 + (len(body) - len(body.lstrip()))
        found.append(Span(begin, begin + len(text), text))
    for node in ast.walk(tree):
        if not isinstance(node, ast.FunctionDef | ast.ClassDef | ast.Module):
            continue
        first = node.body[0] if node.body else None
        if not (
            isinstance(first, ast.Expr)
            and isinstance(first.value, ast.Constant)
            and isinstance(first.value.value, str)
            and first.lineno == first.end_lineno  # one line: replaced in place
        ):
            continue
        begin = node_offset(first.lineno, first.col_offset)
        literal = code[begin : node_offset(first.end_lineno, first.end_col_offset)]
        quote = '"""' if literal.endswith('"""') else literal[-1]
        inner_start = literal.index(quote) + len(quote)
        text = literal[inner_start : len(literal) - len(quote)]
        if text.strip():
            begin += inner_start
            found.append(Span(begin, begin + len(text), text, quote[0]))
    return sorted(found, key=lambda span: span.start)


def messages(code: str) -> list[str]:
    """The translatable texts of *code*, in order."""
    return [span.text for span in spans(code)]


def translate(code: str, lookup) -> str:
    """*code* with each comment and docstring replaced by ``lookup(text)``.

    ``lookup`` returns the translation, or the text itself when it has none.
    A translation keeps to one line, and a docstring's translation cannot
    close its quotes: otherwise the English stays.
    """
    out, last = [], 0
    for span in spans(code):
        new = lookup(span.text)
        if "\n" in new or (span.quote and (span.quote in new or new.endswith("\\"))):
            new = span.text
        out.append(code[last : span.start])
        out.append(new)
        last = span.end
    out.append(code[last:])
    return "".join(out)


class translatable_code(nodes.literal_block, addnodes.translatable):
    """A Python code block whose comments and docstrings are messages."""

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
    """Turn each Python code block that has comments into translatable code.

    It runs before Sphinx preserves the original messages of translatable
    nodes (priority 10), and so before its translation (priority 20).
    """

    default_priority = 5

    def apply(self) -> None:
        for block in list(self.document.findall(nodes.literal_block)):
            if isinstance(block, translatable_code):
                continue
            language = block.get("language", "")
            if language.lower() not in ("python", "py", "python3") or not messages(block.astext()):
                continue
            node = translatable_code(block.rawsource, "", *block.children, **block.attributes)
            node.source, node.line = block.source, block.line
            block.replace_self(node)


def visit_translatable_code(self, node) -> None:
    self.visit_literal_block(node)


def depart_translatable_code(self, node) -> None:
    self.depart_literal_block(node)


def setup(app):
    app.add_transform(CodeWithComments)
    app.add_node(
        translatable_code,
        html=(visit_translatable_code, depart_translatable_code),
    )
    return {"parallel_read_safe": True, "parallel_write_safe": True}
