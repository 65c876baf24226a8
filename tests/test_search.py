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


def test_chinese_search_keeps_one_letter_latin_words_as_english_does():
    """The search page splits "don't" into "don" and "t": a Chinese page must
    have the "t" that an English page has, or a pasted message that also holds
    "you're" finds nothing (tests/test_browser.py pastes every error message)."""
    from sphinx.search.en import SearchEnglish
    from sphinx.search.zh import SearchChinese

    from ext.translation.search import ChineseSearch

    chinese = ChineseSearch({})
    assert SearchEnglish({}).word_filter("t") and chinese.word_filter("t")
    assert not SearchChinese({}).word_filter("t"), "Sphinx keeps them now: drop word_filter"
    assert chinese.word_filter("re") and chinese.word_filter("反向")
    assert (
        not chinese.word_filter("")
        and not chinese.word_filter("的")
        and not chinese.word_filter("7")
    )
