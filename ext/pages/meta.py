"""What a page says about itself in its <head>: a description and an icon.

Each page gets ``<meta name="description">``: the first paragraph of its
article (a lesson's introduction, a page's first sentence), in the page's
language, shortened to about 160 characters; a page with no paragraph of its
own (the index of terms, the search page) gets the site's description, a site
label in ``sphinx.po``. The icon is conf.py's ``html_favicon``.
"""

from __future__ import annotations

import html

from docutils import nodes

LIMIT = 160


def shorten(text: str, limit: int = LIMIT) -> str:
    """*text* on one line, cut at a word (or, in Chinese, anywhere) to *limit*."""
    text = " ".join(text.split())
    if len(text) <= limit:
        return text
    cut = text[: limit - 1]
    if " " in cut[limit // 2 :]:
        cut = cut[: cut.rindex(" ")]
    return cut.rstrip(" ,;:，；：") + "…"


def first_paragraph(doctree) -> str:
    """The text of the first paragraph of a section: not a note's (such as
    sphinx-gallery's "Go to the end to download"), a list's or a table's."""
    for paragraph in doctree.findall(nodes.paragraph):
        text = paragraph.astext().strip()
        if text and isinstance(paragraph.parent, nodes.section):
            return text
    return ""


def on_html_page_context(app, pagename, templatename, context, doctree) -> None:
    from ext.translation.theme_labels import DESCRIPTION, label

    text = first_paragraph(doctree) if doctree is not None else ""
    description = shorten(text or label(DESCRIPTION))
    tag = f'<meta name="description" content="{html.escape(description, quote=True)}">\n'
    context["metatags"] = context.get("metatags", "") + tag


def setup(app):
    app.connect("html-page-context", on_html_page_context)
    return {"parallel_read_safe": True, "parallel_write_safe": True}
