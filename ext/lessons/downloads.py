"""Downloads that run as downloaded, in the page's language.

sphinx-gallery writes a .py, .ipynb and .zip per lesson, and Sphinx copies
them into ``_downloads/``. As they are, they would not run on a reader's
machine: the script keeps the hidden cell that proves the exercise against
``gallery/solutions/`` (which a reader does not have), and neither file says
that the graphs need torchviz and Graphviz. So when a build has finished,
the three files of every lesson are made again from the source, in the
build's language, and replace the copies:

* sphinx-gallery's hidden cells and configuration comments go, with its own
  functions, except a hidden block marked as the reader's too (:data:`KEPT`);
* in a translated build, the prose (the docstring and the ``# %%`` text
  cells) comes from the page's catalog, and so do the comments and one-line
  docstrings in the code, as on the page (ext/translation/code_comments.py);
  the code stays byte for byte. So does the exercise's solution, offered on
  the same page;
* a note after the introduction names what the lesson needs besides PyTorch
  (never torch: the reader has the build they want), from its imports;
* a lesson with an exercise ends with it as a reader works it: the starting
  code (:func:`starting_code`), a cell that checks it and prints what is
  wrong, and apart, the solution with the check of each answer asked for;
* the notebook, made by sphinx-gallery's converter as its command
  ``sphinx_gallery_py2jupyter`` does, opens with a ``%pip install`` cell, and
  its roles become links: PyTorch's API to its documentation (the pages'
  intersphinx inventory), a lesson or page to its address under
  ``html_baseurl``; without one, a role is plain text. Its prose has no reST
  left (see :func:`markdown`), and without Graphviz its graphs show as text.
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
    (paragraphs, titles, list items, a list-table's cells), so that a unit's
    text is its msgid. A list-table is written again with one line a cell."""

    def table(m: re.Match) -> str:
        options = [ln for ln in textwrap.dedent(m[1]).splitlines() if ln.startswith(":")]
        lines = [m[0].split("\n", 1)[0], *("   " + o for o in options), ""]
        for row in table_cells(m[1], translate):
            lines += [("     - " if i else "   * - ") + cell for i, cell in enumerate(row)]
        return "\n".join(ln.rstrip() for ln in lines) + "\n\n"

    text = LIST_TABLE.sub(table, text + "\n").rstrip("\n")
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


# A hidden block that the reader's script needs too: lessons 02 and 03 hide
# the check's helpers that lesson 01 shows. Its markers and first comment go,
# its code stays (with no comment of its own: the page's catalog never sees it).
KEPT = re.compile(
    r"^# sphinx_gallery_start_ignore\n# Kept in the download\b.*\n"
    r"((?:.*\n)*?)# sphinx_gallery_end_ignore\n",
    re.M,
)


def reader_script(source: str) -> str:
    """*source* without what only the build needs: hidden cells (except those
    kept in the download, see :data:`KEPT`), config comments."""
    from sphinx_gallery.py_source_parser import remove_config_comments, remove_ignore_blocks

    source = KEPT.sub(lambda m: m.group(1).strip("\n") + "\n", source)
    return remove_config_comments(remove_ignore_blocks(source)).rstrip() + "\n"


def imported_modules(source: str) -> set[str]:
    found = set()
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Import):
            found.update(alias.name.split(".")[0] for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module and not node.level:
            found.add(node.module.split(".")[0])
    return found


def requirements(lesson: str) -> tuple[list[str], list[str]]:
    """What a reader who has PyTorch needs to run the lesson *lesson*, from its
    imports: the arguments of ``pip install``, and the names the page shows
    (ext/lessons/provenance.py), with Graphviz when it draws graphs.

    torchviz is pinned as the build has it (its only release that draws these
    graphs); setuptools gives it the ``distutils`` that Python 3.12 removed.
    numpy is named for every lesson: PyTorch's wheels do not require it, but
    importing torch without it warns ("Failed to initialize NumPy"). numpy and
    setuptools are named without a version: ``pip`` then installs them only
    where they are missing, and never changes a reader's.
    """
    from importlib.metadata import version

    graphs = "torchviz" in imported_modules(reader_script(lesson))
    install = [f"torchviz=={version('torchviz')}", "setuptools"] if graphs else []
    install.append("numpy")
    return install, [r.split("=")[0] for r in install if r != "setuptools"] + ["Graphviz"] * graphs


def comment_lines(text: str) -> list[str]:
    """*text* as the ``# `` lines of a text cell: Chinese on one line (as
    translate_script writes it), else wrapped, an inline literal never broken."""
    if any(wide(ch) for ch in text):
        return ["# " + text]
    atomic = re.sub(r"``[^`]+``", lambda m: m[0].replace(" ", "\0"), text)
    wrapped = textwrap.wrap(atomic, width=77, break_long_words=False, break_on_hyphens=False)
    return ["# " + line.replace("\0", " ") for line in wrapped]


def text_cell(text: str, title: str = "") -> list[str]:
    """A sphinx-gallery text cell: an optional section *title*, then *text*."""
    head = [f"# {title}", "# " + "-" * max(sum(2 if wide(c) else 1 for c in title), 3), "#"]
    return ["", "# %%", *(head if title else []), *comment_lines(text), ""]


def add_note(script: str, needed: list[str], graphs: bool, label: Callable[[str], str]) -> str:
    """*script* with a text cell right after its docstring that names what
    the lesson needs (*needed*, and Graphviz for *graphs*), in the language
    of *label*."""
    from ext.translation.theme_labels import GRAPHS_NEED_DOT, NEEDS

    note = label(NEEDS) % ("``pip install " + " ".join(needed) + "``")
    if graphs:  # no space after a full stop such as Chinese 。
        note += ("" if wide(note[-1]) else " ") + label(GRAPHS_NEED_DOT)
    lines = script.split("\n")
    end = docstring_lines(lines)[1]
    return "\n".join(lines[: end + 1] + text_cell(note)[:-1] + lines[end + 1 :])


# The hidden cell of a lesson with an exercise: its check, the Function the
# reader writes, and any other answer of the solution that the exercise asks for.
PROVE = re.compile(r'^prove\((check_\w+), "(\w+)"((?:, "\w+")*)\)', re.M)


def starting_code(lesson: str, solution: str, name: str, label) -> tuple[str, bool]:
    """The code a reader starts the exercise of *lesson* from, and whether it
    is code to fix.

    A Function that the exercise's own section defines (lesson 04: "Fix it")
    is the start, under *name*, the name the check expects. Otherwise the start
    is *solution* with its bodies to write: its imports, and the definitions
    that *name* uses (itself and, say, a second Function), with their classes,
    decorators and signatures; each function's body is a docstring that says
    what to write and ``raise NotImplementedError`` with it, so that the check
    prints it, and the code is the same in every language.
    """
    from ext.translation.theme_labels import TODO, TODO_BACKWARD, TODO_FORWARD

    heading = re.search(r"^# Exercise\n# -+$", lesson, re.M)
    after = lesson[: heading.start()].count("\n") + 1 if heading else float("inf")
    for node in ast.parse(lesson).body:
        if isinstance(node, ast.ClassDef) and node.lineno > after:
            code = ast.get_source_segment(lesson, node)
            return re.sub(rf"\b{node.name}\b", name, code), True
    lines = solution.split("\n")
    tree = ast.parse(solution)
    defs = {n.name: n for n in tree.body if isinstance(n, ast.ClassDef | ast.FunctionDef)}
    used, todo = set(), [name]
    while todo:
        if (found := todo.pop()) in defs and found not in used:
            used.add(found)
            todo += [n.id for n in ast.walk(defs[found]) if isinstance(n, ast.Name)]
    imports = [n for n in tree.body if isinstance(n, ast.Import | ast.ImportFrom)]
    parts = ["\n".join(ast.get_source_segment(solution, n) for n in imports)] if imports else []
    for node in (node for found, node in defs.items() if found in used):
        first = min([node.lineno] + [d.lineno for d in node.decorator_list])
        code = lines[first - 1 : node.end_lineno]
        functions = [node] if isinstance(node, ast.FunctionDef) else node.body
        for f in reversed([f for f in functions if isinstance(f, ast.FunctionDef)]):
            text = {"forward": TODO_FORWARD, "backward": TODO_BACKWARD}.get(f.name)
            text = label(text) if text else label(TODO) % f.name
            where = f.name if f is node else f"{node.name}.{f.name}"
            indent = " " * f.body[0].col_offset
            code[f.body[0].lineno - first : f.end_lineno - first + 1] = [
                f'{indent}"""{text}"""',
                f"{indent}raise NotImplementedError({where}.__doc__)",
            ]
        parts.append("\n".join(code))
    return "\n\n\n".join(parts), False


def add_workbook(script: str, lesson: str, solution: str, label, translate) -> str:
    """*script* ending with the exercise of *lesson* as a reader works it: the
    starting code (its comments translated by *translate*, unless None), a
    cell that checks it (printing what is wrong, so that "Run all" goes on),
    and apart, under its own heading, the *solution* with the check of each
    answer the exercise asks for."""
    from ext.translation import theme_labels as words

    check, name, more = PROVE.search(lesson).groups()
    start, fix = starting_code(lesson, solution, name, label)
    start = start if translate is None else code_comments.translate(start, translate)
    try_it = (
        f"try:\n    {check}({name})\nexcept (AssertionError, NotImplementedError) as err:\n"
        '    print(repr(err))\nelse:\n    print("✓")'
    )
    checks = [f"{check}({n})" for n in [name, *re.findall(r'"(\w+)"', more)]]
    cells = [
        *text_cell(label(words.FIX_ANSWER if fix else words.WRITE_ANSWER), label(words.ANSWER)),
        start, "", "# %%", "", try_it,
        *text_cell(label(words.SOLUTION_APART), label(words.SOLUTION)), solution.strip(), "",
        "# %%", "", *checks,
    ]  # fmt: skip
    return script.rstrip("\n") + "\n\n" + "\n".join(cells) + "\n"


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
        """The page's address on the published site; None without one (a
        downloaded notebook has no sibling files to link to)."""
        if not self.baseurl:
            return None
        return posixpath.join(self.baseurl, docname + ".html") + (f"#{anchor}" if anchor else "")

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


LIST_TABLE = re.compile(r"^\.\. list-table::.*\n((?:[ \t]*\n|[ \t]+.*\n)*)", re.M)


def table_cells(body: str, translate: Callable[[str], str]) -> list[list[str]]:
    """The rows of a list-table's *body* (what follows its directive line),
    each cell joined to one line and translated. An empty cell stays empty:
    gettext's "" is the catalog's header."""
    rows: list[list[str]] = []
    for line in textwrap.dedent(body).splitlines():
        if line.startswith("* -"):
            rows.append([line[3:]])
        elif line.startswith("  -"):
            rows[-1].append(line[3:])
        elif line.strip() and not line.startswith(":"):
            rows[-1][-1] += " " + line
    return [[translate(" ".join(c.split())) if c.strip() else "" for c in r] for r in rows]


def markdown(text: str, translate: Callable[[str], str]) -> str:
    """The reST of a text cell made fit for a notebook, which shows no reST:
    a list-table becomes a Markdown table (its cells translated, as on the
    page), an escaped space (``**x**\\ y``, which joins markup to a word)
    goes, except inside a literal, and an anonymous link (one ending in two
    underscores) becomes a named one, the only kind sphinx-gallery's
    converter reads: it left the second underscore after the link."""

    def table(m: re.Match) -> str:
        cells = [[c.replace("|", "\\|") for c in r] for r in table_cells(m[1], translate)]
        lines = ["| " + " | ".join(row) + " |" for row in cells]
        return "\n".join([lines[0], "|" + "---|" * len(cells[0]), *lines[1:]]) + "\n\n"

    parts = re.split(r"(``[^`]+``)", LIST_TABLE.sub(table, text))
    plain = (re.sub(r"(?<!\\)\\ ", "", p).replace(">`__", ">`_") for p in parts[::2])
    parts[::2] = plain
    return "".join(parts)


# A notebook's second cell, for a lesson with graphs. Without Graphviz's dot,
# Jupyter cannot draw a graph and the cell that shows one fails; IPython's
# documented formatter registry shows it as text instead, so "Run all" goes on.
NO_DOT_CELL = """import shutil

if shutil.which("dot") is None:
    import graphviz
    from IPython import get_ipython

    def graph_as_text(graph):
        \"\"\"{}\"\"\"
        return {{"text/plain": graph_as_text.__doc__}}

    formatters = get_ipython().display_formatter
    formatters.mimebundle_formatter.for_type(graphviz.Digraph, graph_as_text)"""


def notebook_json(
    script: Path, needed: list[str], link: Callable[[str], str], translate, no_dot: str | None
) -> str:
    """The notebook of *script*, made as sphinx-gallery makes the English one,
    opening with a cell that installs *needed* (and, given *no_dot*, the cell
    that shows graphs as that text without Graphviz), its prose in Markdown."""
    import json

    from sphinx_gallery.gen_gallery import DEFAULT_GALLERY_CONF
    from sphinx_gallery.notebook import jupyter_notebook
    from sphinx_gallery.py_source_parser import split_code_and_text_blocks

    _, blocks = split_code_and_text_blocks(script)
    blocks = [
        b._replace(content=link(markdown(b.content, translate))) if b.type == "text" else b
        for b in blocks
    ]
    first = "%pip install " + " ".join(needed)
    notebook = jupyter_notebook(
        blocks, {**DEFAULT_GALLERY_CONF, "first_notebook_cell": first}, script.parent
    )
    if no_dot is not None:
        source = NO_DOT_CELL.format(no_dot).splitlines(keepends=True)
        cell = {"cell_type": "code", "execution_count": None, "metadata": {}, "outputs": []}
        notebook["cells"].insert(1, {**cell, "source": source})
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


def reader_files(
    script: Path, translate, label, link, tmp: Path, solution: Path | None = None
) -> dict[str, bytes]:
    """The .py, .ipynb and .zip of one lesson as a reader downloads them, and
    its exercise's *solution*; *translate* is None in the source language."""
    from ext.translation.theme_labels import NO_DOT

    lesson = script.read_text(encoding="utf-8")
    source = reader_script(lesson)
    needed, names = requirements(lesson)
    if translate is not None:
        # The comments and docstrings in the code, as on the page: the prose
        # is translated by now, so only the code's English texts can match.
        source = code_comments.translate(translate_script(source, translate), translate)
    text = add_note(source, needed, "Graphviz" in names, label)
    if solution is not None:
        code = solution.read_text(encoding="utf-8")
        if translate is not None:
            code = code_comments.translate(code, translate)
        text = add_workbook(text, lesson, code, label, translate)
    copy = tmp / script.name
    copy.write_text(text, encoding="utf-8")
    no_dot = label(NO_DOT) if "Graphviz" in names else None
    notebook = notebook_json(copy, needed, link, translate or (lambda s: s), no_dot)
    files = {script.name: text.encode(), f"{script.stem}.ipynb": notebook.encode()}
    files[f"{script.stem}.zip"] = zip_bytes(files)  # the solution is offered apart
    return files | ({solution.name: code.encode()} if solution is not None else {})


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
            solution = solution_file(f"lessons/{script.stem}")
            files = reader_files(script, translate, label, link, Path(tmp), solution)
            for name, data in files.items():
                for target in (Path(app.outdir) / "_downloads").glob(f"*/{name}"):
                    if target.read_bytes() != data:
                        target.write_bytes(data)


def setup(app):
    app.connect("build-finished", replace_downloads)
    return {"parallel_read_safe": True, "parallel_write_safe": True}
