"""The downloads run as downloaded.

Each lesson's notebook runs top to bottom in a fresh Jupyter kernel (nbclient
and ipykernel, as Jupyter runs it), from a folder that holds nothing but that
notebook, and shows no warning. Its first cell installs what a reader with
PyTorch lacks (here it is already installed, so pip changes nothing). This is
also the test that each lesson runs on its own. The notebooks of the other
languages hold the same code (tests/test_build.py asserts it, comments and
docstrings aside), so only the source language's are executed.
"""

from __future__ import annotations

import ast
import json
import re
import shutil
import sys
import zipfile

import pytest
from conftest import LANGUAGES, LESSONS

pytestmark = pytest.mark.build

CASES = [(lang, lesson) for lang in LANGUAGES for lesson in LESSONS]
IDS = [f"{lang}-{lesson.stem}" for lang, lesson in CASES]
SOURCE = LANGUAGES[0]
# What a module imported by a lesson is installed as.
DISTRIBUTIONS = {"torchviz": "torchviz", "numpy": "numpy"}


def download(site, lang, lesson, suffix):
    page = (site.html / lang / "lessons" / f"{lesson.stem}.html").read_text(encoding="utf-8")
    m = re.search(rf'href="([^"]*{lesson.stem}{suffix})"', page)
    assert m, f"{lang}/{lesson.stem}: no {suffix} download"
    return site.html / lang / "lessons" / m[1]


@pytest.mark.parametrize("lesson", LESSONS, ids=[p.stem for p in LESSONS])
def test_the_notebook_runs_in_a_fresh_kernel_from_a_clean_folder(site, tmp_path, lesson):
    import nbformat
    from nbclient import NotebookClient

    notebook = shutil.copy(download(site, SOURCE, lesson, ".ipynb"), tmp_path)
    nb = nbformat.read(notebook, as_version=4)
    client = NotebookClient(
        nb, timeout=600, kernel_name="python3", resources={"metadata": {"path": str(tmp_path)}}
    )
    client.execute()  # raises CellExecutionError naming the cell that failed
    outputs = [o for cell in nb.cells if cell.cell_type == "code" for o in cell.outputs]
    errors = [o for o in outputs if o.get("output_type") == "error"]
    assert not errors
    assert any(o.get("output_type") == "stream" for o in outputs), "a lesson prints its results"
    # A warning shows on stderr; pip's own notes in the install cell do not count.
    code = [cell for cell in nb.cells if cell.cell_type == "code"]
    lesson_cells = code[1:] if "".join(code[0].source).startswith("%pip") else code
    warned = [
        o.text
        for cell in lesson_cells
        for o in cell.outputs
        if o.get("output_type") == "stream" and o.get("name") == "stderr"
    ]
    assert not warned, warned


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
    cells = json.loads(download(site, lang, lesson, ".ipynb").read_text(encoding="utf-8"))["cells"]
    code = ["".join(c["source"]) for c in cells if c["cell_type"] == "code"]
    body = "\n".join(line for c in code for line in c.splitlines() if not line.startswith("%"))
    third_party = imported_modules(body) - set(sys.stdlib_module_names) - {"torch"}
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
            suffix: download(site, lang, lesson, suffix).read_text(encoding="utf-8")
            for suffix in (".py", ".ipynb")
        }
        with zipfile.ZipFile(download(site, lang, lesson, ".zip")) as archive:
            for name in archive.namelist():
                texts[name] = archive.read(name).decode("utf-8")
        for name, text in texts.items():
            assert "sphinx_gallery_" not in text, (lang, lesson.stem, name)
            assert "solutions" not in text, (lang, lesson.stem, name)
            assert not re.search(r":(?:ref|doc|func|class|meth|exc):`", text) or name.endswith(
                ".py"
            ), (lang, lesson.stem, name, "a raw role in a notebook")


def test_a_notebook_links_the_api_and_the_other_lessons(site):
    """Roles in a notebook's text become Markdown links: to PyTorch's API, and
    to another lesson (its notebook next to this one, without a site URL)."""
    lesson = next(p for p in LESSONS if p.name.startswith("01_"))
    for lang in LANGUAGES:
        cells = json.loads(download(site, lang, lesson, ".ipynb").read_text(encoding="utf-8"))
        text = "".join("".join(c["source"]) for c in cells["cells"] if c["cell_type"] == "markdown")
        assert re.search(r"\]\(https://docs\.pytorch\.org/docs/[\d.]+/[^)]*gradcheck", text), lang
        assert "](02_saving_outputs.ipynb)" in text, lang
