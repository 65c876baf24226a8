"""The downloads run as downloaded.

Each lesson's notebook runs top to bottom in a fresh Jupyter kernel (nbclient
and ipykernel, as Jupyter runs it), from a folder that holds nothing but that
notebook (conftest.py's ``notebook_run``, whose kernel then checks the
lesson's Functions for tests/test_functions.py), shows no warning, and prints
what the lesson's page shows: the build's run and the reader's give the same
output (then the exercise, which only the downloads have, prints what is
wrong with the answer not yet written). Its first cell installs what a reader with PyTorch lacks (here it is
already installed, so pip changes nothing). This is also the test that each
lesson runs on its own. The notebooks of the other languages hold the same
code (tests/test_build.py asserts it, comments and docstrings aside), so only
the source language's are executed.
"""

from __future__ import annotations

import ast
import html
import json
import re
import sys
import zipfile

import pytest
from conftest import GRAPH_LESSONS, LANGUAGES, LESSONS, NO_DOT_RUNS

pytestmark = pytest.mark.build

CASES = [(lang, lesson) for lang in LANGUAGES for lesson in LESSONS]
IDS = [f"{lang}-{lesson.stem}" for lang, lesson in CASES]
SOURCE = LANGUAGES[0]
# What a module imported by a lesson is installed as (graphviz comes with
# torchviz); IPython is the Jupyter kernel's own.
DISTRIBUTIONS = {"torchviz": "torchviz", "numpy": "numpy", "graphviz": "torchviz"}
KERNEL = {"IPython"}


def printed(text: str) -> str:
    """Printed output, as a page and a notebook both keep it."""
    return "\n".join(line.rstrip() for line in text.strip().splitlines())


def page_outputs(site, lesson) -> list[str]:
    """What the lesson printed in the build, block after block, from its page."""
    page = (site.html / SOURCE / "lessons" / f"{lesson.stem}.html").read_text(encoding="utf-8")
    outputs = re.findall(
        r'class="sphx-glr-script-out[^"]*"><div class="highlight"><pre[^>]*>(.*?)</pre>', page, re.S
    )
    return [printed(html.unescape(re.sub(r"<[^>]+>", "", out))) for out in outputs]


@pytest.mark.parametrize("lesson", LESSONS, ids=[p.stem for p in LESSONS])
def test_the_notebook_runs_in_a_fresh_kernel_and_prints_what_the_page_shows(
    site, notebook_run, lesson
):
    run = notebook_run(lesson)
    assert run.error is None, run.error
    outputs = [o for cell in run.cells for o in cell.outputs]
    assert not [o for o in outputs if o.get("output_type") == "error"]
    if lesson in GRAPH_LESSONS and lesson not in NO_DOT_RUNS:  # with dot, graphs draw
        assert [o for o in outputs if "image/svg+xml" in o.get("data", {})], "no graph drawn"
    assert any(o.get("output_type") == "stream" for o in outputs), "a lesson prints its results"
    # A warning shows on stderr; pip's own notes in the install cell do not count.
    cells = run.cells[1:] if "".join(run.cells[0].source).startswith("%pip") else run.cells
    warned = [
        o.text
        for cell in cells
        for o in cell.outputs
        if o.get("output_type") == "stream" and o.get("name") == "stderr"
    ]
    assert not warned, warned
    streams = [
        printed("".join(o.text for o in cell.outputs if o.get("output_type") == "stream"))
        for cell in cells
    ]
    shown = page_outputs(site, lesson)
    assert [text for text in streams if text][: len(shown)] == shown


def imported_modules(code: str) -> set[str]:
    found = set()
    for node in ast.walk(ast.parse(code)):
        if isinstance(node, ast.Import):
            found.update(alias.name.split(".")[0] for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module and not node.level:
            found.add(node.module.split(".")[0])
    return found


@pytest.mark.parametrize(("lang", "lesson"), CASES, ids=IDS)
def test_the_first_cell_installs_what_a_reader_with_pytorch_lacks(site, lang, lesson):
    cells = json.loads(site.download(lang, lesson, ".ipynb").read_text(encoding="utf-8"))["cells"]
    code = ["".join(c["source"]) for c in cells if c["cell_type"] == "code"]
    body = "\n".join(line for c in code for line in c.splitlines() if not line.startswith("%"))
    third_party = imported_modules(body) - set(sys.stdlib_module_names) - {"torch"} - KERNEL
    assert third_party <= set(DISTRIBUTIONS), f"a new dependency: {third_party}"
    if third_party:
        first = code[0]
        assert first.startswith("%pip install "), first
        installs = first.split()[2:]
        for module in third_party:
            assert any(re.match(rf"{DISTRIBUTIONS[module]}\b", req) for req in installs), module
        assert not any(re.match(r"torch\b(?!viz)", req) for req in installs), "never torch"
    text = "".join("".join(c["source"]) for c in cells if c["cell_type"] == "markdown")
    if "torchviz" in third_party:
        assert "``dot``" in text or "`dot`" in text, "the text says the graphs need dot"


@pytest.mark.parametrize("lang", LANGUAGES)
def test_no_download_carries_what_only_the_build_needs(site, lang):
    """The hidden cell that proves an exercise (it needs gallery/solutions)
    and sphinx-gallery's configuration comments stay out of every download."""
    for lesson in LESSONS:
        texts = {
            suffix: site.download(lang, lesson, suffix).read_text(encoding="utf-8")
            for suffix in (".py", ".ipynb")
        }
        with zipfile.ZipFile(site.download(lang, lesson, ".zip")) as archive:
            for name in archive.namelist():
                texts[name] = archive.read(name).decode("utf-8")
        for name, text in texts.items():
            assert "sphinx_gallery_" not in text, (lang, lesson.stem, name)
            assert "solutions" not in text, (lang, lesson.stem, name)


CODE = "\x00"  # where a code span was, in markdown_text()


def markdown_text(source: str) -> str:
    """The text Jupyter shows of a Markdown cell's *source*: rendered as
    CommonMark with tables (markdown-it-py, MyST's own parser), each code span
    left as CODE, formulas and HTML left out (MathJax and the browser show them)."""
    from markdown_it import MarkdownIt

    source = re.sub(
        r"\$\$.*?\$\$|\$[^$\n]+\$|\\begin\{(\w+\*?)\}.*?\\end\{\1\}", " ", source, flags=re.S
    )
    shown = {"text": lambda t: t.content, "softbreak": lambda t: " ", "code_inline": lambda t: CODE}
    text = []
    for block in MarkdownIt("commonmark").enable("table").parse(source):
        text += [shown[t.type](t) for t in block.children or () if t.type in shown] + ["\n"]
    return "".join(text)


# reST in a notebook's text: an escaped space (its backslash shows), a role
# (its name shows before the code span), a backtick that made no code span
# (a reST literal Markdown could not read), a directive or label, a substitution.
REST_LEFT = re.compile(
    rf"\\ |:[a-z]+(?::[a-z]+)*:{CODE}|`+|(?<![.\w])\.\. (?:[\w-]+::|_[\w-]+:|\|)|\|[^|\s][^|]*\|"
)


def test_rest_left_in_markdown_is_found():
    """The finder of the test below, on planted reST; a literal in double
    backticks is a CommonMark code span too, and shows as code."""
    source = (
        "**蓝色**\\ 表示 :func:`grad` 和 ``x``，$a \\ b$。\n\n.. note:: x\n\n"
        "| a | b |\n|---|---|\n| 1 | 2 |\n\nSee |version| and ``a``\\ （ and `` x"
    )
    found = [m[0] for m in REST_LEFT.finditer(markdown_text(source))]
    assert found == ["\\ ", f":func:{CODE}", ".. note::", "|version|", "\\ ", "``"], found


@pytest.mark.parametrize("lang", LANGUAGES)
def test_a_notebooks_text_shows_no_rest(site, lang):
    """Every Markdown cell of every notebook, alone and in its .zip, renders
    with no reST left in its text (ext/lessons/downloads.py's markdown() and
    Linker make it Markdown)."""
    found = []
    for lesson in LESSONS:
        notebooks = {"ipynb": site.download(lang, lesson, ".ipynb").read_text(encoding="utf-8")}
        with zipfile.ZipFile(site.download(lang, lesson, ".zip")) as archive:
            notebooks["zip"] = archive.read(f"{lesson.stem}.ipynb").decode("utf-8")
        for where, notebook in notebooks.items():
            for cell in json.loads(notebook)["cells"]:
                if cell["cell_type"] == "markdown":
                    text = markdown_text("".join(cell["source"]))
                    found += [
                        f"{lesson.stem} ({where}): {m[0]!r} in "
                        + " ".join(text[max(m.start() - 20, 0) : m.end() + 20].split())
                        for m in REST_LEFT.finditer(text)
                    ]
    assert not found, "\n".join(found)


def test_a_notebook_links_the_api_and_no_page_it_cannot_reach(site):
    """Roles in a notebook's text become Markdown links to PyTorch's API; a
    lesson or page is plain text, since the site has no address here (with
    one, tests/test_publishing.py finds the links) and a downloaded notebook
    has no sibling files."""
    lesson = next(p for p in LESSONS if p.name.startswith("01_"))
    for lang in LANGUAGES:
        cells = json.loads(site.download(lang, lesson, ".ipynb").read_text(encoding="utf-8"))
        text = "".join("".join(c["source"]) for c in cells["cells"] if c["cell_type"] == "markdown")
        assert re.search(r"\]\(https://docs\.pytorch\.org/docs/[\d.]+/[^)]*gradcheck", text), lang
        assert not re.findall(r"\]\((?!https://)[^)]*\)", text), lang


@pytest.mark.parametrize("lesson", list(NO_DOT_RUNS), ids=[p.stem for p in NO_DOT_RUNS])
def test_without_dot_a_notebook_runs_to_its_end_and_says_how_to_install_it(notebook_run, lesson):
    """Issue 21: without Graphviz, "Run all" reaches the notebook's last cell,
    and each graph cell shows, in the notebook's language, that ``dot`` is
    missing and how to install it (conftest.py's NO_DOT_RUNS run these
    notebooks with a PATH that has no ``dot``; the others keep it)."""
    import polib

    from ext import ROOT
    from ext.translation.theme_labels import NO_DOT

    lang, said = NO_DOT_RUNS[lesson], NO_DOT
    if lang != SOURCE:
        catalog = polib.pofile(str(ROOT / "locale" / lang / "LC_MESSAGES" / "sphinx.po"))
        said = catalog.find(NO_DOT).msgstr
        assert said and said != NO_DOT, f"{lang}: NO_DOT is not translated"
    run = notebook_run(lesson)
    assert run.error is None, run.error
    assert run.cells[-1].get("execution_count"), "the last cell did not run"
    graphs = [
        o["data"]["text/plain"]
        for cell in run.cells
        for o in cell.outputs
        if "make_dot(" in cell.source and "text/plain" in o.get("data", {})
    ]
    assert graphs, "no graph cell showed anything"
    assert all(said in text for text in graphs), graphs[:1]
    assert not [o for c in run.cells for o in c.outputs if "image/svg+xml" in o.get("data", {})]
