"""ext/pages/meta.py, on the built site: every page has a heading and a
description in its own language (the search page and the index of terms too).
"""

from __future__ import annotations

import re

import pytest
from conftest import LANGUAGES

pytestmark = pytest.mark.build


@pytest.mark.parametrize("lang", LANGUAGES)
def test_every_page_has_a_heading_and_a_description_in_its_language(site, lang):
    for page in site.pages(lang):
        text = page.read_text(encoding="utf-8")
        rel = page.relative_to(site.html).as_posix()
        assert re.search(r"<article\b.*?<h1\b", text, re.S), f"{rel}: no h1"
        m = re.search(r'<meta name="description" content="([^"]*)"', text)
        description = m[1] if m else ""
        assert len(description) >= 20, (rel, description)
        assert lang == "en" or re.search(r"[\u3400-\u9fff]", description), (rel, description)
