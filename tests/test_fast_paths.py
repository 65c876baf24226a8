"""The build's fast paths (issue 7) change how fast, never what.

Each fast path is checked against the slow way it replaces: Sphinx's own
translation of a page, Pygments run afresh, jieba's own dictionary.
"""

from __future__ import annotations

import logging
import subprocess
import sys

import polib
import pytest
from conftest import LANGUAGES, ROOT, build_env, snapshot

from ext import highlight, i18n, search

CATALOGS = sorted((ROOT / "locale").rglob("*.po"))


@pytest.mark.build
@pytest.mark.parametrize("lang", LANGUAGES)
def test_a_build_without_fast_paths_gives_the_same_bytes(site, tmp_path, lang):
    """Sphinx alone (one process, every message parsed twice, no highlight
    cache) writes exactly what `make html` wrote."""
    out = tmp_path / "html"
    command = [
        sys.executable, "-m", "sphinx", "-W", "--keep-going", "-q", "-j", "1", "-c", ".",
        "-D", f"site_languages={','.join(LANGUAGES)}", "-D", "fast_translation=0",
        "-b", "html", "-D", f"language={lang}", "-d", str(tmp_path / "doctrees"),
        "docs", str(out),
    ]  # fmt: skip
    run = subprocess.run(
        command, cwd=site.root, env=build_env(PYTHONHASHSEED="0"), capture_output=True, text=True
    )
    assert run.returncode == 0, run.stderr
    fast, slow = snapshot(site.html / lang), snapshot(out)
    assert fast.keys() == slow.keys()
    differ = [name for name in fast if fast[name] != slow[name]]
    assert not differ, f"the fast paths changed {differ[:10]}"


# -- Plain messages -------------------------------------------------------------


def parsed_rst(text: str):
    from docutils.core import publish_doctree

    settings = {"report_level": 5, "halt_level": 5, "warning_stream": False}
    return publish_doctree(text, settings_overrides=settings)


def parsed_myst(text: str):
    from docutils.core import publish_doctree
    from myst_parser.parsers.docutils_ import Parser

    settings = {"report_level": 5, "halt_level": 5, "warning_stream": False}
    return publish_doctree(text, parser=Parser(), settings_overrides=settings)


def one_plain_paragraph(doctree, text: str) -> bool:
    from docutils import nodes

    return (
        len(doctree.children) == 1
        and type(doctree[0]) is nodes.paragraph
        and [type(c) for c in doctree[0].children] == [nodes.Text]
        and doctree[0].astext() == text
    )


PLAIN = [
    "切换浅色/深色/自动配色",
    "x - y 以及 100% 的 (括号) 和 'quotes' \"双引号\"",
    "3.14 是圆周率",
    "2026 年",
]
NOT_PLAIN = [
    "1. 列表项",
    "a) 列表项",
    "iv. 罗马数字",
    "(1) 编号",
    "- 项目",
    "* 项目",
    "+ 项目",
    "# 标题",
    "> 引用",
    "| 行块",
    "见 http://example.com 。",
    "写信给 a@b.cn",
    "这是 **粗体**",
    "这是 *斜体*",
    "名字_ 引用",
    "脚注 [1]_",
    "反斜杠 \\ 转义",
    "实体 &amp; 字符",
    "公式 $x$",
    "角色 {doc}`x`",
    "行尾有空格 ",
    " 行首有空格",
    "两行\n文本",
    "制表\t符",
    "下划线\n======",
    "....",
    "----",
    "文末两个冒号::",
]


def messages() -> list[str]:
    found = []
    for path in CATALOGS:
        found += [e.msgstr for e in polib.pofile(str(path)).translated_entries()]
    return found


def test_a_message_called_plain_is_one_paragraph_of_itself():
    """For every translation we have, and for strings made to fool the test:
    plain means reST and MyST both give one paragraph holding the same text."""
    plain = [text for text in messages() + PLAIN + NOT_PLAIN if i18n.is_plain(text)]
    assert len(plain) > 100  # the fast path is taken
    wrong = [
        text
        for text in plain
        if not (
            one_plain_paragraph(parsed_rst(text), text)
            and one_plain_paragraph(parsed_myst(text), text)
        )
    ]
    assert not wrong


def test_markup_is_never_plain():
    assert [text for text in NOT_PLAIN if i18n.is_plain(text)] == []
    assert [text for text in PLAIN if not i18n.is_plain(text)] == []


# -- Highlighting ----------------------------------------------------------------


def bridge():
    from sphinx.highlighting import PygmentsBridge

    return PygmentsBridge("html", "default")


def test_a_cached_block_is_what_pygments_writes(tmp_path):
    code = "def f(x):\n    return x ** 2  # squared\n"
    fresh = bridge().highlight_block(code, "python", linenos=False)
    first, second = bridge(), bridge()
    highlight.cached(first, tmp_path)
    highlight.cached(second, tmp_path)
    assert first.highlight_block(code, "python", linenos=False) == fresh
    (entry,) = tmp_path.rglob("*.html")
    assert entry.read_text(encoding="utf-8") == fresh
    # The second build (another bridge) reads the entry instead of Pygments.
    entry.write_text("from the cache", encoding="utf-8")
    assert second.highlight_block(code, "python", linenos=False) == "from the cache"
    entry.write_text(fresh, encoding="utf-8")
    # Another lexer, another entry.
    assert first.highlight_block(code, "text") != fresh
    assert len(list(tmp_path.rglob("*.html"))) == 2


def test_a_block_that_warns_is_not_cached(tmp_path):
    cached = bridge()
    highlight.cached(cached, tmp_path)
    seen = []
    handler = logging.Handler()
    handler.emit = seen.append
    logger = logging.getLogger("sphinx.sphinx.highlighting")
    logger.addHandler(handler)
    try:
        cached.highlight_block("x = $? 1", "python")  # not Python: Sphinx warns
    finally:
        logger.removeHandler(handler)
    assert seen
    assert not list(tmp_path.rglob("*.html"))


# -- Search ------------------------------------------------------------------------


def test_the_pickled_dictionary_is_jiebas(tmp_path, monkeypatch):
    import jieba

    monkeypatch.setattr(search, "jieba_pickle", lambda: tmp_path / "dict.pickle")
    freq, total = search.read_jieba_pickle(search.write_jieba_pickle())
    reference = jieba.Tokenizer()
    reference.tmp_dir = str(tmp_path)  # jieba's own cache, not /tmp's
    reference.initialize()
    assert total == reference.total
    assert freq == reference.FREQ


def test_chinese_search_splits_chinese_with_jieba_and_code_without():
    search.load_jieba()
    lang = search.ChineseSearch({})
    assert lang.split("y = torch.sin(x) * 0.0014") == ["y", "torch", "sin", "x", "0", "0014"]
    words = lang.split("二阶导数用 torch.autograd.grad 求")
    assert "导数" in words and "torch" in words and "autograd" in words


# -- Catalogs ------------------------------------------------------------------


def test_msgfmt_compiles_what_sphinx_would(tmp_path):
    """The check compiles the catalogs with GNU msgfmt; Sphinx would use Babel.
    Both must give a reader the same translations."""
    import gettext

    from babel.messages.mofile import write_mo
    from babel.messages.pofile import read_po

    for po in CATALOGS:
        msgfmt_mo, babel_mo = tmp_path / "msgfmt.mo", tmp_path / "babel.mo"
        subprocess.run(["msgfmt", "-o", str(msgfmt_mo), str(po)], check=True)
        with po.open("rb") as f:
            catalog = read_po(f)
        with babel_mo.open("wb") as f:
            write_mo(f, catalog)
        with msgfmt_mo.open("rb") as a, babel_mo.open("rb") as b:
            ours, sphinxs = gettext.GNUTranslations(a), gettext.GNUTranslations(b)
        messages = {k: v for k, v in ours._catalog.items() if k}  # "" is the header
        assert messages == {k: v for k, v in sphinxs._catalog.items() if k}, po.name
        assert len(messages) > 0


def test_the_check_leaves_compiled_catalogs_that_sphinx_keeps(tmp_path):
    from sphinx.util.i18n import CatalogRepository

    i18n.compile_catalogs("zh_CN", tmp_path)
    repo = CatalogRepository(str(tmp_path.parent), [tmp_path.name], "zh_CN", "utf-8")
    catalogs = list(repo.catalogs)
    assert len(catalogs) == len(list((ROOT / "locale" / "zh_CN").rglob("*.po")))
    assert not [c.domain for c in catalogs if c.is_outdated()]
