"""Unit tests of tools/site.py: the landing page lists every language of the
site, linked and named in its own language, and without an address it is
relative (with SITE_URL, tests/test_publishing.py checks it on a build).
"""

from __future__ import annotations

from tools import site as landing


def test_landing_page_lists_every_language():
    page = landing.landing_page(["en", "zh_CN", "ja"])
    for code in ["en", "zh_CN", "ja"]:
        assert f'href="{code}/index.html"' in page
    assert 'hreflang="zh-CN"' in page and "简体中文" in page
    assert '["en", "zh_CN", "ja"]' in page


def test_the_landing_page_is_relative_without_an_address():
    page = landing.landing_page(["en", "zh_CN"])
    assert 'rel="canonical"' not in page and "://" not in page.split("<script>")[0]
