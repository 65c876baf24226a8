"""Render math to MathML at build time: no script, no font download, no CDN.

Browsers draw MathML natively, screen readers read it, and the page stays
small. docutils ships the LaTeX-to-MathML converter used here.
"""

from __future__ import annotations

from docutils import nodes
from docutils.utils.math import MathError, latex2mathml
from sphinx.errors import SphinxError


def _convert(self, node, latex: str, block: bool) -> str:
    try:
        return latex2mathml.tex2mathml(latex, as_block=block)
    except (MathError, SyntaxError) as exc:
        where = f"{node.source}:{node.line}" if node.source else "a page"
        raise SphinxError(f"{where}: cannot render math {latex!r}: {exc}") from None


def visit_math(self, node) -> None:
    self.body.append(
        f'<span class="math notranslate">{_convert(self, node, node.astext(), False)}</span>'
    )
    raise nodes.SkipNode


def visit_displaymath(self, node) -> None:
    latex = node["latex"] if node.get("nowrap") else node.astext()
    self.body.append(self.starttag(node, "div", CLASS="math notranslate"))
    if node.get("number"):
        self.body.append(f'<span class="eqno">({node["number"]})</span>')
    self.body.append(_convert(self, node, latex, True))
    self.body.append("</div>\n")
    raise nodes.SkipNode


def setup(app):
    app.add_html_math_renderer(
        "mathml",
        inline_renderers=(visit_math, None),
        block_renderers=(visit_displaymath, None),
    )
    return {"parallel_read_safe": True, "parallel_write_safe": True}
