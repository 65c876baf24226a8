"""Exercise solutions, shown on demand at the end of their lesson's page.

Each pattern lesson ends with an exercise and a check, and its solution lives
in ``gallery/solutions/NN_*.py`` (a hidden cell of the lesson runs the check on
it, so every build proves it). The solution is kept out of the lesson's own
script, so that the page and the downloads can each put it at their end,
apart from the exercise (the downloads: ext/lessons/downloads.py).

This extension adds the answer to the page: when Sphinx reads a lesson whose
number has a solution file, it appends a ``solution`` block that shows the
file in a collapsed ``<details>`` element, with a link to download it. The
block's two labels are ordinary paragraphs, so translators translate them in
the lesson's catalog.
"""

from __future__ import annotations

import re
from pathlib import Path

from docutils import nodes
from sphinx.util.docutils import SphinxDirective

from ext import ROOT

SOLUTIONS = ROOT / "gallery" / "solutions"
# sphinx-gallery's footer of a lesson's page: the solution goes just above it.
_FOOTER = re.compile(r"^\.\. _sphx_glr_download_lessons_", re.M)


def solution_file(docname: str) -> Path | None:
    """The solution of lesson ``lessons/NN_name``, if it has one."""
    m = re.fullmatch(r"lessons/(\d\d)_[^/]+", docname)
    if not m:
        return None
    found = sorted(SOLUTIONS.glob(f"{m[1]}_*.py"))
    return found[0] if found else None


def solution_rst(path: Path) -> str:
    target = "/" + Path("..", path.relative_to(ROOT)).as_posix()
    return (
        ".. solution::\n\n"
        "   Show a solution\n\n"
        f"   .. literalinclude:: {target}\n"
        "      :language: python\n\n"
        f"   :download:`Download the solution <{target}>`\n\n"
    )


def add_solution(app, docname: str, source: list[str]) -> None:
    path = solution_file(docname)
    if path is None:
        return
    m = _FOOTER.search(source[0])
    at = m.start() if m else len(source[0])
    source[0] = source[0][:at] + solution_rst(path) + "\n" + source[0][at:]


class solution(nodes.General, nodes.Element):
    """A collapsed block: its first child is the label that opens it."""


class solution_label(nodes.paragraph):
    """The label of a solution block (a paragraph, so gettext extracts it)."""


class Solution(SphinxDirective):
    has_content = True

    def run(self):
        node = solution()
        self.state.nested_parse(self.content, self.content_offset, node)
        first = node.children[0] if node.children else None
        if not isinstance(first, nodes.paragraph):
            raise self.error("a solution block starts with the paragraph that labels it")
        label = solution_label(first.rawsource, "", *first.children)
        label.source, label.line = first.source, first.line
        node.children[0] = label
        label.parent = node
        return [node]


def visit_solution(self, node) -> None:
    self.body.append('<details class="solution">\n')


def depart_solution(self, node) -> None:
    self.body.append("</details>\n")


def visit_label(self, node) -> None:
    self.body.append("<summary>")


def depart_label(self, node) -> None:
    self.body.append("</summary>\n")


def setup(app):
    app.connect("source-read", add_solution)
    app.add_node(solution, html=(visit_solution, depart_solution))
    app.add_node(solution_label, html=(visit_label, depart_label))
    app.add_directive("solution", Solution)
    return {"parallel_read_safe": True, "parallel_write_safe": True}
