"""Translated downloads: a Chinese reader's script and notebook read in Chinese.

sphinx-gallery writes one .py, .ipynb and .zip per lesson, in English, and
Sphinx copies them into the output's ``_downloads/``. When a translated build
has finished, each lesson's prose (the docstring and the ``# %%`` text cells)
is translated from that page's catalog and the three files in ``_downloads/``
are replaced. Code cells, and comments inside code, are left exactly as they
are. The notebook is made by sphinx-gallery's documented converter
(:func:`sphinx_gallery.notebook.jupyter_notebook`, as its command
``sphinx_gallery_py2jupyter`` does), from the translated script.

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


def notebook_json(script: Path) -> str:
    """The notebook of *script*, made as sphinx-gallery makes the English one."""
    import copy
    import json

    from sphinx_gallery.gen_gallery import DEFAULT_GALLERY_CONF
    from sphinx_gallery.notebook import jupyter_notebook
    from sphinx_gallery.py_source_parser import split_code_and_text_blocks

    _, blocks = split_code_and_text_blocks(script)
    notebook = jupyter_notebook(blocks, copy.deepcopy(DEFAULT_GALLERY_CONF), script.parent)
    return json.dumps(notebook, indent=2)


def zip_bytes(files: dict[str, bytes]) -> bytes:
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w", zipfile.ZIP_DEFLATED) as zf:
        for name in sorted(files):
            info = zipfile.ZipInfo(name, date_time=(1980, 1, 1, 0, 0, 0))
            info.compress_type = zipfile.ZIP_DEFLATED
            info.external_attr = 0o644 << 16
            zf.writestr(info, files[name])
    return buf.getvalue()


def translated_files(script: Path, translate: Callable[[str], str], tmp: Path) -> dict[str, bytes]:
    """The translated .py, .ipynb and .zip of one lesson, by file name."""
    translated = translate_script(script.read_text(encoding="utf-8"), translate)
    copy = tmp / script.name
    copy.write_text(translated, encoding="utf-8")
    files = {script.name: translated.encode(), f"{script.stem}.ipynb": notebook_json(copy).encode()}
    files[f"{script.stem}.zip"] = zip_bytes(dict(files))
    return files


def replace_downloads(app, exception) -> None:
    """Put each lesson's translated downloads where Sphinx copied the English ones."""
    import tempfile

    from ext.languages import LOCALE, SOURCE_LANGUAGE

    if exception is not None or app.builder.format != "html":
        return
    if app.config.language == SOURCE_LANGUAGE:
        return
    downloads = Path(app.outdir) / "_downloads"
    catalogs = LOCALE / app.config.language / "LC_MESSAGES" / "lessons"
    with tempfile.TemporaryDirectory() as tmp:
        for script in sorted((Path(app.srcdir) / "lessons").glob("[0-9][0-9]_*.py")):
            translate = catalog_lookup(catalogs / f"{script.stem}.po")
            for name, data in translated_files(script, translate, Path(tmp)).items():
                for target in downloads.glob(f"*/{name}"):
                    if target.read_bytes() != data:
                        target.write_bytes(data)


def setup(app):
    app.connect("build-finished", replace_downloads)
    return {"parallel_read_safe": True, "parallel_write_safe": True}
