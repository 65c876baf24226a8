"""Unit tests of ext/lessons/downloads.py: a lesson's download drops what only the
build needs, names the packages a reader with PyTorch lacks in a note in the
page's language, and a notebook's roles become Markdown links.
"""

from __future__ import annotations

import re

import pytest
from conftest import LANGUAGES, LESSONS

LESSON = '''r"""
.. _lesson-a:

Title
=====

Intro.
"""

# %%
# Text with :func:`~torch.autograd.gradcheck`, see :ref:`lesson-b`.

import numpy as np
from torchviz import make_dot

# sphinx_gallery_thumbnail_path = '_static/thumbs/a.svg'
x = 1

# sphinx_gallery_start_ignore
import runpy
runpy.run_path("solutions/prove.py")
# sphinx_gallery_end_ignore
'''


def test_a_download_drops_what_only_the_build_needs():
    from ext.lessons.downloads import reader_script

    script = reader_script(LESSON)
    assert "sphinx_gallery" not in script and "solutions" not in script and "runpy" not in script
    assert script.endswith("x = 1\n")


def test_a_download_keeps_a_hidden_block_marked_for_it():
    """Lessons 02-03 hide the check's helpers that lesson 01 shows; their downloads need them."""
    from ext.lessons.downloads import reader_script

    kept = "# sphinx_gallery_start_ignore\n# Kept in the download: why.\n\n\ndef f():\n"
    kept += "    return 1\n# sphinx_gallery_end_ignore\n\n\ny = f()\n"
    script = reader_script(LESSON + "\n\n" + kept)
    assert "def f():\n    return 1\n\n\ny = f()\n" in script
    assert "sphinx_gallery" not in script and "Kept in" not in script and "runpy" not in script


def test_a_download_names_what_a_reader_with_pytorch_lacks():
    """One list for the page's needs line and the notebook's ``%pip`` cell."""
    from importlib.metadata import version

    from ext.lessons.downloads import imported_modules, requirements

    assert imported_modules(LESSON) == {"numpy", "torchviz", "runpy"}
    torchviz = f"torchviz=={version('torchviz')}"  # as the build draws the graphs
    install, names = requirements(LESSON)
    assert install == [torchviz, "setuptools", "numpy"]
    assert names == ["torchviz", "numpy", "Graphviz"]  # as the page names them
    # importing torch without numpy warns, so every lesson names it
    assert requirements("import torch\nimport warnings\n") == (["numpy"], ["numpy"])
    # what only the build imports (the hidden cell) is not the reader's
    hidden = "# sphinx_gallery_start_ignore\nimport torchviz\n# sphinx_gallery_end_ignore\n"
    assert requirements(hidden) == (["numpy"], ["numpy"])


def test_the_note_follows_the_docstring_in_the_readers_language():
    from ext.lessons.downloads import add_note

    script = add_note(LESSON, ["torchviz==0.0.3"], True, lambda msgid: msgid)
    after = script.split('"""\n', 2)[2]
    assert after.startswith("\n# %%\n# Besides PyTorch")
    assert all(len(line) <= 79 for line in after.splitlines()[:6])
    note = " ".join(after.splitlines()[:6])
    assert "``pip install torchviz==0.0.3``" in note and "``dot``" in note
    assert "``sudo apt-get install graphviz``" in note
    chinese = {"x": "本课需要 %s。", "y": "还需要 ``dot``。"}
    zh = add_note(LESSON, ["numpy"], True, lambda m: chinese["x" if "%s" in m else "y"])
    assert "\n# %%\n# 本课需要 ``pip install numpy``。还需要 ``dot``。\n" in zh


def test_a_notebook_turns_roles_into_links():
    from ext.lessons.downloads import Linker

    link = Linker(
        api={"torch.autograd.gradcheck": "https://docs/gradcheck.html"},
        labels={"lesson-b": ("lessons/02_b", "lesson-b", "Pattern B")},
        titles={"summary": "Summary"},
    )
    text = "Use :func:`~torch.autograd.gradcheck`, :ref:`lesson-b`, :doc:`/summary`."
    # Without the site's address a page is plain text: a downloaded notebook
    # has no sibling files to link to.
    assert link(text) == "Use [`gradcheck`](https://docs/gradcheck.html), Pattern B, Summary."
    link.baseurl = "https://example.org/en/"
    assert "[Summary](https://example.org/en/summary.html)" in link(text)
    assert "[Pattern B](https://example.org/en/lessons/02_b.html#lesson-b)" in link(text)
    assert (
        link(":ref:`the rules <lesson-b>`")
        == "[the rules](https://example.org/en/lessons/02_b.html#lesson-b)"
    )


def test_a_notebook_shows_no_rest():
    """A list-table becomes a Markdown table, its cells translated (an empty
    one stays empty: gettext translates "" as its catalog's header); an
    escaped space goes, except inside a literal; an anonymous link shows as
    a link, with no underscore after it."""
    from ext.lessons.downloads import markdown

    text = (
        "Before.\n\n.. list-table::\n   :header-rows: 1\n\n   * -\n     - A\n     - B\n"
        "   * - Row\n     - one\n       line | two\n     - ``x``\n\nAfter **蓝色**\\ 表示 ``a\\ b``.\n"
    )
    gettext = {"Row": "行", "": "Project-Id-Version: lesson\nLanguage: zh_CN\n"}
    out = markdown(text, lambda s: gettext.get(s, s))
    assert "|  | A | B |\n|---|---|---|\n| 行 | one line \\| two | ``x`` |\n" in out
    assert "list-table" not in out and out.startswith("Before.") and "After" in out
    assert "**蓝色**表示 ``a\\ b``" in out
    from sphinx_gallery.gen_gallery import DEFAULT_GALLERY_CONF
    from sphinx_gallery.notebook import rst2md

    link = "See `#1 <https://example.org/1>`__ and `#2 <https://example.org/2>`_ here."
    shown = rst2md(markdown(link, str), DEFAULT_GALLERY_CONF, "", {})
    assert shown == "See [#1](https://example.org/1) and [#2](https://example.org/2) here.", shown


def test_a_scripts_list_table_is_translated_cell_by_cell():
    """In a translated script (the .py download), a list-table stays reST,
    with its options, one line a cell, each cell translated as on the page."""
    from ext.lessons.downloads import translate_rest

    text = (
        "Before.\n\n.. list-table::\n   :header-rows: 1\n\n   * -\n     - A\n"
        "   * - Row\n     - one\n       line"
    )
    gettext = {"Before.": "之前。", "Row": "行", "one line": "一行", "": "header"}
    out = translate_rest(text, lambda s: gettext.get(s, s))
    assert out == (
        "之前。\n\n.. list-table::\n   :header-rows: 1\n\n   * -\n     - A\n   * - 行\n     - 一行"
    ), out


SOLUTION = '''"""The answer."""

import torch


def helper(x):
    return x


class Answer(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x):
        return helper(x)

    @staticmethod
    def backward(ctx, grad_out, grad_extra):
        return grad_out


def unused(x):
    return x
'''


def test_an_exercise_is_a_workbook(tmp_path):
    """The reader's files end with the exercise to fill in, a check that
    prints what is wrong instead of stopping "Run all", and apart, the
    solution with its check; without dot, the notebook shows graphs as text."""
    import io
    import json
    import zipfile

    from ext.lessons.downloads import Linker, reader_files

    lesson = tmp_path / "01_a.py"
    lesson.write_text(LESSON.replace("import runpy", 'import runpy\nprove(check_a, "Answer")'))
    solution = tmp_path / "01_answer.py"
    solution.write_text(SOLUTION)
    (tmp_path / "out").mkdir()
    files = reader_files(lesson, None, lambda m: m, Linker({}, {}, {}), tmp_path / "out", solution)
    script = files["01_a.py"].decode()
    answer = script.index("# Your answer\n# -----------")
    # The solution's signatures and what the answer uses, with bodies to write.
    stub = script.index(
        "import torch\n\n\ndef helper(x):\n"
        '    """Write helper as the exercise asks."""\n'
        "    raise NotImplementedError(helper.__doc__)\n\n\n"
        "class Answer(torch.autograd.Function):\n    @staticmethod\n    def forward(ctx, x):\n"
        '        """Write forward: compute the result, and save what backward needs."""\n'
        "        raise NotImplementedError(Answer.forward.__doc__)\n\n"
        "    @staticmethod\n    def backward(ctx, grad_out, grad_extra):\n"
    )
    check = script.index("try:\n    check_a(Answer)\nexcept (AssertionError, NotImplementedError)")
    assert "def unused" not in script[stub:check]
    apart = script.index("# Solution\n# --------")
    assert answer < stub < check < apart < script.index('"""The answer."""')
    assert script.rstrip().endswith("check_a(Answer)") and "prove(" not in script
    assert files["01_answer.py"] == SOLUTION.encode()
    with zipfile.ZipFile(io.BytesIO(files["01_a.zip"])) as archive:  # the solution is apart
        assert sorted(archive.namelist()) == ["01_a.ipynb", "01_a.py"]
    cells = json.loads(files["01_a.ipynb"])["cells"]
    assert "".join(cells[0]["source"]).startswith("%pip install")
    no_dot = "".join(cells[1]["source"])
    assert 'shutil.which("dot") is None' in no_dot and "for_type(graphviz.Digraph" in no_dot
    assert "Graphviz's dot is not installed" in no_dot
    assert "".join(cells[-1]["source"]) == "check_a(Answer)"
    without = reader_files(lesson, None, str, Linker({}, {}, {}), tmp_path / "out")
    assert "# Your answer" not in without["01_a.py"].decode() and "01_answer.py" not in without


def catalog(path):
    """The translations of the catalog at *path*, as a gettext function."""
    import polib

    table = {e.msgid: e.msgstr for e in polib.pofile(str(path)).translated_entries()}
    return lambda msgid: table.get(msgid, msgid)


def signatures(code: str) -> set[tuple[str, str, str]]:
    """(class, function, parameters) of each function of *code*; class "" at module level."""
    import ast

    tree = ast.parse(code)
    scopes = [("", tree.body)] + [
        (c.name, c.body) for c in tree.body if isinstance(c, ast.ClassDef)
    ]
    return {
        (scope, f.name, ast.unparse(f.args))
        for scope, body in scopes
        for f in body
        if isinstance(f, ast.FunctionDef)
    }


EXERCISES = [p for p in LESSONS if p.name[:2] in {"01", "02", "03", "04", "05"}]


@pytest.mark.parametrize("lang", LANGUAGES)
@pytest.mark.parametrize("lesson", EXERCISES, ids=[p.stem for p in EXERCISES])
def test_the_workbook_starts_checks_and_solves(tmp_path, lesson, lang):
    """Run as a reader runs the downloaded script: the starting code defines
    what the check needs, with the solution's signatures; the check cell
    prints what to do (the starting code's instruction, in the reader's
    language, or for code to fix, its fault), not a bare error; the solution
    passes the check of each answer the exercise asks for (lesson 04: the
    Function and the wrapper)."""
    import contextlib
    import io

    from sphinx_gallery.py_source_parser import split_code_and_text_blocks

    from ext.lessons.downloads import PROVE, Linker, reader_files
    from ext.lessons.exercises import solution_file
    from ext.translation.languages import LOCALE
    from ext.translation.theme_labels import TODO_FORWARD

    translate, label = None, str
    if lang != LANGUAGES[0]:
        translate = catalog(LOCALE / lang / "LC_MESSAGES" / "lessons" / f"{lesson.stem}.po")
        label = catalog(LOCALE / lang / "LC_MESSAGES" / "sphinx.po")
    solution = solution_file(f"lessons/{lesson.stem}")
    files = reader_files(lesson, translate, label, Linker({}, {}, {}), tmp_path, solution)
    script = tmp_path / "reader.py"
    script.write_bytes(files[lesson.name])
    blocks = split_code_and_text_blocks(str(script))[1]
    *cells, start, try_it, answer, checks = [b.content for b in blocks if b.type == "code"]
    check, name, more = PROVE.search(lesson.read_text(encoding="utf-8")).groups()
    ns = {"__name__": "__main__"}
    with contextlib.redirect_stdout(io.StringIO()):
        exec(compile("\n".join(cells), str(script), "exec"), ns)
    ns.pop(name, None)
    exec(compile(start, "start", "exec"), ns)
    assert name in ns
    if "NotImplementedError" in start:  # the solution's signatures, forward's and backward's
        assert name in {scope for scope, _, _ in signatures(start)}
        assert signatures(start) <= signatures(solution.read_text(encoding="utf-8"))
    with pytest.raises(AssertionError) as failed:
        ns[check](ns[name])
    fault = "keep no tensor on ctx" if lesson.name.startswith("04") else label(TODO_FORWARD)
    assert fault in str(failed.value), failed.value
    assert lang == LANGUAGES[0] or fault != TODO_FORWARD  # translated
    printed = io.StringIO()
    with contextlib.redirect_stdout(printed):
        exec(compile(try_it, "check", "exec"), ns)
    assert fault in printed.getvalue() and "✓" not in printed.getvalue()
    exec(compile(answer, "solution", "exec"), ns)
    assert checks.split() == [f"{check}({n})" for n in [name, *re.findall(r"\w+", more)]]
    assert not lesson.name.startswith("04") or "check_softplus(softplus)" in checks
    exec(compile(checks, "checks", "exec"), ns)


@pytest.mark.parametrize("lang", LANGUAGES)
def test_a_lesson_page_names_what_it_needs_and_offers_its_downloads_at_its_top(site, lang):
    """Under the title, the packages the lesson's notebook installs (and
    Graphviz with its graphs), and the same three files as the page's footer."""
    import json
    import re

    for lesson in LESSONS:
        page = (site.html / lang / "lessons" / f"{lesson.stem}.html").read_text(encoding="utf-8")
        top = re.search(r'<p class="lesson-needs">(.*?)</p>', page)
        assert top and top.start() < page.index("<h2"), lesson.stem
        links = re.findall(r'href="([^"]+)"', top[1])
        footer = page[page.index("sphx-glr-footer") :]
        assert [s.rsplit(".", 1)[1] for s in links] == ["ipynb", "py", "zip"], links
        assert all(f'href="{link}"' in footer for link in links), lesson.stem
        notebook = json.loads((site.html / lang / "lessons" / links[0]).read_text("utf-8"))
        pip = "".join(notebook["cells"][0]["source"]).split()[2:]
        named = {re.split("[=<>]", req)[0] for req in pip} - {"setuptools"}
        shown = re.sub(r"<[^>]+>", "", top[1])
        assert all(name in shown for name in named), (lesson.stem, named, shown)
        assert ("Graphviz" in shown) == ("torchviz" in named), lesson.stem
