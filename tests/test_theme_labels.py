"""Tests of ext/translation/theme_labels.py and docs/_templates/page.html, on a
tiny Furo project laid out as the site is (conf.py above the sources, the
templates beside conf.py), three pages built in Chinese: Sphinx translates the
theme's labels from a ``sphinx.po``, and the shim the labels Furo writes as
plain English, never the article; the search page's scripts and the copy
button get the site's words too; ``make gettext`` puts every label, the site's title and copyright
and the site's sentences in ``sphinx.pot``; a changed ``sphinx.po`` rewrites
every page.
"""

from __future__ import annotations

import html
import json
import re
import shutil
import subprocess
import sys

import polib
import pytest

from ext import ROOT
from ext.translation.theme_labels import (
    COPY_BUTTON,
    DESCRIPTION,
    NO_RESULTS,
    SCRIPT_STRINGS,
    SITE_STRINGS,
)

CONF = f"""
import sys
sys.path.insert(0, {str(ROOT)!r})
extensions = ["ext.translation.theme_labels", "ext.pages.meta", "sphinx_copybutton"]
html_theme = "furo"
html_title = "My site"
copyright = "2026, me"
templates_path = ["templates"]
locale_dirs = ["../locale"]
"""
PAGES = {
    "index": "Home\n====\n\nBack to top, in the article: ``<title>Menu</title>``.\n\n"
    ".. toctree::\n\n   part\n",
    "part": "Part\n====\n\n.. toctree::\n\n   leaf\n",
    "leaf": "Leaf\n====\n\nA leaf.\n",
}
CHINESE = {
    "Back to top": "回到顶部",  # Furo's, in _()
    "Copyright &#169; %(copyright)s": "版权所有 &#169; %(copyright)s",
    "Made with ": "构建工具：",  # full-width colon: no space after it
    '<a href="https://www.sphinx-doc.org/">Sphinx</a> and ': (
        '<a href="https://www.sphinx-doc.org/">Sphinx</a> 和 '
    ),
    "%(author)s's": "%(author)s 的",  # plain English in Furo: the shim's
    "Menu": "菜单",
    "Toggle site navigation sidebar": "展开或收起站点导航侧栏",
    "Toggle navigation of %s": "展开或收起“%s”的导航",
    "Out:": "输出：",
    "My site": "我的网站",  # conf.py's
    "2026, me": "2026，我",
    DESCRIPTION: "一系列课。",
    NO_RESULTS: "没有找到匹配的页面。",  # Sphinx's says 您 and speaks of categories
    "Copied!": "已复制",  # sphinx-copybutton's is 复制成功! (a half-width !)
}


def sphinx_build(root, builder, out):
    command = [sys.executable, "-m", "sphinx", "-b", builder, "-q", "-W", "-c", str(root)]
    subprocess.run([*command, "-D", "language=zh_CN", str(root / "src"), str(out)], check=True)


def write_catalog(root, table):
    po = polib.POFile()
    po.metadata = {"Content-Type": "text/plain; charset=UTF-8"}
    for msgid, msgstr in table.items():
        po.append(polib.POEntry(msgid=msgid, msgstr=msgstr))
    po.save(str(root / "locale" / "zh_CN" / "LC_MESSAGES" / "sphinx.po"))


@pytest.fixture(scope="module")
def project(tmp_path_factory):
    root = tmp_path_factory.mktemp("tiny")
    (root / "conf.py").write_text(CONF, encoding="utf-8")
    shutil.copytree(ROOT / "docs" / "_templates", root / "templates")
    (root / "src").mkdir()
    for name, text in PAGES.items():
        (root / "src" / f"{name}.rst").write_text(text, encoding="utf-8")
    (root / "locale" / "zh_CN" / "LC_MESSAGES").mkdir(parents=True)
    write_catalog(root, CHINESE)
    sphinx_build(root, "html", root / "_build" / "html")
    return root


def page(project, name):
    return (project / "_build" / "html" / f"{name}.html").read_text(encoding="utf-8")


def test_furo_labels_and_the_shims_speak_the_catalog(project):
    index = page(project, "index")
    assert "<span>回到顶部</span>" in index
    assert "<title>菜单</title>" in index and 'aria-label="展开或收起站点导航侧栏"' in index
    assert 'aria-label="展开或收起“Part”的导航"' in index
    assert 'content: "输出：";' in index
    # The article keeps its own words, even those that look like the theme's.
    article = index[index.index("<article") : index.index("</article>")]
    assert "Back to top, in the article" in article and "&lt;title&gt;Menu" in article


def test_the_credit_line_is_spaced_as_the_translator_wrote_it(project):
    index = page(project, "index")
    footer = re.search(r'<div class="left-details">(.*?)</div>\s*<div class="right', index, re.S)
    text = " ".join(html.unescape(re.sub(r"<[^>]+>", "", footer[1])).split())
    assert text == "版权所有 © 2026，我 构建工具：Sphinx 和 @pradyunsg 的 Furo"


def test_title_copyright_and_site_sentences_are_translated_config_left_alone(project):
    assert "<title>我的网站</title>" in page(project, "index")
    assert "<title>Leaf - 我的网站</title>" in page(project, "leaf")
    assert '<meta name="description" content="一系列课。">' in page(project, "genindex")


def test_the_search_scripts_speak_the_catalog_beside_sphinxs_own_words(project):
    """Sphinx reads its scripts' words from one ``sphinx.js``: the site's, which
    keeps Sphinx's Chinese for the rest, wherever the build runs from (the
    project's ``locale_dirs`` is relative, as here, and the tests build from
    another folder)."""
    assert "_static/translations.js" in page(project, "search")
    script = (project / "_build" / "html" / "_static" / "translations.js").read_text()
    catalog = json.loads(script[script.index("{") : script.rindex("}") + 1])
    assert catalog["messages"][NO_RESULTS] == "没有找到匹配的页面。"
    assert catalog["messages"]["Search Results"] == "搜索结果"  # Sphinx's own
    assert catalog["plural_expr"] == "0"


def test_the_copy_button_says_the_catalogs_words_once(project):
    """One line of the site's words, before sphinx-copybutton picks its
    language (tests/test_browser.py clicks the button); a rebuild does not
    add a second."""
    script = project / "_build" / "html" / "_static" / "copybutton.js"
    for _build in range(2):
        text = script.read_text(encoding="utf-8")
        (line,) = [line for line in text.splitlines() if "theme_labels.py" in line]
        assert line.startswith('messages["zh-CN"] = Object.assign({}, messages.en,')
        assert '{"copy_success": "已复制"}' in line
        assert text.index(line) < text.index("\nlet locale = ")
        sphinx_build(project, "html", project / "_build" / "html")


def test_gettext_writes_every_label_and_sentence_into_sphinx_pot(project):
    out = project / "_build" / "gettext"
    sphinx_build(project, "gettext", out)
    msgids = {entry.msgid for entry in polib.pofile(str(out / "sphinx.pot"))}
    furo = {"Back to top", "Next", "On this page", "Made with ", "Copyright &#169; %(copyright)s"}
    shim = {"Menu", "Toggle site navigation sidebar", "%(author)s's", "Out:"}
    ours = {"My site", "2026, me", *SITE_STRINGS, *SCRIPT_STRINGS, *COPY_BUTTON.values()}
    assert furo | shim | ours <= msgids


def test_a_changed_catalog_rewrites_every_page(project):
    write_catalog(project, {**CHINESE, "Back to top": "返回顶部"})
    sphinx_build(project, "html", project / "_build" / "html")
    for name in PAGES:
        assert "<span>返回顶部</span>" in page(project, name), name
