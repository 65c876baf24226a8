"""Downloads that run as downloaded, in the page's language.

sphinx-gallery writes a .py, .ipynb and .zip per lesson, and Sphinx copies
them into ``_downloads/``. As they are, they would not run on a reader's
machine: the script keeps the hidden cell that proves the exercise against
``gallery/solutions/`` (which a reader does not have), and neither file says
that the graphs need torchviz and Graphviz. So when a build has finished,
the three files of every lesson are made again from the source, in the
build's language, and replace the copies:

* sphinx-gallery's hidden cells and configuration comments go, with its own
  functions;
* in a translated build, the prose (the docstring and the ``# %%`` text
  cells) comes from the page's catalog, and so do the comments and one-line
  docstrings in the code, as on the page (ext/translation/code_comments.py);
  the code stays byte for byte. So does the exercise's solution, offered on
  the same page;
* a note after the introduction names what the lesson needs besides PyTorch
  (never torch: the reader has the build they want), from its imports;
* the notebook, made by sphinx-gallery's converter as its command
  ``sphinx_gallery_py2jupyter`` does, opens with a ``%pip install`` cell, and
  its roles become links: PyTorch's API to its documentation (the pages'
  intersphinx inventory), a lesson or page to its address under
  ``html_baseurl``, or without one, a lesson to its notebook next to this one.
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
from dataclasses import dataclass
from pathlib import Path

from ext.translation import code_comments

HEADING = re.compile(r"^([=\-~^\"'`#*+])\1{2,}\s*$")
BULLET = re.compile(r"^(\s*)([*+-]|\d+\.|#\.)\s+")


def wide(char: str) -> bool:
    """A wide (CJK) character, two columns on a screen."""
    return unicodedata.east_asian_width(char) in "WF"


def docstring_lines(lines: list[str]) -> tuple[int, int]:
    """The first and the last line of a script's docstring, counted from 0."""
    docstring = ast.parse("\n".join(lines)).body[0]
    return docstring.lineno - 1, docstring.end_lineno - 1


# --------------------------------------------------------------------------
# Translation


def translate_rest(text: str, translate: Callable[[str], str]) -> str:
    """Translate the reST *text* by the units gettext extracted from the page
    (paragraphs, titles, list items), so that a unit's text is its msgid."""
    return "\n\n".join(_translate_chunk(c, translate) for c in re.split(r"\n[ \t]*\n", text))


def _key(lines: list[str]) -> str:
    return " ".join(line.strip() for line in lines if line.strip())


def _translate_chunk(chunk: str, translate: Callable[[str], str]) -> str:
    body = [ln for ln in chunk.split("\n") if ln.strip()]
    if not body or body[0].startswith((" ", "\t", "..", ">>>")):
        return chunk  # directive, label, comment, indented block
    if len(body) == 2 and HEADING.match(body[1]):
        title = translate(body[0].strip())
        return title + "\n" + body[1][0] * max(sum(2 if wide(ch) else 1 for ch in title), 3)
    if not BULLET.match(body[0]):
        return translate(_key(body))
    items: list[list[str]] = []
    for line in body:
        if BULLET.match(line) and not line.startswith((" ", "\t")):
            items.append([line])
        else:
            items[-1].append(line)
    out = []
    for first, *rest in items:
        marker = BULLET.match(first)
        out.append(marker[0] + translate(_key([first[marker.end() :], *rest])))
    return "\n".join(out)


def translate_script(source: str, translate: Callable[[str], str]) -> str:
    """Translate the prose of a sphinx-gallery script; keep its code."""
    lines = source.split("\n")
    start, end = docstring_lines(lines)
    out = lines[: start + 1]
    out += translate_rest("\n".join(lines[start + 1 : end]), translate).split("\n")
    i = end
    while i < len(lines):
        out.append(lines[i])
        i += 1
        if out[-1].startswith("# %%"):  # a text cell: the comment lines that follow
            j = i
            while j < len(lines) and (lines[j].startswith("# ") or lines[j] == "#"):
                j += 1
            text = translate_rest("\n".join(ln[2:] for ln in lines[i:j]), translate)
            out += [("# " + ln).rstrip() for ln in text.split("\n")]
            i = j
    return "\n".join(out)


# --------------------------------------------------------------------------
# What a reader needs


def reader_script(source: str) -> str:
    """*source* without what only the build needs: hidden cells, config comments."""
    from sphinx_gallery.py_source_parser import remove_config_comments, remove_ignore_blocks

    return remove_config_comments(remove_ignore_blocks(source)).rstrip() + "\n"


def imported_modules(source: str) -> set[str]:
    found = set()
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Import):
            found.update(alias.name.split(".")[0] for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module and not node.level:
            found.add(node.module.split(".")[0])
    return found


def requirements(imported: set[str]) -> list[str]:
    """What a reader who has PyTorch must install to run a lesson that
    imports the modules *imported*.

    torchviz is pinned as the build has it (its only release that draws these
    graphs); setuptools gives it the ``distutils`` that Python 3.12 removed.
    numpy and setuptools are named without a version: ``pip`` then installs
    them only where they are missing, and never changes a reader's.
    """
    from importlib.metadata import version

    needed = [f"torchviz=={version('torchviz')}", "setuptools"] if "torchviz" in imported else []
    return needed + (["numpy"] if "numpy" in imported else [])


def add_note(script: str, needed: list[str], graphs: bool, label: Callable[[str], str]) -> str:
    """*script* with a text cell right after its docstring that names what
    the lesson needs (*needed*, and Graphviz for *graphs*), in the language
    of *label*."""
    from ext.translation.theme_labels import GRAPHS_NEED_DOT, NEEDS

    if not needed:
        return script
    note = label(NEEDS) % ("``pip install " + " ".join(needed) + "``")
    if graphs:  # no space after a full stop such as Chinese 。
        note += ("" if wide(note[-1]) else " ") + label(GRAPHS_NEED_DOT)
    if any(wide(ch) for ch in note):  # as translate_script writes it: one line
        text = [note]
    else:  # wrapped; an inline literal is never broken across lines
        atomic = re.sub(r"``[^`]+``", lambda m: m[0].replace(" ", "\0"), note)
        wrapped = textwrap.wrap(atomic, width=77, break_long_words=False, break_on_hyphens=False)
        text = [line.replace("\0", " ") for line in wrapped]
    lines = script.split("\n")
    end = docstring_lines(lines)[1]
    cell = ["", "# %%", *("# " + line for line in text)]
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
        explicit = re.fullmatch(r"(?s)(?P<title>.+?)\s*<(?P<target>[^<>]+)>", m["body"])
        title, target = (explicit["title"], explicit["target"]) if explicit else (None, m["body"])
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


def sphinx_linker(app) -> Linker:
    """The :class:`Linker` of a build: its intersphinx inventories, labels and titles."""
    from sphinx.ext.intersphinx import InventoryAdapter

    api: dict[str, str] = {}
    for objtype, items in InventoryAdapter(app.env).main_inventory.items():
        if objtype.startswith("py:") and objtype[3:] in PY_TYPES:
            for name, item in items.items():
                api.setdefault(name, item.uri)
    titles = {doc: node.astext() for doc, node in app.env.titles.items()}
    labels = app.env.domains.standard_domain.labels
    return Linker(api, labels, titles, app.config.html_baseurl or "")


# --------------------------------------------------------------------------
# The files


def notebook_json(script: Path, needed: list[str], link: Callable[[str], str]) -> str:
    """The notebook of *script*, made as sphinx-gallery makes the English one,
    opening with a cell that installs *needed*, its prose passed through *link*."""
    import json

    from sphinx_gallery.gen_gallery import DEFAULT_GALLERY_CONF
    from sphinx_gallery.notebook import jupyter_notebook
    from sphinx_gallery.py_source_parser import split_code_and_text_blocks

    _, blocks = split_code_and_text_blocks(script)
    blocks = [b._replace(content=link(b.content)) if b.type == "text" else b for b in blocks]
    first = "%pip install " + " ".join(needed) if needed else None
    notebook = jupyter_notebook(
        blocks, {**DEFAULT_GALLERY_CONF, "first_notebook_cell": first}, script.parent
    )
    return json.dumps(notebook, indent=2, ensure_ascii=False) + "\n"


def zip_bytes(files: dict[str, bytes]) -> bytes:
    """The files zipped, with the same bytes on every build."""
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w") as zf:
        for name in sorted(files):
            info = zipfile.ZipInfo(name)  # dated 1980-01-01
            info.external_attr = 0o644 << 16
            zf.writestr(info, files[name], zipfile.ZIP_DEFLATED)
    return buf.getvalue()


def reader_files(script: Path, translate, label, link, tmp: Path) -> dict[str, bytes]:
    """The .py, .ipynb and .zip of one lesson as a reader downloads them;
    *translate* is None in the source language."""
    source = reader_script(script.read_text(encoding="utf-8"))
    imported = imported_modules(source)
    needed = requirements(imported)
    if translate is not None:
        # The comments and docstrings in the code, as on the page: the prose
        # is translated by now, so only the code's English texts can match.
        source = code_comments.translate(translate_script(source, translate), translate)
    text = add_note(source, needed, "torchviz" in imported, label)
    copy = tmp / script.name
    copy.write_text(text, encoding="utf-8")
    files = {
        script.name: text.encode(),
        f"{script.stem}.ipynb": notebook_json(copy, needed, link).encode(),
    }
    files[f"{script.stem}.zip"] = zip_bytes(files)
    return files


def replace_downloads(app, exception) -> None:
    """Put each lesson's downloads, made for readers in the build's language,
    where Sphinx copied sphinx-gallery's."""
    import tempfile

    from sphinx.locale import init

    from ext.lessons.exercises import solution_file
    from ext.translation.languages import LOCALE, SOURCE_LANGUAGE
    from ext.translation.theme_labels import label

    if exception is not None or app.builder.format != "html":
        return
    link = sphinx_linker(app)
    with tempfile.TemporaryDirectory() as tmp:
        for script in sorted((Path(app.srcdir) / "lessons").glob("[0-9][0-9]_*.py")):
            translate = None
            if app.config.language != SOURCE_LANGUAGE:
                # The catalog of the lesson's page, as Sphinx compiled it for the page.
                translate = init([LOCALE], app.config.language, f"lessons/{script.stem}")[0].gettext
            files = reader_files(script, translate, label, link, Path(tmp))
            solution = solution_file(f"lessons/{script.stem}")
            if solution is not None:
                code = solution.read_text(encoding="utf-8")
                if translate is not None:
                    code = code_comments.translate(code, translate)
                files[solution.name] = code.encode()
            for name, data in files.items():
                for target in (Path(app.outdir) / "_downloads").glob(f"*/{name}"):
                    if target.read_bytes() != data:
                        target.write_bytes(data)


def setup(app):
    app.connect("build-finished", replace_downloads)
    return {"parallel_read_safe": True, "parallel_write_safe": True}
