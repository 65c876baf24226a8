"""The words around the pages, from Sphinx's own catalog, ``sphinx.po``.

Sphinx translates the templates' strings (Furo's ``_()`` labels, and those
that docs/_templates/page.html wraps) from ``locale/<lang>/LC_MESSAGES/sphinx.po``.
This adds what Sphinx leaves out of ``sphinx.pot``: the strings of Furo's
templates and of ours (Sphinx 9 looks for ``templates_path`` under docs/, not
beside conf.py), conf.py's title and copyright, and the site's sentences, which
extensions write with :func:`label`; the title and copyright translated in each
page's context, leaving conf.py's configuration as it is; and every page's
dependency on ``sphinx.po``, whose changes Sphinx would not write out.

Sphinx's scripts (the search page's messages) read their words from a
``sphinx.js``, which Sphinx takes from the first folder of ``locale_dirs`` that
has one for the language, and else from its own: :func:`script_translations`
writes one, Sphinx's own words with this site's translations of
SCRIPT_STRINGS from ``sphinx.po``.

Upstream limitations: Furo writes "Toggle navigation of %s" in Python
(furo/navigation.py) as plain English, not through ``_()``: translated here.
sphinx-copybutton 0.5.2 has its words in its script, with no option to
change them (its Chinese "Copied!" is 复制成功! with a half-width !): the
build gives the script the words of COPY_BUTTON from ``sphinx.po``, and stops,
naming this file, if the script no longer has the line it adds them before.
Sphinx 9.0 looks for that ``sphinx.js`` relative to the working directory, not
to the sources, so the folder it is written in is named by its absolute path.
"""

from __future__ import annotations

import html
import json
import re
from pathlib import Path

from babel.messages.plurals import get_plural
from sphinx import package_dir
from sphinx.errors import ExtensionError
from sphinx.locale import get_translation

label = get_translation("sphinx")  # a msgid in the build's language

# The site's own sentences; "%s" is a value (version, date, command).
EXECUTED = "Executed with PyTorch %s on %s."  # ext/lessons/provenance.py
NEEDS_LINE = "Needs %s"  # …and under it: the packages (names), then the downloads
DOWNLOAD = "Download:"
NEEDS = (  # ext/lessons/downloads.py, atop a downloaded lesson
    "Besides PyTorch, this lesson needs the packages that %s installs; in a "
    "notebook, the first cell runs it."
)
GRAPHS_NEED_DOT = (
    "Its graphs also need Graphviz's ``dot`` program: ``sudo apt-get install "
    "graphviz`` on Debian or Ubuntu, ``brew install graphviz`` on macOS, or "
    "``conda install graphviz``."
)
DESCRIPTION = (  # ext/pages/meta.py, for a page with no paragraph of its own
    "Lessons on PyTorch custom autograd Functions that support double backward, "
    "each executed when the site is built."
)
# The exercise of a downloaded lesson, as a reader works it (ext/lessons/downloads.py).
ANSWER = "Your answer"
WRITE_ANSWER = (
    "Write your answer in the next cell, in place of each ``raise "
    "NotImplementedError`` (the docstring above it says what to write), then run "
    "the cell after it: it prints ✓ when your answer is right, and otherwise what "
    "is wrong."
)
FIX_ANSWER = (
    "The next cell holds the code that the exercise asks you to fix, under the "
    "name the check expects. Fix it, then run the cell after it: it prints ✓ when "
    "your answer is right, and otherwise what is wrong."
)
# The docstrings of the starting code's functions, which their NotImplementedError repeats.
TODO_FORWARD = "Write forward: compute the result, and save what backward needs."
TODO_BACKWARD = "Write backward: return the gradient of each input."
TODO = "Write %s as the exercise asks."
SOLUTION = "Solution"
SOLUTION_APART = (
    "A solution, checked by the same function as your answer. It is kept apart "
    "from the exercise: try the exercise first."
)
# Shown as plain text in a notebook's output: no markup.
NO_DOT = (
    "Graphviz's dot is not installed, so this notebook shows each graph as text. "
    "To draw them, install it (sudo apt-get install graphviz, brew install graphviz "
    "or conda install graphviz) and run the notebook again."
)
TOGGLE = "Toggle navigation of %s"  # Furo's
SITE_STRINGS = (
    EXECUTED, NEEDS_LINE, DOWNLOAD, NEEDS, GRAPHS_NEED_DOT, DESCRIPTION, ANSWER, WRITE_ANSWER,
    FIX_ANSWER, TODO_FORWARD, TODO_BACKWARD, TODO, SOLUTION, SOLUTION_APART, NO_DOT, TOGGLE,
)  # fmt: skip


# Sphinx's own words in its scripts that the site translates anew: this one
# speaks of categories, which the site does not have; the link that takes the
# search words' marks off a page, which Sphinx's Chinese calls hiding results;
# the word the search page shows while it searches (its Chinese says 中 twice
# over: the page adds pulsing dots).
NO_RESULTS = (
    "Your search did not match any documents. Please make sure that all words are "
    "spelled correctly and that you've selected enough categories."
)
HIDE_MATCHES = "Hide Search Matches"
SCRIPT_STRINGS = (NO_RESULTS, HIDE_MATCHES, "Searching")
# Sphinx's own words in Python that the site translates anew, through
# sphinx.po, which Sphinx reads before its own catalog: intersphinx's tooltip on
# a link to PyTorch's API (sphinx/ext/intersphinx/_resolve.py), whose Chinese
# in Sphinx's catalog has half-width brackets. Sphinx's gettext builder puts
# into sphinx.pot only the words of templates, so add_messages adds these.
PYTHON_STRINGS = ("(in %s %s)", "(in %s)")
# sphinx-copybutton's words, by its key in its script, with its English as the msgid.
COPY_BUTTON = {
    "copy": "Copy",
    "copy_to_clipboard": "Copy to clipboard",
    "copy_success": "Copied!",
    "copy_failure": "Failed to copy",
}
_COPY_MARK = "// the site's words: ext/translation/theme_labels.py"


def add_messages(app) -> None:
    if app.builder.name != "gettext":
        return
    import furo
    from sphinx.builders.gettext import MsgOrigin

    catalog = app.builder.catalogs["sphinx"]
    extract = app.builder.templates.environment.extract_translations  # as Sphinx does
    for folder in (furo.THEME_PATH, *(Path(app.confdir, p) for p in app.config.templates_path)):
        for path in sorted(Path(folder).rglob("*.html")):
            for line, _function, msgid in extract(path.read_text(encoding="utf-8")):
                catalog.add(msgid, MsgOrigin(str(path), line))
    strings = (*SITE_STRINGS, *SCRIPT_STRINGS, *PYTHON_STRINGS, *COPY_BUTTON.values())
    for msgid in (app.config.html_title, app.config.copyright, *strings):
        catalog.add(msgid, MsgOrigin(__file__, 0))


def script_translations(app, config) -> None:
    """Sphinx's ``sphinx.js`` for the build's language, with this site's
    translations of SCRIPT_STRINGS, written beside the doctrees in a folder
    that ``locale_dirs`` then names first (see above)."""
    ours = {msgid: label(msgid) for msgid in SCRIPT_STRINGS if label(msgid) != msgid}
    if not ours:  # English, or nothing translated: Sphinx's own file, if any
        return
    language = config.language
    shipped = Path(package_dir, "locale", language, "LC_MESSAGES", "sphinx.js")
    if shipped.is_file():  # Documentation.addTranslations({...});
        text = shipped.read_text(encoding="utf-8")
        catalog = json.loads(text[text.index("{") : text.rindex("}") + 1])
    else:
        catalog = {"messages": {}, "plural_expr": get_plural(language).plural_expr}
        catalog["locale"] = language
    catalog["messages"].update(ours)
    folder = Path(app.doctreedir, "locale").resolve()
    script = folder / language / "LC_MESSAGES" / "sphinx.js"
    text = f"Documentation.addTranslations({json.dumps(catalog, indent=4, sort_keys=True)});\n"
    if not script.is_file() or script.read_text(encoding="utf-8") != text:
        script.parent.mkdir(parents=True, exist_ok=True)
        script.write_text(text, encoding="utf-8")
    config.locale_dirs = [str(folder), *config.locale_dirs]


def copy_button_words(app, exception) -> None:
    """sphinx-copybutton's words in the page's language, from ``sphinx.po``:
    one line, before the script picks its language (see above), sets them
    over its own (its English where it has none for the language)."""
    script = Path(app.outdir, "_static", "copybutton.js")
    if exception or not script.is_file():
        return
    words = {key: label(msgid) for key, msgid in COPY_BUTTON.items() if label(msgid) != msgid}
    text = "".join(
        line for line in script.read_text(encoding="utf-8").splitlines(True)
        if not line.rstrip().endswith(_COPY_MARK)
    )  # fmt: skip
    if words:
        if "\nlet locale = " not in text:
            raise ExtensionError(
                "sphinx-copybutton's copybutton.js has no 'let locale = ' line, before which "
                "ext/translation/theme_labels.py sets the copy button's words; update it"
            )
        lang = json.dumps(app.config.language.replace("_", "-"))  # as <html lang>
        mine = json.dumps(words, ensure_ascii=False)
        line = (
            f"messages[{lang}] = Object.assign({{}}, messages.en, messages[{lang}], {mine});"
            f"  {_COPY_MARK}\n"
        )
        text = text.replace("\nlet locale = ", f"\n{line}let locale = ", 1)
    script.write_text(text, encoding="utf-8")


def depend_on_catalog(app, docname: str, source: list[str]) -> None:
    for locale_dir in app.config.locale_dirs:
        po = Path(app.srcdir, locale_dir, app.config.language, "LC_MESSAGES", "sphinx.po")
        if po.is_file():
            app.env.note_dependency(po)


def translate_context(app, pagename, templatename, context, doctree) -> None:
    for key in ("docstitle", "copyright"):
        if context.get(key):
            context[key] = label(context[key])
    toggle = html.escape(label(TOGGLE))  # the titles in Furo's tree are escaped already
    context["furo_navigation_tree"] = re.sub(
        'aria-label="' + re.escape(TOGGLE).replace("%s", '([^"]*)') + '"',
        lambda m: f'aria-label="{toggle % m[1]}"',
        context.get("furo_navigation_tree", ""),
    )


def setup(app):
    app.connect("config-inited", script_translations)
    app.connect("builder-inited", add_messages)
    app.connect("source-read", depend_on_catalog)
    app.connect("html-page-context", translate_context, priority=600)  # after Furo's
    app.connect("build-finished", copy_button_words)
    return {"parallel_read_safe": True, "parallel_write_safe": True}
