"""The language switcher: every page links to itself in the other languages.

Each page gets, through Sphinx's ``html-page-context`` event:

* ``language_links`` and ``language_label`` for the sidebar template
  ``docs/_templates/sidebar/languages.html``, which draws the switcher;
* ``<link rel="alternate" hreflang=...>`` tags in its head (and an
  ``x-default`` one), so that search engines know the translations; they are
  absolute when the site has an address (``SITE_URL``, ext/pages/publishing.py).

The languages are those the Makefile builds (``-D site_languages``), else the
source language and every language with catalogs in locale/.
"""

from __future__ import annotations

from html import escape

from ext.pages.publishing import page_url, site_root
from ext.translation.languages import LOCALE, SOURCE_LANGUAGE, display_name, hreflang

LANGUAGE_LABEL = {"en": "Language", "zh_CN": "语言"}


def site_languages(config) -> list[str]:
    """The languages this site is built in: -D site_languages, else locale/."""
    if config.site_languages:
        return list(config.site_languages)
    found = sorted(p.parent.name for p in LOCALE.glob("*/LC_MESSAGES"))
    return [SOURCE_LANGUAGE, *[code for code in found if code != SOURCE_LANGUAGE]]


def language_links(pagename: str, current: str, langs: list[str]) -> list[dict]:
    """Links to *pagename* in every language, relative to that page."""
    up = "../" * (pagename.count("/") + 1)
    return [
        {
            "code": code,
            "hreflang": hreflang(code),
            "name": display_name(code),
            "url": f"{up}{code}/{pagename}.html",
            "current": code == current,
        }
        for code in langs
    ]


def on_html_page_context(app, pagename, templatename, context, doctree) -> None:
    links = language_links(pagename, app.config.language, site_languages(app.config))
    context["language_links"] = links
    context["language_label"] = LANGUAGE_LABEL.get(app.config.language, "Language")
    # Search engines ignore relative alternates: absolute ones once the site
    # has an address (SITE_URL, see ext/pages/publishing.py).
    root = site_root(app.config)
    hrefs = [page_url(root, link["code"], pagename) if root else link["url"] for link in links]
    alternates = "".join(
        f'<link rel="alternate" hreflang="{link["hreflang"]}" href="{escape(href)}">\n'
        for link, href in zip(links, hrefs, strict=True)
    )
    alternates += f'<link rel="alternate" hreflang="x-default" href="{escape(hrefs[0])}">\n'
    context["metatags"] = context.get("metatags", "") + alternates


def setup(app):
    app.add_config_value("site_languages", [], "html", types=[list])
    app.connect("html-page-context", on_html_page_context)
    return {"parallel_read_safe": True, "parallel_write_safe": True}
