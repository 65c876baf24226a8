"""Downloads that run as downloaded, in the page's language.

sphinx-gallery writes one .py, .ipynb and .zip per lesson, and Sphinx copies
them into the output's ``_downloads/``. They would not run on a reader's
machine as they are: the script is a copy of the source, with the hidden cell
that proves the exercise against ``gallery/solutions/`` (which a reader does
not have), and neither file says that the graphs need torchviz and Graphviz.
So when a build has finished, the three files of every lesson are made again
from the source, in the build's language, and replace the copies:

* what only the build needs goes: sphinx-gallery's hidden cells (between
  ``# sphinx_gallery_start_ignore`` and ``# sphinx_gallery_end_ignore``) and
  its configuration comments, with its own documented functions;
* in a translated build, the prose (the docstring and the ``# %%`` text
  cells) is translated from the page's catalog, and so are the comments and
  one-line docstrings in the code, exactly as on the page
  (ext/translation/code_comments.py); the code itself stays byte for byte;
* the solution of the lesson's exercise, a download of its own, carries its
  comments and docstrings in the page's language too;
* a note after the introduction names what the lesson needs besides PyTorch
  (never torch itself: the reader has the build they want), from the modules
  it imports, and for a lesson that draws graphs, Graphviz's ``dot``;
* the notebook (sphinx-gallery's documented converter,
  :func:`sphinx_gallery.notebook.jupyter_notebook`, as its command
  ``sphinx_gallery_py2jupyter`` does) opens with a ``%pip install`` cell for
  those packages, and its cross-references are links: a name of PyTorch's
  API to its documentation (the intersphinx inventory the pages use), a
  lesson or page to its address under ``html_baseurl``, or without one, a
  lesson to its notebook next to this one.

The translation works on paragraphs, headings and list items, the units that
gettext extracted from the page, so the lookup key is the same text.
"""

from __future__ import annotations

import ast
import io
import posixpath
import re
import textwrap
import unicodedata
import zipfile
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

from ext.translation import code_comments

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


# --------------------------------------------------------------------------
# What a reader needs


def reader_script(source: str) -> str:
    """*source* without what only the build needs: hidden cells, config comments."""
    from sphinx_gallery.py_source_parser import remove_config_comments, remove_ignore_blocks

    text = remove_config_comments(remove_ignore_blocks(source))
    return text.rstrip() + "\n"


def requirement_pins(path: Path) -> dict[str, str]:
    """name -> ``name==version`` for every exact pin in a requirements file."""
    pins = {}
    for line in path.read_text(encoding="utf-8").splitlines():
        m = re.match(r"^([A-Za-z0-9_.-]+)==(\S+)", line.strip())
        if m:
            pins[m[1].lower()] = m[0]
    return pins


def _imported(source: str) -> set[str]:
    found = set()
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Import):
            found.update(alias.name.split(".")[0] for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module and not node.level:
            found.add(node.module.split(".")[0])
    return found


def requirements(source: str, pins: dict[str, str]) -> list[str]:
    """What a reader who has PyTorch must install to run *source*.

    torchviz is pinned as the build pins it (its only release that draws
    these graphs); setuptools gives it the ``distutils`` that Python 3.12
    removed. numpy and setuptools are named without a version: ``pip`` then
    installs them only where they are missing, and never changes a reader's.
    """
    imported = _imported(source)
    needed = []
    if "torchviz" in imported:
        needed += [pins.get("torchviz", "torchviz"), "setuptools"]
    if "numpy" in imported:
        needed.append("numpy")
    return needed


def draws_graphs(source: str) -> bool:
    return "torchviz" in _imported(source)


def setup_note(needed: list[str], graphs: bool, label: Callable[[str], str]) -> str:
    """The note a downloaded lesson opens with (reST), in the build's language."""
    from ext.translation.theme_labels import GRAPHS_NEED_DOT, NEEDS

    if not needed:
        return ""
    command = "``pip install " + " ".join(needed) + "``"
    note = label(NEEDS) % command
    if graphs:
        second = label(GRAPHS_NEED_DOT)
        note += ("" if _wide(note[-1]) else " ") + second
    return note


def _wide(char: str) -> bool:
    return unicodedata.east_asian_width(char) in "WF"


def insert_note(script: str, note: str) -> str:
    """*script* with a text cell holding *note* right after its docstring."""
    if not note:
        return script
    lines = script.split("\n")
    start = next(i for i, ln in enumerate(lines) if ln.lstrip().startswith(('r"""', '"""')))
    end = next(j for j in range(start + 1, len(lines)) if lines[j].rstrip().endswith('"""'))
    if any(_wide(ch) for ch in note):  # as translate_script does: one line
        cell = ["", "# %%", "# " + note]
        return "\n".join(lines[: end + 1] + cell + lines[end + 1 :])
    # An inline literal is never broken across lines.
    atomic = re.sub(r"``[^`]+``", lambda m: m[0].replace(" ", "\0"), note)
    wrapped = textwrap.wrap(atomic, width=77, break_long_words=False, break_on_hyphens=False)
    cell = ["", "# %%", *("# " + ln.replace("\0", " ") for ln in wrapped)]
    return "\n".join(lines[: end + 1] + cell + lines[end + 1 :])


# --------------------------------------------------------------------------
# Cross-references in a notebook

ROLE = re.compile(
    r":(?:py:)?(?P<role>func|class|meth|attr|mod|exc|data|obj|ref|doc):`(?P<body>[^`]+)`"
)
PY_TYPES = ("function", "class", "method", "attribute", "module", "exception", "data")


@dataclass
class Linker:
    """Turns the roles of reST prose into Markdown links for a notebook.

    *api*: a name of the API -> its documentation's address; *labels*: a
    ``:ref:`` label -> (docname, anchor, title); *titles*: docname -> title;
    *baseurl*: ``html_baseurl`` ("" when the site has none).
    """

    api: dict[str, str]
    labels: dict[str, tuple[str, str, str]]
    titles: dict[str, str]
    baseurl: str = ""

    def page(self, docname: str, anchor: str = "") -> str | None:
        if self.baseurl:
            url = posixpath.join(self.baseurl, docname + ".html")
            return url + (f"#{anchor}" if anchor else "")
        m = re.fullmatch(r"lessons/(\d\d_[^/]+)", docname)
        return f"{m[1]}.ipynb" if m else None

    def link(self, m: re.Match) -> str:
        body = m["body"]
        explicit = re.fullmatch(r"(?s)(?P<title>.+?)\s*<(?P<target>[^<>]+)>", body)
        title, target = (explicit["title"], explicit["target"]) if explicit else (None, body)
        if m["role"] == "ref":
            docname, anchor, section = self.labels.get(target, (None, "", target))
            url = self.page(docname, anchor) if docname else None
            text = " ".join((title or section).split())
        elif m["role"] == "doc":
            docname = target.lstrip("/")
            url = self.page(docname)
            text = " ".join((title or self.titles.get(docname, docname)).split())
        else:
            name = target.lstrip("~").lstrip(".")
            url = self.api.get(name)
            shown = title or (name.rsplit(".", 1)[-1] if target.startswith("~") else name)
            text = f"`{shown}`"
        return f"[{text}]({url})" if url else text

    def __call__(self, text: str) -> str:
        return ROLE.sub(self.link, text)


def api_addresses(env) -> dict[str, str]:
    """Every Python name of the intersphinx inventories -> its address."""
    from sphinx.ext.intersphinx import InventoryAdapter

    found = {}
    for objtype, items in InventoryAdapter(env).main_inventory.items():
        if objtype.startswith("py:") and objtype[3:] in PY_TYPES:
            for name, item in items.items():
                found.setdefault(name, str(getattr(item, "uri", None) or item[2]))
    return found


def sphinx_linker(app) -> Linker:
    """The :class:`Linker` of a build: its inventories, labels and titles."""
    std = app.env.domains.standard_domain
    labels = {name: (doc, anchor, title) for name, (doc, anchor, title) in std.labels.items()}
    titles = {doc: node.astext() for doc, node in app.env.titles.items()}
    return Linker(api_addresses(app.env), labels, titles, app.config.html_baseurl or "")


# --------------------------------------------------------------------------
# The files


def notebook_json(script: Path, needed: list[str] = (), link: Callable[[str], str] = str) -> str:
    """The notebook of *script*, made as sphinx-gallery makes the English one,
    opening with a cell that installs *needed*, its prose passed through *link*."""
    import copy
    import json

    from sphinx_gallery.gen_gallery import DEFAULT_GALLERY_CONF
    from sphinx_gallery.notebook import jupyter_notebook
    from sphinx_gallery.py_source_parser import split_code_and_text_blocks

    _, blocks = split_code_and_text_blocks(script)
    blocks = [b._replace(content=link(b.content)) if b.type == "text" else b for b in blocks]
    conf = copy.deepcopy(DEFAULT_GALLERY_CONF)
    if needed:
        conf["first_notebook_cell"] = "%pip install " + " ".join(needed)
    notebook = jupyter_notebook(blocks, conf, script.parent)
    return json.dumps(notebook, indent=2, ensure_ascii=False) + "\n"


def zip_bytes(files: dict[str, bytes]) -> bytes:
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w", zipfile.ZIP_DEFLATED) as zf:
        for name in sorted(files):
            info = zipfile.ZipInfo(name, date_time=(1980, 1, 1, 0, 0, 0))
            info.compress_type = zipfile.ZIP_DEFLATED
            info.external_attr = 0o644 << 16
            zf.writestr(info, files[name])
    return buf.getvalue()


@dataclass
class Reader:
    """What the downloads of one build are made with."""

    translate: Callable[[str], str] | None = None  # None: the source language
    label: Callable[[str], str] = lambda msgid: msgid
    link: Callable[[str], str] = lambda text: text
    pins: dict[str, str] = field(default_factory=dict)


def reader_files(script: Path, reader: Reader, tmp: Path) -> dict[str, bytes]:
    """The .py, .ipynb and .zip of one lesson as a reader downloads them."""
    source = reader_script(script.read_text(encoding="utf-8"))
    needed = requirements(source, reader.pins)
    note = setup_note(needed, draws_graphs(source), reader.label)
    if reader.translate is not None:
        source = translate_script(source, reader.translate)
        # The comments and docstrings in the code, as on the page: the prose
        # is Chinese by now, so only the code's English texts can match.
        source = code_comments.translate(source, reader.translate)
    text = insert_note(source, note)
    copy = tmp / script.name
    copy.write_text(text, encoding="utf-8")
    files = {
        script.name: text.encode(),
        f"{script.stem}.ipynb": notebook_json(copy, needed, reader.link).encode(),
    }
    files[f"{script.stem}.zip"] = zip_bytes(dict(files))
    return files


def replace_downloads(app, exception) -> None:
    """Put each lesson's downloads, made for readers in the build's language,
    where Sphinx copied sphinx-gallery's."""
    import tempfile

    from ext.lessons.exercises import solution_file
    from ext.translation.languages import LOCALE, ROOT, SOURCE_LANGUAGE
    from ext.translation.theme_labels import label

    if exception is not None or app.builder.format != "html":
        return
    downloads = Path(app.outdir) / "_downloads"
    catalogs = LOCALE / app.config.language / "LC_MESSAGES" / "lessons"
    pins = requirement_pins(ROOT / "requirements.txt")
    link = sphinx_linker(app)
    with tempfile.TemporaryDirectory() as tmp:
        for script in sorted((Path(app.srcdir) / "lessons").glob("[0-9][0-9]_*.py")):
            reader = Reader(label=label, link=link, pins=pins)
            if app.config.language != SOURCE_LANGUAGE:
                reader.translate = catalog_lookup(catalogs / f"{script.stem}.po")
            files = reader_files(script, reader, Path(tmp))
            # The exercise's solution, offered on the same page: its comments
            # and docstrings in the page's language too.
            solution = solution_file(f"lessons/{script.stem}")
            if solution is not None:
                code = solution.read_text(encoding="utf-8")
                if reader.translate is not None:
                    code = code_comments.translate(code, reader.translate)
                files[solution.name] = code.encode()
            for name, data in files.items():
                for target in downloads.glob(f"*/{name}"):
                    if target.read_bytes() != data:
                        target.write_bytes(data)


def setup(app):
    app.connect("build-finished", replace_downloads)
    return {"parallel_read_safe": True, "parallel_write_safe": True}
