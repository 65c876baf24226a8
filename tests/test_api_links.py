"""Unit tests of the offline links to PyTorch's API (conf.py, "PyTorch's API"):
the PyTorch inventory is written from the hand-kept list (``make inventory``),
and sphinx-gallery, as conf.py loads it in a language build, links a lesson's
code and writes nothing into the sources.
"""

from __future__ import annotations

import re
import subprocess
import sys

from ext import ROOT


def test_the_inventory_is_written_from_the_list():
    """`make inventory` was run after the last change to pytorch.txt."""
    import sphobjinv

    folder = ROOT / "docs" / "_inventories"
    listed = sphobjinv.Inventory(plaintext=(folder / "pytorch.txt").read_bytes())
    written = sphobjinv.Inventory(folder / "pytorch.inv")
    assert [o.as_str for o in written.objects] == [o.as_str for o in listed.objects]
    names = [o.name for o in listed.objects]
    assert len(names) == len(set(names))
    for obj in listed.objects:
        assert obj.domain == "py" and not obj.uri.startswith(("http", "/")), obj.as_str
        assert re.fullmatch(r"(generated/[\w.]+\.html#\$?[\w.]*|[a-z]+\.html(#\$)?)", obj.uri), (
            obj.uri
        )
    for name in [
        "torch.autograd.Function",
        "torch.autograd.gradcheck",
        "torch.autograd.gradgradcheck",
        "torch.autograd.function.FunctionCtx.save_for_backward",
        "torch.autograd.function.once_differentiable",
        "torch.func.grad",
        "torch.library.custom_op",
    ]:
        assert name in names, name


# A project of one lesson, built as the site is: conf.py's settings, the lesson
# run (tag run_lessons) writing docs/lessons/, then a language build.
LESSON = '''"""
A lesson
========
"""

import torch

torch.autograd.gradcheck(torch.sin, torch.ones(1, dtype=torch.double, requires_grad=True))
'''
CONF = f"""
import runpy

site = runpy.run_path({str(ROOT / "conf.py")!r}, init_globals={{"tags": tags}})
intersphinx_mapping = site["intersphinx_mapping"]
if tags.has("run_lessons"):
    extensions = ["sphinx_gallery.gen_gallery"]
    sphinx_gallery_conf = dict(examples_dirs="../gallery", gallery_dirs="lessons", plot_gallery=False)
else:
    wanted = ("sphinx.ext.intersphinx", "sphinx_gallery.gen_gallery", "ext.lessons.gallery")
    extensions = [name for name in site["extensions"] if name in wanted]
    sphinx_gallery_conf = site["sphinx_gallery_conf"]
"""


def snapshot(folder):
    """Every file and folder under *folder*: its bytes and modification time
    (a folder's changes when a file is made or removed in it)."""
    return {p: (p.is_file() and p.read_bytes(), p.stat().st_mtime_ns) for p in folder.rglob("*")}


def test_a_language_build_links_the_lessons_code_and_writes_nothing(tmp_path):
    """sphinx-gallery, loaded by a language build with no gallery to generate,
    links the names of a lesson's code through the local inventory (from the
    .codeobj.json of the lesson run), writes nothing into the sources, which
    the languages share while they build side by side, and adds to the page
    its stylesheet only (ext/lessons/gallery.py leaves out its tag script)."""
    (tmp_path / "gallery").mkdir()
    (tmp_path / "gallery" / "README.rst").write_text("Lessons\n=======\n")
    (tmp_path / "gallery" / "01_a.py").write_text(LESSON)
    src = tmp_path / "docs"
    (src / "_inventories").mkdir(parents=True)
    (src / "_inventories" / "pytorch.inv").write_bytes(
        (ROOT / "docs" / "_inventories" / "pytorch.inv").read_bytes()
    )
    (src / "conf.py").write_text(CONF)
    (src / "index.rst").write_text("Site\n====\n\n.. toctree::\n\n   lessons/index\n")

    def build(out: str, *args: str) -> None:
        cmd = [sys.executable, "-m", "sphinx", "-W", "-q", *args, str(src), str(tmp_path / out)]
        result = subprocess.run(cmd, capture_output=True, text=True)
        assert result.returncode == 0, result.stderr

    build("run", "-b", "dummy", "-t", "run_lessons")
    assert (src / "lessons" / "01_a.codeobj.json").is_file()
    before = snapshot(src)
    build("html", "-b", "html")
    after = snapshot(src)
    written = sorted(
        str(p.relative_to(src)) for p in before | after if before.get(p) != after.get(p)
    )
    assert not written, f"a language build wrote into the sources: {written}"
    page = (tmp_path / "html" / "lessons" / "01_a.html").read_text(encoding="utf-8")
    code = "".join(re.findall(r"<pre.*?</pre>", page, flags=re.S))
    assert re.search(r'href="https://docs\.pytorch\.org/[^"]*torch\.autograd\.gradcheck', code)
    assert re.findall(r"_static/(sg[\w.-]*)\?", page) == ["sg_gallery.css"]
