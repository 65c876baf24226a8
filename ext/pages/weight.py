"""Code with the same colours and fewer tags, so that pages stay light.

Pygments wraps every token of a code block in ``<span class="...">``, and
sphinx-gallery, which links the lessons' code to PyTorch's documentation,
writes one span per token without merging neighbours. Most of these spans
change nothing on screen: a name or a punctuation mark is drawn in the
block's own colour by the light style and by the dark one alike, and
whitespace draws nothing. Here such spans are dropped and neighbouring spans
of one class merged. Dropped too: the classes sphinx-gallery gives each link
to name the linked object's module and type, and the ``<span class="pre">``
that Sphinx puts around each word of inline code, which no stylesheet of this
site styles. And a code block links each target once, where it first appears:
the error index linked ``Function`` 113 times and ``torch.autograd.grad`` 34. A lesson's HTML is a third lighter and looks the same but
for those repeated links (the sweeps of tests/test_browser.py and
tests/test_reader.py weigh every lesson page).
"""

from __future__ import annotations

import functools
import re

from pygments.styles import get_style_by_name
from pygments.token import STANDARD_TYPES, Text, Whitespace

_DRAWN = ("color", "bold", "italic", "underline", "bgcolor", "border")
_PRE = re.compile(r"<pre\b[^>]*>.*?</pre>", re.S)
_SAME_CLASS = re.compile(r'(<span class="([^"]+)">[^<]*)</span><span class="\2">')
_HOOKS = re.compile(r'(<a class=")(?:sphx-glr-backref-\S+ )+')
_WORD = re.compile(r'<span class="pre">([^<]*)</span>')
_LINK = re.compile(r'<a class="[^"]*" href="([^"]*)"[^>]*>(.*?)</a>', re.S)


def link_once(pre: str) -> str:
    """*pre* with each target linked at its first occurrence only: a name
    used again in the block keeps its colours, and the reader the link above."""
    seen = set()

    def link(match: re.Match) -> str:
        if match[1] in seen:
            return match[2]
        seen.add(match[1])
        return match[0]

    return _LINK.sub(link, pre)


@functools.cache
def plain_classes(*styles) -> frozenset[str]:
    """The classes whose tokens every style draws like the block's text."""

    def look(style, ttype, keys=_DRAWN) -> tuple:
        return tuple(style.style_for_token(ttype)[key] for key in keys)

    plain = {
        css
        for ttype, css in STANDARD_TYPES.items()
        if css and all(look(style, ttype) == look(style, Text) for style in styles)
    }
    # Whitespace shows only an underline, a background or a border.
    unseen = ("underline", "bgcolor", "border")
    if all(not any(look(style, Whitespace, unseen)) for style in styles):
        plain.add(STANDARD_TYPES[Whitespace])
    return frozenset(plain)


def lighter(html: str, plain: frozenset[str]) -> str:
    """*html* with the spans of *plain* classes dropped from its code blocks,
    neighbouring spans of one class merged, each target linked once a block."""
    classes = "|".join(map(re.escape, plain))
    unwrap = re.compile(rf'<span class="(?:{classes})">([^<]*)</span>')

    def code(match: re.Match) -> str:
        pre = _HOOKS.sub(r"\1", link_once(match[0]))
        pre = unwrap.sub(r"\1", pre) if plain else pre
        merged = 1
        while merged:
            pre, merged = _SAME_CLASS.subn(r"\1", pre)
        return pre

    return _WORD.sub(r"\1", _PRE.sub(code, html))


def on_html_page_context(app, pagename, templatename, context, doctree) -> None:
    if "body" not in context:
        return
    styles = [app.builder.highlighter.formatter_args["style"]]
    if dark := getattr(app.config, "pygments_dark_style", None):  # Furo's
        styles.append(get_style_by_name(dark))
    context["body"] = lighter(context["body"], plain_classes(*styles))


def setup(app):
    app.connect("html-page-context", on_html_page_context)
    return {"parallel_read_safe": True, "parallel_write_safe": True}
