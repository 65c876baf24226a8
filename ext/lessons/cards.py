"""Gallery cards that a translator can translate.

The lessons' index is sphinx-gallery's page of cards: a thumbnail, a title and
a tooltip per lesson. sphinx-gallery writes each card as raw HTML, which
gettext never extracts, so the Chinese index would show English cards.
:func:`translatable_cards` rewrites each card, as the page is read, into a
``lesson-card`` directive whose title and tooltip are ordinary paragraphs:
gettext extracts them, and the translated build writes the same HTML as
sphinx-gallery did, with the translations in it, except that the tooltip is
a ``data-tooltip`` attribute: ``tooltip`` is no HTML attribute (the Nu HTML
Checker rejects it), and docs/_static/custom.css shows it on hover and on
keyboard focus.

Upstream limitation: sphinx-gallery has no option to write its cards as
anything but raw HTML (the rewrite belongs there). This shim knows the card's
markup as sphinx-gallery 0.22 writes it; if that changes, the build stops
with an error naming this file, and ``tests/test_cards.py`` fails on a card
made by the installed sphinx-gallery.
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

    def card(m: re.Match) -> str:
        tooltip = html.unescape(m["tooltip"]).strip()
        title = html.unescape(m["title"]).strip()
        return (
            f".. lesson-card:: {m['doc']}\n"
            f"   :thumbnail: {m['thumb']}\n\n"
            f"   {title}\n\n"
            f"   {tooltip}\n"
        )

    return _CARD.sub(card, text)


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
    """A gallery card: thumbnail, link, title and tooltip."""


class lesson_card_title(nodes.paragraph):
    """The card's visible title (a paragraph, so gettext extracts it)."""


class lesson_card_tooltip(nodes.paragraph):
    """The card's tooltip text, written into the card's ``tooltip`` attribute."""


class LessonCard(Directive):
    """``.. lesson-card:: /lessons/name`` with a title and a tooltip paragraph."""

    required_arguments = 1
    has_content = True
    option_spec = {"thumbnail": directives.unchanged_required}

    def run(self):
        from sphinx.addnodes import pending_xref

        parsed = nodes.Element()
        self.state.nested_parse(self.content, self.content_offset, parsed)
        paragraphs = [n for n in parsed.children if isinstance(n, nodes.paragraph)]
        if len(paragraphs) != 2:
            raise self.error("lesson-card needs a title paragraph and a tooltip paragraph")
        parts = []
        for cls, paragraph in zip(
            (lesson_card_title, lesson_card_tooltip), paragraphs, strict=True
        ):
            part = cls(paragraph.rawsource, "", *paragraph.children)
            part.source, part.line = paragraph.source, paragraph.line
            parts.append(part)
        image = nodes.image(uri=directives.uri(self.options["thumbnail"]), alt="")
        ref = pending_xref(
            "",
            nodes.inline("", "", classes=["xref", "std", "std-doc"]),
            refdomain="std",
            reftype="doc",
            reftarget=self.arguments[0],
            refexplicit=False,
            refwarn=True,
            refdoc=self.state.document.settings.env.docname,
        )
        return [lesson_card("", image, nodes.paragraph("", "", ref), *parts)]


def visit_lesson_card_html(self, node: lesson_card) -> None:
    tooltip = next(node.findall(lesson_card_tooltip)).astext()
    self.body.append(
        f'<div class="sphx-glr-thumbcontainer" data-tooltip="{html.escape(tooltip, quote=True)}">\n'
    )


def depart_lesson_card_html(self, node: lesson_card) -> None:
    self.body.append("</div>\n")


def visit_card_title_html(self, node: lesson_card_title) -> None:
    self.body.append('<div class="sphx-glr-thumbnail-title">')


def depart_card_title_html(self, node: lesson_card_title) -> None:
    self.body.append("</div>\n")


def visit_skip(self, node) -> None:
    raise nodes.SkipNode


_NOT_HTML = {b: (visit_skip, None) for b in ("latex", "text", "man", "texinfo")}


def setup(app):
    app.connect("source-read", on_source_read)
    app.add_node(lesson_card, html=(visit_lesson_card_html, depart_lesson_card_html), **_NOT_HTML)
    app.add_node(lesson_card_title, html=(visit_card_title_html, depart_card_title_html))
    app.add_node(lesson_card_tooltip, html=(visit_skip, None))
    app.add_directive("lesson-card", LessonCard)
    return {"parallel_read_safe": True, "parallel_write_safe": True}
