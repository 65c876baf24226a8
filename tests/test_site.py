"""Unit tests of tools/site.py: the landing page lists every language of the
site, linked and named in its own language.
"""

from __future__ import annotations

from tools import site as landing


def test_landing_page_lists_every_language():
    page = landing.landing_page(["en", "zh_CN", "ja"])
    for code in ["en", "zh_CN", "ja"]:
        assert f'href="{code}/index.html"' in page
    assert 'hreflang="zh-CN"' in page and "简体中文" in page
    assert '["en", "zh_CN", "ja"]' in page
