"""Small accessibility repairs to the HTML that Sphinx and the theme write.

A block of code or a formula wider than the page scrolls sideways. A reader
who uses the keyboard can only scroll what can take focus, so every such
region gets ``tabindex="0"`` (axe-core: scrollable-region-focusable).

Sphinx writes a toctree's caption (the sidebar's "Contributing") as
``<p class="caption" role="heading">`` without the ``aria-level`` that a
heading role needs (the Nu HTML Checker's error): it gets level 2, under the
page's site title.
"""

from __future__ import annotations

import re

_SCROLLABLE = re.compile(r'<(pre|div class="math-wrapper[^"]*")(?![^>]*tabindex)')


def focusable_scrollers(body: str) -> str:
    """Add ``tabindex="0"`` to every <pre> and formula wrapper in *body*."""
    return _SCROLLABLE.sub(r'<\1 tabindex="0"', body)


_CAPTION = re.compile(r'(<p class="caption" role="heading")(?![^>]*aria-level)')


def caption_levels(html: str) -> str:
    """Give every toctree caption's heading role a level."""
    return _CAPTION.sub(r'\1 aria-level="2"', html)


def on_html_page_context(app, pagename, templatename, context, doctree) -> None:
    if "body" in context:
        context["body"] = focusable_scrollers(context["body"])
    # Furo's sidebar, made by its own handler of this event (hence priority).
    if "furo_navigation_tree" in context:
        context["furo_navigation_tree"] = caption_levels(context["furo_navigation_tree"])


def setup(app):
    app.connect("html-page-context", on_html_page_context, priority=900)
    return {"parallel_read_safe": True, "parallel_write_safe": True}
