"""Unit tests of ext/translation/theme_labels.py: the theme's labels are translated in the
page's chrome but never in its article, matched through HTML entities and
spaced as Chinese is, and the theme's catalog template lists the site's title,
its copyright and every label.
"""

from __future__ import annotations

import re

import polib


def test_theme_labels_are_translated_outside_the_article_only():
    from ext.translation.theme_labels import translate_chrome

    table = {"Back to top": "回到顶部", "Toggle navigation of %s": "展开或折叠 %s 的导航"}
    page = (
        '<a href="#">Back to top</a><input aria-label="Toggle navigation of 课程">'
        "<article><p>Back to top</p></article><span> Back to top </span>"
    )
    out = translate_chrome(page, table)
    assert out == (
        '<a href="#">回到顶部</a><input aria-label="展开或折叠 课程 的导航">'
        "<article><p>Back to top</p></article><span> 回到顶部 </span>"
    )


def test_theme_labels_match_through_html_entities():
    from ext.translation.theme_labels import translate_text

    table = {"Copyright © %s": "版权所有 © %s"}
    assert translate_text("Copyright &#169; 2026, us", table) == "版权所有 © 2026, us"


def test_the_credit_line_is_spaced_as_chinese_is():
    """Furo's footer, as its template writes it, translated label by label."""
    from ext.translation.theme_labels import translate_chrome

    table = {"Made with": "构建工具：", "and": "和", "'s": "的"}
    footer = "<div>\n  Made with <a>Sphinx</a> and <a>@pradyunsg</a>'s\n  \n  <a>Furo</a>\n</div>"
    out = translate_chrome(footer, table)
    text = re.sub(r"\s+", " ", re.sub(r"<[^>]+>", "", out)).strip()
    assert text == "构建工具：Sphinx 和 @pradyunsg 的 Furo"
    # A label that is neither: its spaces stay as the template wrote them.
    assert translate_chrome("<span> Back to top </span>", {"Back to top": "回到顶部"}) == (
        "<span> 回到顶部 </span>"
    )


def test_theme_template_lists_title_copyright_and_labels():
    from types import SimpleNamespace

    from ext.translation.theme_labels import SITE_STRINGS, THEME_STRINGS, pot_text

    config = SimpleNamespace(project="P", html_title="My site", copyright="2026, me")
    pot = polib.pofile(pot_text(config))
    assert [e.msgid for e in pot] == ["My site", "2026, me", *THEME_STRINGS, *SITE_STRINGS]
