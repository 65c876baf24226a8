"""The search index, in every language, built without waste.

Sphinx fills the search index in its main process while the pages are
written, one page after another, so every second spent here is a second of
wall time. Three things made it slow; each is cut here without changing what a
reader finds:

* Chinese pages are split into words by jieba. jieba loads its dictionary
  (half a million entries) from a marshal file in 0.5 s. The same dictionary
  is kept as a pickle in the virtual environment, next to the jieba it was
  made from, and loads in about 0.15 s, in a thread, while the pages are
  read in other processes. ``make`` writes it when it installs the
  requirements; a build that finds none makes it once.
* jieba was also given every text of a Chinese page, code and printed tensors
  included, which only put numbers such as ``0.0014`` into the index. A text
  without a single Chinese character now goes the Latin way only, as it does
  on an English page; a text with Chinese in it goes to jieba as before.
* Words are stemmed once per process instead of once per page.

The Chinese search also gets the name of the stemmer Sphinx really ships
(see :class:`ChineseSearch`) and jieba learns the glossary's words.
"""

from __future__ import annotations

import functools
import logging
import os
import pickle
import re
import sys
import tempfile
import threading
from pathlib import Path

from sphinx.search.en import SearchEnglish
from sphinx.search.zh import SearchChinese

# CJK Unified Ideographs, extension A, and compatibility ideographs.
CHINESE = re.compile(r"[\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff]")


# --------------------------------------------------------------------------
# jieba's dictionary


def jieba_pickle() -> Path:
    """Where the pickled dictionary of the installed jieba lives.

    The name holds jieba's version and its dictionary file's size and time,
    so an upgraded jieba never reads a stale pickle.
    """
    import jieba

    stat = (Path(jieba.__file__).parent / jieba.DEFAULT_DICT_NAME).stat()
    key = f"{jieba.__version__}-{stat.st_size}-{stat.st_mtime_ns}"
    return Path(sys.prefix) / "var" / "cache" / "jieba" / f"dict-{key}.pickle"


SHARD = 1 << 15  # entries per pickle in the file: see read_jieba_pickle


def write_jieba_pickle() -> Path:
    """Build jieba's prefix dictionary and keep it as pickles (atomically).

    The file holds the total, the number of shards, then the dictionary in
    shards of SHARD entries, each a pickle of its own.
    """
    import jieba

    path = jieba_pickle()
    freq, total = jieba.Tokenizer.gen_pfdict(jieba.dt.get_dict_file())
    items = list(freq.items())
    shards = [dict(items[i : i + SHARD]) for i in range(0, len(items), SHARD)]
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=path.parent, suffix=".tmp")
    with os.fdopen(fd, "wb") as out:
        pickle.dump((total, len(shards)), out, protocol=pickle.HIGHEST_PROTOCOL)
        for shard in shards:
            pickle.dump(shard, out, protocol=pickle.HIGHEST_PROTOCOL)
    os.chmod(tmp, 0o644)
    os.replace(tmp, path)
    return path


def read_jieba_pickle(path: Path) -> tuple[dict[str, int], int]:
    """The dictionary, shard by shard: a thread loading it lets go of the
    interpreter between shards (one pickle of the whole would hold it for a
    tenth of a second, and Sphinx could not start its workers meanwhile)."""
    freq: dict[str, int] = {}
    with path.open("rb") as f:
        total, count = pickle.load(f)
        for _ in range(count):
            freq.update(pickle.load(f))
    return freq, total


_loading: threading.Thread | None = None


def start_loading_jieba(app, env, docnames) -> None:
    """Load jieba's dictionary in a thread while the pages are read.

    Reading happens in worker processes (or, in a serial build, takes much
    longer than this), so the main process would otherwise sit idle now and
    load the dictionary later, when the writing waits for it.

    Sphinx forks its readers while this thread runs. That is safe here: the
    thread only unpickles strings and numbers into a new dict, and the only
    locks it takes are jieba's (the readers never segment text) and the
    logging module's (which logging itself resets in a forked child).
    """
    global _loading
    if app.config.language.startswith("zh") and app.builder.format == "html" and not _loading:
        _loading = threading.Thread(target=_load_in_background, name="load-jieba", daemon=True)
        _loading.start()


def wait_for_jieba() -> None:
    """Return once no thread is loading jieba (before a fork, say)."""
    if _loading is not None and _loading is not threading.current_thread():
        _loading.join()


def _load_in_background() -> None:
    # The main thread is about to start the readers: let it have the
    # interpreter back within half a millisecond, not Python's default 5 ms.
    interval = sys.getswitchinterval()
    sys.setswitchinterval(min(interval, 0.0005))
    try:
        load_jieba()
    finally:
        sys.setswitchinterval(interval)


def load_jieba() -> None:
    """Give jieba's default tokenizer its dictionary, from the pickle."""
    import jieba

    jieba.setLogLevel(logging.WARNING)
    tokenizer = jieba.dt
    wait_for_jieba()
    if tokenizer.initialized:
        return
    path = jieba_pickle()
    try:
        freq, total = read_jieba_pickle(path)
    except (OSError, EOFError, ValueError, TypeError, pickle.UnpicklingError):
        try:
            path = write_jieba_pickle()
        except OSError:  # a read-only environment: jieba's own cache then
            tokenizer.initialize()
            return
        freq, total = read_jieba_pickle(path)
    with tokenizer.lock:
        tokenizer.FREQ, tokenizer.total = freq, total
        tokenizer.initialized = True


# --------------------------------------------------------------------------
# Search languages


class _SharedStemmer:
    """A snowball stemmer whose answers are kept for the whole build."""

    def __init__(self, stemmer) -> None:
        self.stemWord = functools.lru_cache(maxsize=None)(stemmer.stemWord)


class EnglishSearch(SearchEnglish):
    def __init__(self, options: dict[str, str]) -> None:
        super().__init__(options)
        self.stemmer = _SharedStemmer(self.stemmer)


class ChineseSearch(SearchChinese):
    """Sphinx's Chinese search, faster, and with the right stemmer's name.

    Sphinx 9.0 gives Chinese pages the English stemmer (for Latin words) but
    writes ``window.Stemmer = ChineseStemmer`` into language_data.js, so the
    search page failed with "ChineseStemmer is not defined".
    """

    language_name = "English"

    def __init__(self, options: dict[str, str]) -> None:
        load_jieba()  # before Sphinx's __init__ reads the user dictionary
        super().__init__(options)
        self.stemmer = _SharedStemmer(self.stemmer)

    def split(self, input: str) -> list[str]:
        if CHINESE.search(input):
            return super().split(input)
        latin = self.latin1_letters.findall(input)
        self.latin_terms.update(latin)
        return latin


# --------------------------------------------------------------------------
# Sphinx side


def on_config_inited(app, config) -> None:
    if config.language.startswith("zh"):
        search_dictionary(config, (Path(app.srcdir) / config.locale_dirs[0]).resolve())


def search_dictionary(config, folder: Path) -> None:
    """Teach jieba the glossary, so that 反向传播 or 计算图 is one search term.

    Without it jieba splits them into 反向 + 传播 and 计算 + 图, and a search
    for the whole word finds nothing.
    """
    from ext.i18n import glossary_words

    folder.mkdir(parents=True, exist_ok=True)
    path = folder / "jieba-glossary.txt"
    text = "".join(f"{word} 100000 n\n" for word in glossary_words())
    if not path.exists() or path.read_text(encoding="utf-8") != text:
        path.write_text(text, encoding="utf-8")
    # Relative to the build's working directory, so the configuration (and
    # with it .buildinfo) does not depend on where the project lives.
    relative = os.path.relpath(path)
    config.html_search_options = {**(config.html_search_options or {}), "dict": relative}


def setup(app):
    app.add_search_language(EnglishSearch)
    app.add_search_language(ChineseSearch)
    # After ext.i18n has checked and mirrored the catalogs.
    app.connect("config-inited", on_config_inited, priority=600)
    app.connect("env-before-read-docs", start_loading_jieba)
    return {"parallel_read_safe": True, "parallel_write_safe": True}


if __name__ == "__main__":
    # `python -m ext.search`: make the pickle (the Makefile runs this once,
    # right after it installs the requirements).
    print(f"wrote {write_jieba_pickle()}")
