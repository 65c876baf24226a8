"""Unit tests of ext/translation/search.py: its shim for Sphinx's Chinese search, which
fails here when the installed Sphinx stops naming a stemmer it does not ship
(the day the shim can go).
"""

from __future__ import annotations


def test_sphinx_still_names_a_chinese_stemmer_it_does_not_ship():
    """sphinx-doc/sphinx#14229: when this fails, the installed Sphinx names the
    stemmer it ships; delete ChineseSearch from ext/translation/search.py."""
    from sphinx.search.zh import SearchChinese

    from ext.translation.search import ChineseSearch

    assert (SearchChinese.language_name, SearchChinese.js_stemmer_rawcode) == (
        "Chinese",
        "english-stemmer.js",
    ), "Sphinx fixed its Chinese stemmer name: remove the shim in ext/translation/search.py"
    assert ChineseSearch.language_name + "Stemmer" == "EnglishStemmer"
