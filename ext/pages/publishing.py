"""The published site: its address makes it findable in both languages.

One setting, ``SITE_URL`` (``make html SITE_URL=https://example.org/double-backward/``),
is the address of the site's root, where the landing page is. The Makefile
checks it once (``python -m tools.site check``) and passes each language build its own address as Sphinx's ``html_baseurl``
(``https://example.org/double-backward/en/``). Then:

* every page carries a canonical link (Sphinx and Furo write it from
  ``html_baseurl``), and its ``hreflang`` alternates are absolute
  (``ext/pages/language_switcher.py`` asks :func:`site_root`);
* each language gets a ``sitemap.xml`` from sphinx-sitemap, which lists each
  page with its address in every language (conf.py loads and sets it up);
* the root gets a sitemap index naming each language's sitemap
  (``python -m tools.site root``, with the landing page).

Without ``SITE_URL`` none of this happens: links stay relative, no sitemap is
written, and sphinx-sitemap is not even loaded (it would warn that
``html_baseurl`` is missing, and the build treats warnings as errors). This
extension only checks the address a build was given, and removes the sitemap
that an earlier build with an address left behind.
"""

from __future__ import annotations

from pathlib import Path
from urllib.parse import urlsplit
from xml.sax.saxutils import escape

EXAMPLE = "https://example.org/double-backward/"
SITEMAP_NS = "http://www.sitemaps.org/schemas/sitemap/0.9"


class SiteURLError(ValueError):
    """An address the site cannot be published at, with what to do about it."""


def site_url(value: str, name: str = "SITE_URL") -> str:
    """*value* as the site's address, ending with one slash; else SiteURLError."""
    try:
        parts = urlsplit(value)
    except ValueError:  # such as an unclosed [IPv6 address
        parts = urlsplit("")
    problem = None
    if any(ch.isspace() or ch in "\"'<>\\`" for ch in value):
        problem = "contains a space, a quote or a character that needs escaping"
    elif parts.scheme not in ("http", "https") or not parts.hostname:
        problem = "is not an absolute http(s) address"
    elif parts.query or parts.fragment or value.endswith(("?", "#")):
        problem = "has a query or a #fragment"
    elif parts.username or parts.password:
        problem = "carries a user name or password"
    elif "//" in parts.path:
        problem = "has an empty folder name (//) in its path"
    if problem:
        raise SiteURLError(
            f"{name}={value!r} {problem}: set it to the address of the site's root, "
            f"such as {EXAMPLE} (or leave it unset to build for reading locally)"
        )
    return value.rstrip("/") + "/"


def site_root(config) -> str | None:
    """The site's address, from this language build's ``html_baseurl``; None if unset.

    The Makefile passes ``html_baseurl = SITE_URL + <language>/``: a language's
    pages live in its own folder below the site's root.
    """
    base = config.html_baseurl
    if not base:
        return None
    folder = f"{config.language}/"
    if not base.endswith("/" + folder):
        raise SiteURLError(
            f"html_baseurl={base!r} does not end with this language's folder "
            f"{folder!r}: set SITE_URL instead (make html SITE_URL={EXAMPLE})"
        )
    return site_url(base[: -len(folder)], name="html_baseurl")


def page_url(root: str, language: str, pagename: str) -> str:
    """The absolute address of *pagename* in *language*."""
    return f"{root}{language}/{pagename}.html"


def on_config_inited(app, config) -> None:
    """Check this language's address; without one, remove an old sitemap."""
    from sphinx.errors import ConfigError

    try:
        root = site_root(config)
    except SiteURLError as exc:
        raise ConfigError(str(exc)) from None
    if root is None:
        (Path(app.outdir) / "sitemap.xml").unlink(missing_ok=True)


def sitemap_index(root: str, langs: list[str]) -> str:
    """The root's sitemap index: one entry per language's sitemap."""
    entries = "".join(
        f"  <sitemap><loc>{escape(root)}{escape(code)}/sitemap.xml</loc></sitemap>\n"
        for code in langs
    )
    return (
        '<?xml version="1.0" encoding="utf-8"?>\n'
        f'<sitemapindex xmlns="{SITEMAP_NS}">\n{entries}</sitemapindex>\n'
    )


def setup(app):
    app.connect("config-inited", on_config_inited)
    return {"parallel_read_safe": True, "parallel_write_safe": True}
