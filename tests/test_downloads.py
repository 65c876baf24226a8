"""Unit tests of ext/lessons/downloads.py: a lesson's download drops what only the
build needs, names the packages a reader with PyTorch lacks in a note in the
page's language, and a notebook's roles become Markdown links.
"""

from __future__ import annotations

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


def test_a_download_names_what_a_reader_with_pytorch_lacks():
    from importlib.metadata import version

    from ext.lessons.downloads import imported_modules, requirements

    assert imported_modules(LESSON) == {"numpy", "torchviz", "runpy"}
    torchviz = f"torchviz=={version('torchviz')}"  # as the build draws the graphs
    assert requirements(imported_modules(LESSON)) == [torchviz, "setuptools", "numpy"]
    assert requirements(imported_modules("import torch\nimport warnings\n")) == []


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
    assert add_note(LESSON, [], True, str) == LESSON


def test_a_notebook_turns_roles_into_links():
    from ext.lessons.downloads import Linker

    link = Linker(
        api={"torch.autograd.gradcheck": "https://docs/gradcheck.html"},
        labels={"lesson-b": ("lessons/02_b", "lesson-b", "Pattern B")},
        titles={"summary": "Summary"},
    )
    text = "Use :func:`~torch.autograd.gradcheck`, :ref:`lesson-b`, :doc:`/summary`."
    assert (
        link(text)
        == "Use [`gradcheck`](https://docs/gradcheck.html), [Pattern B](02_b.ipynb), Summary."
    )
    link.baseurl = "https://example.org/en/"
    assert "[Summary](https://example.org/en/summary.html)" in link(text)
    assert "[Pattern B](https://example.org/en/lessons/02_b.html#lesson-b)" in link(text)
    assert (
        link(":ref:`the rules <lesson-b>`")
        == "[the rules](https://example.org/en/lessons/02_b.html#lesson-b)"
    )
