"""Translated downloads: a Chinese reader's script and notebook read in Chinese.

sphinx-gallery writes one .py, .ipynb and .zip per lesson, in English. In a
translated build, each lesson's prose (the docstring and the ``# %%`` text
cells) is translated from that page's catalog, in a process of its own while
the pages are written, and once they are, the three downloads in the output
are replaced. Code cells, and comments inside code, are left exactly as they
are.

The translation works on paragraphs, headings and list items, the units that
gettext extracted from the page, so the lookup key is the same text.
"""

from __future__ import annotations

import io
import re
import unicodedata
import zipfile
from collections.abc import Callable
from pathlib import Path

HEADING = re.compile(r"^([=\-~^\"'`#*+])\1{2,}\s*$")
BULLET = re.compile(r"^(\s*)([*+-]|\d+\.|#\.)\s+")


def width(text: str) -> int:
    """Display width: a wide (CJK) character counts as two columns."""
    return sum(2 if unicodedata.east_asian_width(ch) in "WF" else 1 for ch in text)


def translate_rest(text: str, translate: Callable[[str], str]) -> str:
    """Translate the reST *text* chunk by chunk (paragraphs, titles, items)."""
    chunks = re.split(r"\n[ \t]*\n", text)
    return "\n\n".join(_translate_chunk(chunk, translate) for chunk in chunks)


def _key(lines: list[str]) -> str:
    return " ".join(line.strip() for line in lines if line.strip())


def _translate_chunk(chunk: str, translate: Callable[[str], str]) -> str:
    lines = chunk.split("\n")
    body = [ln for ln in lines if ln.strip()]
    if not body or body[0].startswith((" ", "\t", "..")) or body[0].lstrip().startswith(">>>"):
        return chunk  # directive, label, comment, indented block
    if len(body) == 2 and HEADING.match(body[1]):
        title = translate(body[0].strip())
        return title + "\n" + body[1][0] * max(width(title), 3)
    if BULLET.match(body[0]):
        items: list[list[str]] = []
        for line in body:
            if BULLET.match(line) and not line.startswith((" ", "\t")):
                items.append([line])
            else:
                items[-1].append(line)
        out = []
        for item in items:
            marker = BULLET.match(item[0])
            text = [item[0][marker.end() :]] + item[1:]
            out.append(marker.group(0) + translate(_key(text)))
        return "\n".join(out)
    return translate(_key(body))


def translate_script(source: str, translate: Callable[[str], str]) -> str:
    """Translate the prose of a sphinx-gallery script; keep its code."""
    out: list[str] = []
    lines = source.split("\n")
    i = 0
    # The module docstring.
    while i < len(lines) and not lines[i].lstrip().startswith(('r"""', '"""')):
        out.append(lines[i])
        i += 1
    if i < len(lines):
        opener = lines[i]
        start = i + 1
        end = next(j for j in range(start, len(lines)) if lines[j].rstrip().endswith('"""'))
        inner = lines[start:end]
        out.append(opener)
        out.extend(translate_rest("\n".join(inner), translate).split("\n"))
        out.append(lines[end])
        i = end + 1
    # Text cells: "# %%" followed by comment lines.
    while i < len(lines):
        line = lines[i]
        out.append(line)
        i += 1
        if line.startswith("# %%"):
            j = i
            while j < len(lines) and (lines[j].startswith("# ") or lines[j] == "#"):
                j += 1
            text = "\n".join(ln[2:] if ln.startswith("# ") else "" for ln in lines[i:j])
            translated = translate_rest(text, translate)
            out.extend(("# " + ln).rstrip() for ln in translated.split("\n"))
            i = j
    return "\n".join(out)


def catalog_lookup(po_path: Path) -> Callable[[str], str]:
    """msgid -> msgstr for the translated, non-fuzzy entries of *po_path*."""
    import polib

    table = {}
    if po_path.exists():
        for entry in polib.pofile(str(po_path)).translated_entries():
            table[" ".join(entry.msgid.split())] = entry.msgstr
    return lambda text: table.get(" ".join(text.split()), text)


def notebook_json(script: Path, gallery_conf: dict, target_dir: Path) -> str:
    import json

    from sphinx_gallery.notebook import jupyter_notebook
    from sphinx_gallery.py_source_parser import split_code_and_text_blocks

    _, blocks = split_code_and_text_blocks(script)
    return json.dumps(jupyter_notebook(blocks, gallery_conf, target_dir), indent=2)


def zip_bytes(files: dict[str, bytes]) -> bytes:
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w", zipfile.ZIP_DEFLATED) as zf:
        for name in sorted(files):
            info = zipfile.ZipInfo(name, date_time=(1980, 1, 1, 0, 0, 0))
            info.compress_type = zipfile.ZIP_DEFLATED
            info.external_attr = 0o644 << 16
            zf.writestr(info, files[name])
    return buf.getvalue()


def translated_downloads(lessons: Path, catalogs: Path, gallery_conf: dict, out: Path) -> None:
    """Write each lesson's translated .py, .ipynb and .zip into *out*."""
    for script in sorted(lessons.glob("[0-9][0-9]_*.py")):
        translate = catalog_lookup(catalogs / "lessons" / f"{script.stem}.po")
        translated = translate_script(script.read_text(encoding="utf-8"), translate)
        folder = out / script.stem
        folder.mkdir(parents=True)
        (folder / script.name).write_text(translated, encoding="utf-8")
        notebook = notebook_json(folder / script.name, gallery_conf, script.parent)
        payload = {script.name: translated.encode(), f"{script.stem}.ipynb": notebook.encode()}
        payload[f"{script.stem}.zip"] = zip_bytes(dict(payload))
        for name, data in payload.items():
            (folder / name).write_bytes(data)


def _staging(app) -> Path:
    return Path(app.outdir) / ".translated"


def _translated_build(app) -> bool:
    from ext.i18n import SOURCE_LANGUAGE

    return app.builder.format == "html" and app.config.language != SOURCE_LANGUAGE


def on_write_started(app, builder) -> None:
    """Make the downloads in a process of their own, from now on.

    Sphinx's main process spends the next moments on work that one core does
    alone (the theme's files, the first page); the other core makes the
    downloads meanwhile instead of after the last page.
    """
    import multiprocessing
    import shutil

    from ext.i18n import LOCALE
    from ext.search import wait_for_jieba

    if not _translated_build(app):
        return
    wait_for_jieba()  # fork no process while a thread runs (it is done by now)
    staging = _staging(app)
    shutil.rmtree(staging, ignore_errors=True)
    args = (
        Path(app.srcdir) / "lessons",
        LOCALE / app.config.language / "LC_MESSAGES",
        app.config.sphinx_gallery_conf,
        staging,
    )
    process = multiprocessing.get_context("fork").Process(
        target=translated_downloads, args=args, name="translated-downloads"
    )
    process.start()
    app._translated_downloads = process


def on_build_finished(app, exception) -> None:
    """Put the translated downloads where Sphinx put the English ones."""
    import shutil

    from sphinx.errors import ExtensionError

    process = getattr(app, "_translated_downloads", None)
    if process is None:
        return
    process.join()
    del app._translated_downloads
    staging = _staging(app)
    try:
        if exception is not None:
            return
        if process.exitcode != 0:
            raise ExtensionError(
                f"making the translated downloads failed (exit status {process.exitcode}; "
                "its traceback is above)"
            )
        for folder in sorted(p for p in staging.iterdir() if p.is_dir()):
            for made in sorted(folder.iterdir()):
                entry = app.env.dlfiles.get(Path("lessons", made.name))
                if entry is None:
                    continue
                target = Path(app.outdir) / "_downloads" / entry[1]
                if target.exists():
                    target.write_bytes(made.read_bytes())
    finally:
        shutil.rmtree(staging, ignore_errors=True)


def setup(app):
    app.connect("write-started", on_write_started)
    app.connect("build-finished", on_build_finished)
    return {"parallel_read_safe": True, "parallel_write_safe": True}
