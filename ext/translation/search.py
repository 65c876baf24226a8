"""Search in Chinese: the glossary's words are whole search terms.

Sphinx splits Chinese text into words with jieba. jieba splits 反向传播
(backward pass) into 反向 + 传播 and 计算图 (computation graph) into 计算 + 图,
so a reader searching for the whole word would find nothing. The glossary's
Chinese words are given to jieba as a user dictionary, through Sphinx's
documented ``html_search_options = {"dict": PATH}`` for Chinese: conf.py
names the file, and a Chinese build writes it here from the table of terms.

One shim remains, :class:`ChineseSearch`, in three parts. Upstream limitation: Sphinx 9.0
gives Chinese pages the English stemmer (for Latin words) but writes
``window.Stemmer = ChineseStemmer`` into language_data.js, which no script
defines, so the search page fails with "ChineseStemmer is not defined"
(sphinx-doc/sphinx#14229, fixed in Sphinx 9.2 by #14416; 9.2 needs Python
3.13). The shim is Sphinx's own Chinese search under the name of the stemmer
it ships, registered with the documented ``app.add_search_language``.
``tests/test_search.py`` fails once the installed Sphinx no longer has the bug:
then delete the class's name and its registration.

Its second part keeps one-letter Latin words in the index, as the English search
does. Sphinx's Chinese search drops every one-letter word, while the search page
splits "don't" into "don" and "t", and accepts a page that lacks a short word only
if it lacks all of them: a pasted PyTorch message with "you're" (a short "re" that
the page has) and "don't" (a "t" that no Chinese page had) found nothing.

Its third part splits a Chinese query as the index was split: the search
page splits a query only at spaces and punctuation, so 自定义算子 was one
word, which the index (自定义, 算子) does not have, and found nothing. The
splitter is search-splitter.js, given through ``js_splitter_code``, the
documented attribute of a search language for its query splitter.
"""

from __future__ import annotations

import logging
from pathlib import Path

from sphinx.search.zh import SearchChinese


class ChineseSearch(SearchChinese):
    """Sphinx's Chinese search, naming the stemmer it uses (see above)."""

    language_name = "English"
    js_splitter_code = (Path(__file__).parent / "search-splitter.js").read_text(encoding="utf-8")

    def __init__(self, options: dict[str, str]) -> None:
        import jieba

        jieba.setLogLevel(logging.WARNING)  # not its DEBUG lines on every build
        super().__init__(options)

    def word_filter(self, stemmed_word: str) -> bool:
        """Sphinx's filter, and one-letter Latin words too (see above)."""
        one_letter = len(stemmed_word) == 1 and stemmed_word.isascii() and stemmed_word.isalpha()
        return one_letter or super().word_filter(stemmed_word)


def search_dictionary(app, config) -> None:
    """Write the glossary's words where html_search_options["dict"] says, for
    a Chinese build (the path is relative to the project, where make runs)."""
    from tools.catalogs import glossary_words

    name = (config.html_search_options or {}).get("dict")
    if not config.language.startswith("zh") or not name:
        return
    path = Path(app.confdir, name)
    text = "".join(f"{word} 100000 n\n" for word in glossary_words())
    path.parent.mkdir(parents=True, exist_ok=True)
    if not path.exists() or path.read_text(encoding="utf-8") != text:
        path.write_text(text, encoding="utf-8")


def setup(app):
    app.add_search_language(ChineseSearch)
    app.connect("config-inited", search_dictionary)
    return {"parallel_read_safe": True, "parallel_write_safe": True}
