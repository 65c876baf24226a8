"""The lessons execute once; every language build reads what that run wrote.

sphinx-gallery executes scripts and writes their pages (reST, graphs, the
.py, .ipynb and .zip downloads) into the source tree. If each language build
ran it, the lessons would execute once per language, and two languages
building side by side would race on the same folder. So:

* ``python -m tools.gallery`` (``make gallery``) is the only process that loads
  sphinx-gallery's generator: it starts Sphinx with the tag ``run_lessons``
  (conf.py adds ``sphinx_gallery.gen_gallery`` for it), and sphinx-gallery
  executes the lessons whose source changed, one after another in this
  process (torch is imported once, and frozen out of the garbage collections
  sphinx-gallery runs between lessons), and writes docs/lessons/. The run
  reports
  a lesson that fails, or that warns, as one error naming the script and line
  (from sphinx-gallery's documented JUnit report), and records what it
  completed, so that an interrupted run is redone, and which PyTorch executed
  each lesson and when (``SOURCE_DATE_EPOCH``), which its page shows (see
  ext/lessons/provenance.py). When no lesson changed it answers without starting
  Sphinx; when the installed PyTorch is not the one that executed the
  lessons, they all run again; when an exercise's solution (or
  gallery/solutions/prove.py) changed, its lesson, whose hidden cell proves
  it, runs again.
* Every other build (html in each language, gettext) reads docs/lessons/ as
  ordinary reST and executes nothing; ext/lessons/gallery.py gives it
  sphinx-gallery's stylesheet.

A lesson's page shows what the lesson printed, so it must never show a warning
(with a path of the machine that built it). While a lesson runs, a warning
that Python would show is raised instead: see :func:`strict_warnings`. A
lesson that expects a warning catches it with :func:`warnings.catch_warnings`
and explains it.
"""

from __future__ import annotations

import argparse
import contextlib
import hashlib
import io
import json
import os
import re
import sys
import tempfile
import warnings
import xml.etree.ElementTree as ET
from pathlib import Path

from ext import ROOT
from ext.lessons.provenance import RUN_SUFFIX, recorded_run, run_file

COMPLETE = ".complete.json"
HEADER = "README.rst"


# --------------------------------------------------------------------------
# The execution run: python -m tools.gallery


def _md5(path: Path) -> str:
    """The checksum sphinx-gallery stores for a lesson (text mode, any newline)."""
    text = path.read_text(encoding="utf-8", errors="surrogateescape")
    return hashlib.md5(text.encode("utf-8", errors="surrogateescape")).hexdigest()


def lessons_in(gallery_dir: Path) -> list[Path]:
    return sorted(gallery_dir.glob("[0-9][0-9]_*.py"))


def stale_lessons(gallery_dir: Path, out_dir: Path) -> list[str]:
    """The lessons that the next run will execute: no current checksum."""
    stale = []
    for source in lessons_in(gallery_dir):
        md5_file = out_dir / (source.name + ".md5")
        if not md5_file.exists() or md5_file.read_text().strip() != _md5(source):
            stale.append(source.name)
    return stale


def installed_torch() -> str:
    """The version of the installed PyTorch, read without importing it."""
    from importlib.metadata import version

    return version("torch")


def solution_digest(gallery_dir: Path, script: str) -> str | None:
    """The checksum of what a lesson's hidden cell reads besides the lesson
    itself: its exercise's solution and ``solutions/prove.py`` (None for a
    lesson without an exercise). sphinx-gallery's checksum covers the lesson
    only, so a changed solution would otherwise be published unproved."""
    solutions = gallery_dir / "solutions"
    found = sorted(solutions.glob(f"{script[:3]}*.py"))
    if not found:
        return None
    return hashlib.md5(found[0].read_bytes() + (solutions / "prove.py").read_bytes()).hexdigest()


def forget_incomplete(
    out_dir: Path, torch_version: str | None = None, gallery_dir: Path | None = None
) -> None:
    """Make a lesson whose last run did not complete run again, every lesson
    that another PyTorch than *torch_version* executed, and (with
    *gallery_dir*) every lesson whose exercise's solution changed since.

    sphinx-gallery skips a lesson whose checksum file matches its source, but
    writes that file before the page, thumbnail and notebook. A checksum not
    recorded in the completion list therefore belongs to an interrupted run.
    """
    done, runs = _read_complete(out_dir).get("lessons", {}), lesson_runs(out_dir)
    for md5_file in out_dir.glob("*.py.md5"):
        script = md5_file.name.removesuffix(".md5")
        run = runs.get(script, {})
        if (
            done.get(md5_file.name) != md5_file.read_text().strip()
            or (torch_version is not None and run.get("torch") != torch_version)
            or (
                gallery_dir is not None
                and run.get("solution") != solution_digest(gallery_dir, script)
            )
        ):
            md5_file.unlink()


def _read_complete(out_dir: Path) -> dict:
    try:
        return json.loads((out_dir / COMPLETE).read_text())
    except (OSError, ValueError):
        return {}


def record_complete(
    out_dir: Path, gallery_dir: Path, executed: list[str] = (), run: dict | None = None
) -> None:
    """Record every lesson whose generated page matches its current source,
    the gallery header the index was made from, and for each lesson the run
    that executed it: *run* (PyTorch's version, ``SOURCE_DATE_EPOCH``) for
    the lessons named in *executed*, what was recorded before for the others."""
    previous = lesson_runs(out_dir)
    done, runs = {}, {}
    for md5_file in sorted(out_dir.glob("*.py.md5")):
        source = md5_file.with_suffix("")
        if source.exists() and _md5(source) == md5_file.read_text().strip():
            done[md5_file.name] = md5_file.read_text().strip()
            name = source.name
            if name in executed and run is not None:
                runs[name] = {**run, "solution": solution_digest(gallery_dir, name)}
            elif name in previous:
                runs[name] = previous[name]
    record = {"header": _md5(gallery_dir / HEADER), "lessons": done}
    _write_if_changed(out_dir / COMPLETE, json.dumps(record, indent=1, sort_keys=True) + "\n")
    # Each lesson's run in a file of its own, which only that lesson's page
    # depends on (ext/lessons/provenance.py): executing one lesson leaves the others'
    # files, and so their pages, untouched.
    for name, lesson_run in runs.items():
        _write_if_changed(run_file(out_dir, name), json.dumps(lesson_run, sort_keys=True) + "\n")
    for path in out_dir.glob(f"*{RUN_SUFFIX}"):
        if path.name.removesuffix(RUN_SUFFIX) not in runs:
            path.unlink()




def lesson_runs(out_dir: Path) -> dict[str, dict]:
    """For each lesson script name, the run that executed it."""
    names = (path.name.removesuffix(RUN_SUFFIX) for path in out_dir.glob(f"*{RUN_SUFFIX}"))
    runs = {name: recorded_run(out_dir, name) for name in sorted(names)}
    return {name: run for name, run in runs.items() if run is not None}


def up_to_date(gallery_dir: Path, out_dir: Path) -> bool:
    """True when a run would change nothing: every lesson and the header are
    as they were at the last completed run (so Sphinx need not even start)."""
    done = _read_complete(out_dir)
    runs = lesson_runs(out_dir)
    lessons = lessons_in(gallery_dir)
    torch_version = installed_torch()
    return (
        (out_dir / "index.rst").exists()
        and done.get("header") == _md5(gallery_dir / HEADER)
        and set(done.get("lessons", {})) == {f"{p.name}.md5" for p in lessons}
        and not stale_lessons(gallery_dir, out_dir)
        and all(done["lessons"][f"{p.name}.md5"] == _md5(p) for p in lessons)
        and all(runs.get(p.name, {}).get("torch") == torch_version for p in lessons)
        and all(
            runs.get(p.name, {}).get("solution") == solution_digest(gallery_dir, p.name)
            for p in lessons
        )
    )


def _write_if_changed(path: Path, text: str) -> None:
    if path.exists() and path.read_text() == text:
        return
    tmp = path.with_suffix(path.suffix + ".tmp")
    tmp.write_text(text)
    os.replace(tmp, path)


WARNING_CLASS = re.compile(r"^(?:\w+\.)*\w*Warning\b")


def describe_failure(src_file: str, formatted: str) -> str:
    """One error for a lesson that raised or warned: script, line, what to do."""
    rel = os.path.relpath(src_file, ROOT)
    lines = re.findall(rf'File "{re.escape(src_file)}", line (\d+)', formatted)
    where = f"{rel}:{lines[-1]}" if lines else rel
    last = formatted.strip().splitlines()[-1]
    body = "\n".join("    " + ln for ln in formatted.strip().splitlines())
    if WARNING_CLASS.match(last):
        return (
            f"error: lesson {where} warned {last}\n{body}\n"
            "A lesson's page must show no warning. Avoid what causes it, or, if the "
            "lesson means to show it, catch it there with warnings.catch_warnings() "
            f"and say why in the text. See it with: python {rel}"
        )
    return f"error: lesson {where} raised {last}\n{body}\nReproduce it with: python {rel}"


def read_junit(path: Path, srcdir: Path) -> tuple[list[str], dict[str, str]]:
    """The lessons that sphinx-gallery executed, and the tracebacks of those
    that failed, from the JUnit report it writes (its documented ``junit``
    option). Lessons it did not execute (unchanged) are not in the report."""
    if not path.exists():
        return [], {}
    executed, failed = [], {}
    for case in ET.parse(path).getroot().iter("testcase"):
        src_file = str((srcdir / case.get("file")).resolve())
        executed.append(src_file)
        failure = case.find("failure")
        if failure is not None:
            failed[src_file] = failure.text or failure.get("message", "")
    return executed, failed


@contextlib.contextmanager
def captured_output():
    """What this process writes to stdout and stderr (Sphinx, sphinx-gallery,
    torch's C++ side), kept until the run has said what went wrong."""
    log = io.StringIO()
    with tempfile.TemporaryFile("w+") as file:
        sys.stdout.flush()
        sys.stderr.flush()
        saved = os.dup(1), os.dup(2)
        os.dup2(file.fileno(), 1)
        os.dup2(file.fileno(), 2)
        try:
            yield log
        finally:
            sys.stdout.flush()
            sys.stderr.flush()
            for fd, old in zip((1, 2), saved, strict=True):
                os.dup2(old, fd)
                os.close(old)
            file.seek(0)
            log.write(file.read())


def run(plot: bool = True, srcdir: Path = ROOT / "docs", builddir: Path = ROOT / "_build") -> int:
    """Generate the gallery (executing stale lessons if *plot*). Returns an exit code."""
    out_dir = srcdir / "lessons"
    gallery_dir = ROOT / "gallery"
    lessons = lessons_in(gallery_dir)
    if plot and up_to_date(gallery_dir, out_dir):
        print(f"gallery: executed 0 lesson(s) ; reused {len(lessons)}")
        return 0
    from ext.lessons.graphs import DotMissingError, require_dot

    if out_dir.exists():
        forget_incomplete(
            out_dir, installed_torch() if plot else None, gallery_dir if plot else None
        )
    stale = stale_lessons(gallery_dir, out_dir)
    if plot and stale:
        try:
            require_dot()
        except DotMissingError as exc:
            print(f"error: {exc}", file=sys.stderr)
            return 1
    from sphinx.application import Sphinx
    from sphinx.errors import SphinxError

    outdir = builddir / "gallery"
    junit = outdir / "lessons-junit.xml"
    junit.unlink(missing_ok=True)
    if plot and stale:
        # sphinx-gallery collects garbage before every lesson. What importing
        # torch creates lives as long as the run, so it is frozen out of those
        # collections (gc.freeze, Python's documented call for this), instead
        # of being walked again for each lesson: 8.1 s -> 6.5 s for 15 lessons.
        import gc

        import torch  # noqa: F401
        import torchviz  # noqa: F401

        gc.freeze()
    overrides = {
        "plot_gallery": str(plot),
        "sphinx_gallery_conf.junit": junit.name,
    }
    messages = io.StringIO()
    try:
        # sphinx-gallery generates the gallery when Sphinx has made its builder
        # (the builder-inited event), so the application's start-up is the whole
        # run: nothing is read or written afterwards.
        with captured_output() as log:
            Sphinx(
                srcdir, ROOT, outdir, outdir / "doctrees", "dummy", confoverrides=overrides,
                status=None, warning=messages, freshenv=True, tags=["run_lessons"],
            )  # fmt: skip
    except SphinxError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 1
    output = messages.getvalue() + log.getvalue()
    executed, failed = read_junit(junit, srcdir)
    if failed:
        for src_file, formatted in sorted(failed.items()):
            print(describe_failure(src_file, formatted), file=sys.stderr)
        return 1
    if output.strip():
        print(output, file=sys.stderr, end="")
        print("error: running the lessons made Sphinx warn (see above)", file=sys.stderr)
        return 1
    if plot and stale and not junit.exists():
        print("error: sphinx-gallery executed nothing at Sphinx's start-up", file=sys.stderr)
        return 1
    epoch = int(os.environ.get("SOURCE_DATE_EPOCH", "0"))
    names = sorted(Path(p).name for p in executed)
    run_info = {"torch": _running_torch(), "epoch": epoch} if names and plot else None
    record_complete(out_dir, gallery_dir, names, run_info)
    print(
        f"gallery: executed {len(names)} lesson(s) {' '.join(names)}; "
        f"reused {len(lessons) - len(names)}"
    )
    return 0


def _running_torch() -> str:
    """The version of the PyTorch this process imported to run the lessons."""
    torch = sys.modules.get("torch")
    return torch.__version__ if torch is not None else installed_torch()


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--no-plot", action="store_true", help="execute nothing")
    args = parser.parse_args(argv)
    return run(plot=not args.no_plot)


if __name__ == "__main__":
    sys.exit(main())
