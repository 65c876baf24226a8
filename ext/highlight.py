"""Highlight each code block once, for every language.

A lesson's code and printed output are the same on the English and the
Chinese page, and Pygments spends about a third of a second of CPU time on
them per language build. The HTML it produces is kept in a cache shared by the
languages (``-D highlight_cache=DIR``; the Makefile uses
``_build/cache/highlight``), so the second language, and every rebuild of a
changed page, reads what the first one wrote.

An entry is named after everything that shapes the HTML: the code, its lexer
name and options, the formatter's options and style, and the versions of
Pygments and Sphinx. A block that made Sphinx warn (a lexing error) is never
cached, so the warning comes back on every build. Without the option nothing
is cached.
"""

from __future__ import annotations

import hashlib
import json
import logging
import os
import tempfile
from pathlib import Path

# The logger Sphinx's highlighter warns through (Sphinx prefixes "sphinx.").
_LOGGER = "sphinx.sphinx.highlighting"


class _Warned(logging.Filter):
    def __init__(self) -> None:
        super().__init__()
        self.count = 0

    def filter(self, record: logging.LogRecord) -> bool:
        self.count += 1
        return True


def entry_key(bridge, source: str, lang: str, opts, force: bool, kwargs: dict) -> str:
    import pygments
    import sphinx

    shape = [
        source,
        lang,
        opts or {},
        force,
        {k: v for k, v in kwargs.items() if k != "location"},
        bridge.dest,
        bridge.formatter.__name__,
        bridge.formatter_args,
        pygments.__version__,
        sphinx.__version__,
    ]
    text = json.dumps(shape, sort_keys=True, default=repr)
    return hashlib.sha256(text.encode("utf-8", "surrogatepass")).hexdigest()


def cached(bridge, folder: Path):
    """Wrap *bridge*.highlight_block with the cache in *folder*."""
    highlight_block = bridge.highlight_block
    warned = _Warned()
    logging.getLogger(_LOGGER).addFilter(warned)

    def highlight_cached(source, lang, opts=None, force=False, location=None, **kwargs):
        key = entry_key(bridge, source, lang, opts, force, kwargs)
        path = folder / key[:2] / f"{key}.html"
        try:
            return path.read_text(encoding="utf-8")
        except OSError:
            pass
        before = warned.count
        html = highlight_block(source, lang, opts, force, location, **kwargs)
        if warned.count == before:
            _store(path, html)
        return html

    bridge.highlight_block = highlight_cached


def _store(path: Path, html: str) -> None:
    """Write an entry atomically: two builds may store the same one at once."""
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        fd, tmp = tempfile.mkstemp(dir=path.parent, suffix=".tmp")
        with os.fdopen(fd, "w", encoding="utf-8") as out:
            out.write(html)
        os.replace(tmp, path)
    except OSError:
        pass  # a cache that cannot be written is only a slower build


def on_builder_inited(app) -> None:
    folder = app.config.highlight_cache
    if not folder or getattr(app.builder, "highlighter", None) is None:
        return
    folder = Path(folder).resolve()
    for name in ("highlighter", "dark_highlighter"):
        bridge = getattr(app.builder, name, None)
        if bridge is not None:
            cached(bridge, folder)


def setup(app):
    # Where the output is kept, not what it is: changing it rebuilds nothing.
    app.add_config_value("highlight_cache", "", "", types=[str])
    app.connect("builder-inited", on_builder_inited)
    return {"parallel_read_safe": True, "parallel_write_safe": True}
