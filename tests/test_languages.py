"""Unit tests of ext/translation/languages.py: the language codes the site can build, and
the one error for an unknown code or for a language without catalogs.
"""

from __future__ import annotations

import pytest

from ext.translation import languages


@pytest.mark.parametrize("code", ["en", "zh_CN", "ja", "fr"])
def test_known_language_codes(code, tmp_path):
    languages.check_language(code, tmp_path, need_catalogs=False)


@pytest.mark.parametrize("code", ["xx", "zh-Hant-XX-bad", ""])
def test_unknown_language_codes(code, tmp_path):
    with pytest.raises(languages.LanguageError, match="unknown language code"):
        languages.check_language(code, tmp_path)


def test_a_language_without_catalogs_says_run_update_po(tmp_path):
    with pytest.raises(languages.LanguageError, match="make update-po"):
        languages.check_language("ja", tmp_path)
