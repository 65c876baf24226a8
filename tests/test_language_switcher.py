"""ext/pages/language_switcher.py, on the built site: every page links to
itself in every language (tests/test_browser.py clicks the switcher; with
SITE_URL, tests/test_publishing.py checks the absolute links).
"""

from __future__ import annotations

import re

import pytest
from conftest import LANGUAGES

pytestmark = pytest.mark.build


@pytest.mark.parametrize("lang", LANGUAGES)
def test_every_page_links_its_translations(site, lang):
    for page in site.pages(lang):
        html = page.read_text(encoding="utf-8")
        rel = page.relative_to(site.html).as_posix()
        alternates = re.findall(r'<link rel="alternate" hreflang="([^"]+)" href="([^"]+)"', html)
        langs = {code for code, _ in alternates}
        assert {c.replace("_", "-") for c in LANGUAGES} | {"x-default"} <= langs, rel
        for _, href in alternates:
            assert (page.parent / href).resolve().is_file(), (rel, href)
