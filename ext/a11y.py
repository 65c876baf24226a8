"""Small accessibility repairs to the HTML that Sphinx and the theme write.

A block of code or a formula wider than the page scrolls sideways. A reader
who uses the keyboard can only scroll what can take focus, so every such
region gets ``tabindex="0"`` (axe-core: scrollable-region-focusable).
"""

from __future__ import annotations

import re

_SCROLLABLE = re.compile(r'<(pre|div class="math-wrapper[^"]*")(?![^>]*tabindex)')


def focusable_scrollers(body: str) -> str:
    """Add ``tabindex="0"`` to every <pre> and formula wrapper in *body*."""
    return _SCROLLABLE.sub(r'<\1 tabindex="0"', body)


def on_html_page_context(app, pagename, templatename, context, doctree) -> None:
    if "body" in context:
        context["body"] = focusable_scrollers(context["body"])


def setup(app):
    app.connect("html-page-context", on_html_page_context)
    return {"parallel_read_safe": True, "parallel_write_safe": True}
