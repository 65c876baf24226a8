"""Unit tests of tools/gallery.py and ext/lessons/gallery.py: the lesson run's bookkeeping (the checksums,
the record of a complete run, which lessons are stale and when the gallery is
up to date, the run that executed each lesson), the warnings that stop a
lesson while it runs, the message that names a failed lesson's line, the JUnit
report of the run, and where the gallery's stylesheet is found.
"""

from __future__ import annotations

import json
from types import SimpleNamespace

from ext.lessons import gallery as sphinx_side
from tools import gallery

# -- the lesson run's bookkeeping ----------------------------------------------


def test_describe_failure_names_script_and_line():
    src = str(gallery.ROOT / "gallery" / "01_x.py")
    tb = (
        "Traceback (most recent call last):\n"
        f'  File "{src}", line 12, in <module>\n'
        "    f()\n"
        f'  File "{src}", line 4, in f\n'
        "    raise ValueError('boom')\n"
        "ValueError: boom\n"
    )
    text = gallery.describe_failure(src, tb)
    assert text.splitlines()[0] == "error: lesson gallery/01_x.py:4 raised ValueError: boom"
    assert text.splitlines()[-1] == "Reproduce it with: python gallery/01_x.py"


def test_a_checksum_without_its_record_is_an_interrupted_run(tmp_path):
    """sphinx-gallery writes its checksum before the page: a checksum that no
    record of a completed run matches is forgotten, so the lesson runs again."""
    src, out = tmp_path / "gallery", tmp_path / "out"
    src.mkdir()
    out.mkdir()
    (src / gallery.HEADER).write_text("Lessons\n")
    for name in ("01_a.py", "02_b.py"):
        (src / name).write_text(f"print({name!r})\n")
        (out / f"{name}.md5").write_text(gallery._md5(src / name))
    gallery.record_runs(out, src, ["01_a.py"], {"torch": "1", "epoch": 1})
    gallery.forget_incomplete(out)
    assert gallery.stale_lessons(src, out) == ["02_b.py"]


def test_each_lesson_keeps_the_run_that_executed_it(tmp_path):
    (tmp_path / gallery.HEADER).write_text("Lessons\n")
    for name in ("01_a.py", "02_b.py"):
        (tmp_path / name).write_text(f"print({name!r})\n")
        (tmp_path / f"{name}.md5").write_text(gallery._md5(tmp_path / name))
    gallery.record_runs(tmp_path, tmp_path, ["01_a.py", "02_b.py"], {"torch": "1", "epoch": 1})
    first = gallery.run_file(tmp_path, "01_a.py").stat().st_mtime_ns
    gallery.record_runs(tmp_path, tmp_path, ["02_b.py"], {"torch": "2", "epoch": 2})
    runs = gallery.lesson_runs(tmp_path)
    assert {name: (r["torch"], r["epoch"]) for name, r in runs.items()} == {
        "01_a.py": ("1", 1),
        "02_b.py": ("2", 2),
    }
    assert runs["02_b.py"]["md5"] == gallery._md5(tmp_path / "02_b.py")
    # The page of a lesson that did not run depends on a file left untouched.
    assert gallery.run_file(tmp_path, "01_a.py").stat().st_mtime_ns == first
    # A lesson that is gone loses its record.
    (tmp_path / "02_b.py").unlink()
    gallery.record_runs(tmp_path, tmp_path)
    assert list(gallery.lesson_runs(tmp_path)) == ["01_a.py"]


def test_another_pytorch_runs_every_lesson_again(tmp_path):
    src, out = tmp_path / "gallery", tmp_path / "out"
    src.mkdir()
    out.mkdir()
    (src / gallery.HEADER).write_text("Lessons\n")
    (src / "01_a.py").write_text("a\n")
    (out / "01_a.py").write_text("a\n")
    (out / "01_a.py.md5").write_text(gallery._md5(src / "01_a.py"))
    (out / "index.rst").write_text("index\n")
    gallery.record_runs(out, src, ["01_a.py"], {"torch": "0.0.1", "epoch": 0})
    assert not gallery.up_to_date(src, out)
    gallery.forget_incomplete(out, src, gallery.installed_torch())
    assert gallery.stale_lessons(src, out) == ["01_a.py"]


def test_a_changed_solution_runs_its_lesson_again(tmp_path):
    """The hidden cell of a lesson with an exercise proves the solution: a
    changed solution (or prove.py) makes the lesson run again, its source
    unchanged; another lesson's solution does not."""
    src, out = tmp_path / "gallery", tmp_path / "out"
    (src / "solutions").mkdir(parents=True)
    out.mkdir()
    (src / gallery.HEADER).write_text("Lessons\n")
    for name in ("01_a.py", "02_b.py"):
        (src / name).write_text(f"{name}\n")
        (out / name).write_text(f"{name}\n")
        (out / f"{name}.md5").write_text(gallery._md5(src / name))
    (src / "solutions" / "01_a.py").write_text("answer = 1\n")
    (src / "solutions" / "prove.py").write_text("def prove(): ...\n")
    (out / "index.rst").write_text("index\n")
    run = {"torch": gallery.installed_torch(), "epoch": 0}
    gallery.record_runs(out, src, ["01_a.py", "02_b.py"], run)
    assert gallery.up_to_date(src, out)
    (src / "solutions" / "01_a.py").write_text("answer = 2\n")
    assert not gallery.up_to_date(src, out)
    gallery.forget_incomplete(out, src, run["torch"])
    assert gallery.stale_lessons(src, out) == ["01_a.py"]


def test_our_checksum_is_sphinx_gallerys(tmp_path):
    from sphinx_gallery.utils import get_md5sum

    path = tmp_path / "a.py"
    path.write_bytes("x = 'ü'\r\nprint(x)\n".encode())
    assert gallery._md5(path) == get_md5sum(path, mode="t")


def test_up_to_date_needs_every_lesson_and_the_header_unchanged(tmp_path):
    src, out = tmp_path / "gallery", tmp_path / "out"
    src.mkdir()
    out.mkdir()
    (src / gallery.HEADER).write_text("Lessons\n")
    (src / "01_a.py").write_text("a\n")
    (out / "01_a.py").write_text("a\n")
    (out / "01_a.py.md5").write_text(gallery._md5(src / "01_a.py"))
    (out / "index.rst").write_text("index\n")
    run = {"torch": gallery.installed_torch(), "epoch": 0}
    gallery.record_runs(out, src, ["01_a.py"], run)
    assert gallery.up_to_date(src, out)
    (src / gallery.HEADER).write_text("Lessons, renamed\n")
    assert not gallery.up_to_date(src, out)
    gallery.record_runs(out, src)
    assert gallery.up_to_date(src, out)
    (src / "02_b.py").write_text("b\n")
    assert not gallery.up_to_date(src, out)


def test_stale_lessons(tmp_path):
    src, out = tmp_path / "gallery", tmp_path / "out"
    src.mkdir()
    out.mkdir()
    (src / "01_a.py").write_text("a\n")
    (src / "02_b.py").write_text("b\n")
    (out / "01_a.py.md5").write_text(gallery._md5(src / "01_a.py"))
    assert gallery.stale_lessons(src, out) == ["02_b.py"]


def test_what_a_renamed_lesson_left_behind_is_removed(tmp_path):
    src, out = tmp_path / "gallery", tmp_path / "out"
    (out / "images" / "thumb").mkdir(parents=True)
    src.mkdir()
    for name in ("01_a.py", "02_b_c.py"):  # 02_b_c was 02_b: its old name is a prefix
        (src / name).write_text("x\n")
    kept = ["01_a.rst", "01_a.py.md5", "02_b_c.ipynb", "images/sphx_glr_02_b_c_001.svg",
            "images/thumb/sphx_glr_01_a_thumb.svg", "index.rst"]  # fmt: skip
    gone = ["02_b.rst", "02_b.py", "02_b.py.md5", "02_b.py.run.json", "02_b.codeobj.json",
            "images/sphx_glr_02_b_001.svg", "images/thumb/sphx_glr_02_b_thumb.svg"]  # fmt: skip
    for name in kept + gone:
        (out / name).write_text("x\n")
    assert sorted(gallery.forget_removed(src, out)) == sorted(out / name for name in gone)
    assert all((out / name).exists() for name in kept)
    assert not any((out / name).exists() for name in gone)


# -- the lesson run: warnings, failures, the JUnit report ------------------------

STRICT = """
import json, warnings
from ext.lessons import gallery

def outcome(code, module="__main__"):
    try:
        exec(code, {"__name__": module, "warnings": warnings})
    except Warning as w:
        return type(w).__name__
    return "not raised"

warn = "warnings.warn('x', {}, stacklevel=1)"
gallery.strict_warnings({}, "01_a.py", "before")
found = {
    "user": outcome(warn.format("UserWarning")),
    "future in a library": outcome(warn.format("FutureWarning"), "torch.jit._script"),
    "deprecation in the lesson": outcome(warn.format("DeprecationWarning")),
    "deprecation in a library": outcome(warn.format("DeprecationWarning"), "torchviz.dot"),
    "caught by the lesson": outcome(
        "with warnings.catch_warnings(record=True) as caught:\\n"
        "    warnings.simplefilter('always')\\n"
        "    " + warn.format("UserWarning")
    ),
    "recorded by a library": outcome(
        "with warnings.catch_warnings(record=True) as caught:\\n"
        "    " + warn.format("UserWarning"), "torch.library"
    ),
}
gallery.strict_warnings({}, "01_a.py", "after")
found["after the lesson"] = outcome(warn.format("UserWarning"))
print(json.dumps(found))
"""


def test_while_a_lesson_runs_a_warning_python_would_show_is_raised():
    """In a fresh interpreter, as in the lesson run (pytest records warnings)."""
    import subprocess
    import sys

    run = subprocess.run(
        [sys.executable, "-c", STRICT], cwd=gallery.ROOT, capture_output=True, text=True
    )
    assert run.returncode == 0, run.stderr
    assert json.loads(run.stdout) == {
        "user": "UserWarning",
        "future in a library": "FutureWarning",
        "deprecation in the lesson": "DeprecationWarning",
        "deprecation in a library": "not raised",  # hidden from a reader too
        "caught by the lesson": "not raised",
        "recorded by a library": "not raised",  # torch's opcheck records warnings
        "after the lesson": "not raised",  # shown as usual
    }
    assert "UserWarning: x" in run.stderr  # the one shown after the lesson


def test_describe_failure_names_the_line_that_warned_and_what_to_do():
    src = str(gallery.ROOT / "gallery" / "08_x.py")
    tb = (
        "Traceback (most recent call last):\n"
        f'  File "{src}", line 58, in <module>\n'
        "    x_dual = fwAD.make_dual(x, v)\n"
        '  File "/venv/lib/python3.11/site-packages/torch/jit/_script.py", line 1491, in script\n'
        "    warnings.warn(\n"
        "FutureWarning: `torch.jit.script` is deprecated.\n"
    )
    text = gallery.describe_failure(src, tb)
    first = text.splitlines()[0]
    assert first == (
        "error: lesson gallery/08_x.py:58 warned FutureWarning: `torch.jit.script` is deprecated."
    )
    assert "warnings.catch_warnings()" in text


def test_the_junit_report_gives_executed_and_failed_lessons(tmp_path):
    src = tmp_path / "docs"
    src.mkdir()
    report = tmp_path / "j.xml"
    report.write_text(
        '<?xml version="1.0" encoding="utf-8"?><testsuite>'
        '<testcase classname="01_a" file="../gallery/01_a.py" line="1" name="A" time="1"/>'
        '<testcase classname="02_b" file="../gallery/02_b.py" line="1" name="B" time="1">'
        '<failure message="ValueError: boom">Traceback\nValueError: boom</failure></testcase>'
        "</testsuite>"
    )
    executed, failed = gallery.read_junit(report, src)
    a, b = (str((tmp_path / "gallery" / n).resolve()) for n in ("01_a.py", "02_b.py"))
    assert executed == [a, b]
    assert failed == {b: "Traceback\nValueError: boom"}
    assert gallery.read_junit(tmp_path / "missing.xml", src) == ([], {})


def test_sphinx_gallerys_folders_are_named_relative_to_an_in_tree_environment(tmp_path):
    venv = tmp_path / ".venv" / "sphinx_gallery"
    app = SimpleNamespace(confdir=str(tmp_path))
    config = SimpleNamespace(
        html_static_path=["docs/_static", str(venv / "_static"), "/elsewhere/_static"],
        templates_path=["docs/_templates", str(venv / "components")],
    )
    sphinx_side.relative_gallery_folders(app, config)
    assert config.html_static_path == [
        "docs/_static",
        ".venv/sphinx_gallery/_static",
        "/elsewhere/_static",
    ]
    assert config.templates_path == ["docs/_templates", ".venv/sphinx_gallery/components"]


def test_the_stale_lessons_run_in_one_worker_per_core_and_one_alone_in_this_process(
    monkeypatch,
):
    monkeypatch.setattr(gallery.os, "sched_getaffinity", lambda pid: {0, 1})
    assert [gallery.workers(n) for n in (0, 1, 2, 19)] == [1, 1, 2, 2]
    monkeypatch.setattr(gallery.os, "sched_getaffinity", lambda pid: {0})
    assert gallery.workers(19) == 1


def test_the_dropped_worker_warning_is_still_lokys_own_words():
    """tools/gallery.py drops loky's warning that it replaced a worker (an
    upstream limitation it names): the words it matches must be the ones the
    pinned joblib warns with, or a change upstream would let it through."""
    import inspect

    from joblib.externals.loky import process_executor

    source = " ".join(inspect.getsource(process_executor).replace('"', " ").split())
    assert " ".join(gallery.WORKER_RESTARTED.split()) in source
