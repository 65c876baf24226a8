"""The theme's own words, and the site's labels, translated like everything else.

Furo writes some of its labels through Sphinx's translation machinery and
others as plain English in its templates ("Back to top", "Light mode", the
labels of its buttons). Neither kind is in our page catalogs. Nor are the
sentences that the site's own extensions write (:data:`SITE_STRINGS`: the
PyTorch that executed a lesson, what a downloaded lesson needs). This module
gives them one catalog of their own, ``theme.po``:

* ``make gettext`` writes ``theme.pot`` from :data:`THEME_STRINGS` plus the
  site's title and copyright line, so ``make update-po`` brings it to the
  translators with the page catalogs;
* a translated build uses the translated site title and copyright line, and
  when it has written its pages, replaces those labels in each page's chrome
  (everything outside ``<article>``);
* an extension writes a site label with :func:`label`, in the build's
  language.

Upstream limitation: Furo writes most of these labels as plain English in its
templates, outside Sphinx's translation machinery, and sphinx-gallery's "Out:"
is CSS content; the fix belongs in Furo (wrap the labels in ``_()``) and
sphinx-gallery. Until then, this rewrites the written files, using only
Sphinx's events. If the theme gains a label, the test that scans the Chinese
pages for English chrome (tests/test_build.py) fails and names it; add it
here.
"""

from __future__ import annotations

import html
import json
import re
from pathlib import Path

# Labels Furo shows around the article. "%s" stands for a value the theme
# fills in (a section title).
THEME_STRINGS = (
    "Skip to content",
    "Home",
    "Back to top",
    "On this page",
    "Contents",
    "Menu",
    "Expand",
    "Next",
    "Previous",
    "Search",
    "Light mode",
    "Dark mode",
    "Auto light/dark, in light mode",
    "Auto light/dark, in dark mode",
    "Toggle Light / Dark / Auto color theme",
    "Toggle site navigation sidebar",
    "Toggle table of contents sidebar",
    "Toggle navigation of %s",
    "Copyright © %s",
    "Made with",
    "and",
    "'s",
    "Out:",  # sphinx-gallery's label above printed output (CSS content)
)
# Sentences the site's extensions write into pages and downloads. "%s"
# stands for a value (a version, a date, a command) that is no translator's
# business, so a new PyTorch release changes no catalog.
EXECUTED = "Executed with PyTorch %s on %s."  # under a lesson's title (ext/lessons/provenance.py)
# At the top of a downloaded lesson (ext/lessons/downloads.py).
NEEDS = (
    "Besides PyTorch, this lesson needs the packages that %s installs; in a "
    "notebook, the first cell runs it."
)
GRAPHS_NEED_DOT = (
    "Its graphs also need Graphviz's ``dot`` program: ``sudo apt-get install "
    "graphviz`` on Debian or Ubuntu, ``brew install graphviz`` on macOS, or "
    "``conda install graphviz``."
)
# The description of a page with no paragraph of its own (ext/pages/meta.py).
DESCRIPTION = (
    "Lessons on PyTorch custom autograd Functions that support double backward, "
    "each executed when the site is built."
)
SITE_STRINGS = (EXECUTED, NEEDS, GRAPHS_NEED_DOT, DESCRIPTION)
DOMAIN = "theme"


def messages(config) -> list[str]:
    return [config.html_title, config.copyright, *THEME_STRINGS, *SITE_STRINGS]


def label(config, msgid: str) -> str:
    """*msgid* (one of :data:`SITE_STRINGS`) in the language of the build."""
    return config.theme_labels.get(msgid, msgid)


def pot_text(config) -> str:
    """A gettext template holding the theme's messages."""
    import polib

    pot = polib.POFile(wrapwidth=79)
    pot.metadata = {
        "Project-Id-Version": config.project,
        "MIME-Version": "1.0",
        "Content-Type": "text/plain; charset=UTF-8",
        "Content-Transfer-Encoding": "8bit",
    }
    for msgid in messages(config):
        pot.append(polib.POEntry(msgid=msgid, msgstr=""))
    return str(pot)


def load_table(lang: str, locale_dir: Path) -> dict[str, str]:
    """msgid -> msgstr of the theme catalog, translated entries only."""
    import polib

    path = locale_dir / lang / "LC_MESSAGES" / f"{DOMAIN}.po"
    if not path.exists():
        return {}
    return {e.msgid: e.msgstr for e in polib.pofile(str(path)).translated_entries()}


def _pattern(msgid: str) -> re.Pattern:
    return re.compile("^" + re.escape(msgid).replace("%s", "(.+)") + "$")


# Full-width punctuation that ends a translated label: no space after it.
_FULL_WIDTH_END = re.compile(r"[，。：；！？、）]$")
_WIDE_START = re.compile(r"^[\u3400-\u9fff]")


def _spaced(text: str, stripped: str, translation: str) -> str:
    """*text* with its label replaced, spaced by the rules of the translation.

    Furo's credit line joins labels and links inline ("Made with <a>Sphinx</a>
    and <a>@pradyunsg</a>'s <a>Furo</a>"), and its template's own spaces would
    sit in the Chinese: after a full-width colon ("构建工具： Sphinx"), and
    none where a Chinese word follows a Latin name ("@pradyunsg的"). So a
    translation that ends in full-width punctuation drops the space after it,
    and the translation of a suffix glued to the name before it (the English
    begins with an apostrophe) is set off from that name by a space when it
    begins with a Chinese character.
    """
    new = text.replace(stripped, translation)
    if _FULL_WIDTH_END.search(translation):
        new = new.rstrip()
    if stripped.startswith("'") and not text[:1].isspace() and _WIDE_START.match(translation):
        new = " " + new
    return new


def translate_text(text: str, table: dict[str, str]) -> str:
    """The translation of one label (HTML-escaped text), or the label itself."""
    stripped = text.strip()
    label = html.unescape(stripped)
    if label in table:
        return _spaced(text, stripped, html.escape(table[label], quote=False))
    for msgid, msgstr in table.items():
        if "%s" in msgid:
            m = _pattern(msgid).match(label)
            if m:
                return _spaced(text, stripped, html.escape(msgstr.replace("%s", m[1]), quote=False))
    return text


_TEXT = re.compile(r">([^<>]+)<")
_ATTR = re.compile(r'\b(aria-label|title|placeholder)="([^"]*)"')


def translate_chrome(page: str, table: dict[str, str]) -> str:
    """Translate the theme's labels in *page*, leaving the article alone."""
    if not table:
        return page
    start = page.find("<article")
    end = page.rfind("</article>")
    if start == -1 or end == -1:
        start = end = len(page)
    head, article, tail = page[:start], page[start:end], page[end:]

    def chrome(text: str) -> str:
        text = _TEXT.sub(lambda m: ">" + translate_text(m[1], table) + "<", text)
        return _ATTR.sub(lambda m: f'{m[1]}="{translate_text(m[2], table)}"', text)

    return chrome(head) + article + chrome(tail)


def on_config_inited(app, config) -> None:
    from ext.translation.languages import LOCALE, SOURCE_LANGUAGE

    if config.language == SOURCE_LANGUAGE:
        return
    table = load_table(config.language, LOCALE)
    config.html_title = table.get(config.html_title, config.html_title)
    config.copyright = table.get(config.copyright, config.copyright)
    # A config value (rebuild "html"): when a translator changes theme.po,
    # Sphinx sees the configuration change and rewrites every page.
    config.theme_labels = {
        k: v for k, v in table.items() if k in THEME_STRINGS or k in SITE_STRINGS
    }


def translate_pages(app, exception) -> None:
    """Translate the chrome of every page in the output (pages this build did
    not write were translated by the build that wrote them: the rewrite
    changes nothing twice, and a changed theme.po rewrites every page)."""
    table = app.config.theme_labels
    if exception is not None or not table or app.builder.format != "html":
        return
    for page in sorted(Path(app.outdir).rglob("*.html")):
        text = page.read_text(encoding="utf-8")
        translated = translate_chrome(text, table)
        if translated != text:
            page.write_text(translated, encoding="utf-8")


def on_html_page_context(app, pagename, templatename, context, doctree) -> None:
    """sphinx-gallery writes its "Out:" label with CSS: override it per page."""
    label = app.config.theme_labels.get("Out:")
    if label:
        css = f"html .sphx-glr-script-out::before {{ content: {json.dumps(label, ensure_ascii=False)}; }}"
        context["metatags"] = context.get("metatags", "") + f"<style>{css}</style>\n"


def write_template(app, exception) -> None:
    if exception is None and app.builder.name == "gettext":
        Path(app.outdir, f"{DOMAIN}.pot").write_text(pot_text(app.config), encoding="utf-8")


def setup(app):
    app.add_config_value("theme_labels", {}, "html", types=[dict])
    app.connect("config-inited", on_config_inited)
    app.connect("html-page-context", on_html_page_context)
    app.connect("build-finished", translate_pages)
    app.connect("build-finished", write_template)
    return {"parallel_read_safe": True, "parallel_write_safe": True}
