"""Gallery cards that a translator can translate.

sphinx-gallery writes each card of the lessons' index (thumbnail, title,
tooltip) as raw HTML, which gettext never extracts. :func:`translatable_cards`
rewrites each card, as the page is read, into a ``lesson-card`` directive
whose title and tooltip are ordinary paragraphs: gettext extracts them, and
the build writes sphinx-gallery's HTML with the translations in it, except
that the tooltip is a ``data-tooltip`` attribute (``tooltip`` is no HTML
attribute; docs/_static/custom.css shows it on hover and on keyboard focus).

Upstream limitation: sphinx-gallery has no option to write its cards as
anything but raw HTML. This shim knows the markup of sphinx-gallery 0.22; if
that changes, the build stops with an error naming this file, and
tests/test_build.py fails on the cards of the installed sphinx-gallery.
"""

from __future__ import annotations

import html
import re

from docutils import nodes
from docutils.parsers.rst import Directive, directives
from sphinx.errors import ExtensionError

_CARD = re.compile(
    r"""
    \.\.\ raw::\ html\n\n
    \s*<div\ class="sphx-glr-thumbcontainer"\ (?:data-sgtags='[^']*'\ )?tooltip="(?P<tooltip>[^"]*)">\n\n
    \.\.\ only::\ html\n\n
    \s*\.\.\ image::\ (?P<thumb>\S+)\n
    \s*:alt:[^\n]*\n\n
    \s*:doc:`(?P<doc>[^`]+)`\n\n
    \.\.\ raw::\ html\n\n
    \s*<div\ class="sphx-glr-thumbnail-title">(?P<title>[^<]*)</div>\n
    \s*</div>\n
    """,
    re.VERBOSE,
)


def translatable_cards(text: str) -> str:
    """Rewrite sphinx-gallery's raw-HTML cards as ``lesson-card`` directives."""
    return _CARD.sub(
        lambda m: (
            f".. lesson-card:: {m['doc']}\n   :thumbnail: {m['thumb']}\n\n"
            f"   {html.unescape(m['title']).strip()}\n\n"
            f"   {html.unescape(m['tooltip']).strip()}\n"
        ),
        text,
    )


def on_source_read(app, docname: str, source: list[str]) -> None:
    if "sphx-glr-thumbcontainer" not in source[0]:
        return
    source[0] = translatable_cards(source[0])
    if "sphx-glr-thumbcontainer" in source[0]:
        raise ExtensionError(
            f"{docname}: sphinx-gallery's card markup is not what ext/lessons/cards.py knows, so "
            "the cards would stay untranslated; update _CARD to the new markup"
        )


class lesson_card(nodes.General, nodes.Element):
    """A gallery card: thumbnail, link, and the title and tooltip paragraphs."""


class LessonCard(Directive):
    """``.. lesson-card:: /lessons/name`` with a title and a tooltip paragraph."""

    required_arguments = 1
    has_content = True
    option_spec = {"thumbnail": directives.unchanged_required}

    def run(self):
        image = nodes.image(uri=directives.uri(self.options["thumbnail"]), alt="")
        # The link, as the :doc: role makes it; a paragraph without a source,
        # so gettext does not offer it as a message.
        link, _ = self.state.inline_text(f":doc:`{self.arguments[0]}`", self.lineno)
        card = lesson_card("", image, nodes.paragraph("", "", *link))
        self.state.nested_parse(self.content, self.content_offset, card)
        if len(card) != 4 or not all(isinstance(n, nodes.paragraph) for n in card[2:]):
            raise self.error("lesson-card needs a title paragraph and a tooltip paragraph")
        return [card]


def visit_lesson_card(self, node: lesson_card) -> None:
    """sphinx-gallery's card, with the tooltip as an attribute."""
    image, link, title, tooltip = node.children
    tooltip = html.escape(tooltip.astext(), quote=True)
    self.body.append(f'<div class="sphx-glr-thumbcontainer" data-tooltip="{tooltip}">\n')
    image.walkabout(self)
    link.walkabout(self)
    self.body.append('<div class="sphx-glr-thumbnail-title">')
    for child in title.children:
        child.walkabout(self)
    self.body.append("</div>\n</div>\n")
    raise nodes.SkipNode


def setup(app):
    app.connect("source-read", on_source_read)
    # The site is built as HTML only (gettext extracts messages, it writes no nodes).
    app.add_node(lesson_card, html=(visit_lesson_card, None))
    app.add_directive("lesson-card", LessonCard)
    return {"parallel_read_safe": True, "parallel_write_safe": True}
