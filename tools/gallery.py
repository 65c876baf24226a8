"""``make gallery``: execute the lessons whose source changed, once for every language.

sphinx-gallery executes scripts and writes their pages (reST, graphs, the .py,
.ipynb and .zip downloads) into docs/lessons/. This is the only process that
loads its generator: it starts Sphinx with the tag ``run_lessons`` (conf.py),
and sphinx-gallery executes the stale lessons, side by side in worker
processes (its documented ``parallel`` option, one worker per core) or, for a
single lesson, in this process. Every language build then reads docs/lessons/ as plain reST
(docs/building.md, "How the build works").

What sphinx-gallery does not do, this adds:

* A lesson that raises or warns is one error naming its script and line, read
  from sphinx-gallery's documented JUnit report (its output is kept until
  then, and shown only when something went wrong).
* Each executed lesson gets a record, ``<lesson>.run.json``: the checksum of
  the source it ran, the PyTorch that ran it and when (``SOURCE_DATE_EPOCH``,
  shown on its page by ext/lessons/provenance.py), and the checksum of its
  exercise's solution. sphinx-gallery writes its own checksum file before the
  page, so a checksum without a matching record is an interrupted run; such a
  lesson runs again, as does every lesson another PyTorch executed and every
  lesson whose solution (or gallery/solutions/prove.py, which its hidden cell
  runs) changed.
* When nothing is stale, Sphinx is not even started.
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

HEADER = "README.rst"  # the gallery's header, which sphinx-gallery makes the index from
HEADER_RECORD = ".header.md5"


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
    """The checksum of the exercise solution that a lesson's hidden cell proves,
    with ``solutions/prove.py`` (None for a lesson without an exercise)."""
    solutions = gallery_dir / "solutions"
    found = sorted(solutions.glob(f"{script[:3]}*.py"))
    if not found:
        return None
    return hashlib.md5(found[0].read_bytes() + (solutions / "prove.py").read_bytes()).hexdigest()


def lesson_runs(out_dir: Path) -> dict[str, dict]:
    """For each lesson script name, the record of the run that executed it."""
    names = (path.name.removesuffix(RUN_SUFFIX) for path in out_dir.glob(f"*{RUN_SUFFIX}"))
    runs = {name: recorded_run(out_dir, name) for name in sorted(names)}
    return {name: run for name, run in runs.items() if run is not None}


def _current(run: dict, md5: str, gallery_dir: Path | None, script: str, torch: str | None) -> bool:
    """Whether *run* executed the source whose checksum is *md5*, and (unless
    None) with the current solution in *gallery_dir* and the PyTorch *torch*."""
    return (
        run.get("md5") == md5
        and (gallery_dir is None or run.get("solution") == solution_digest(gallery_dir, script))
        and (torch is None or run.get("torch") == torch)
    )


def forget_incomplete(
    out_dir: Path, gallery_dir: Path | None = None, torch: str | None = None
) -> None:
    """Remove sphinx-gallery's checksum of every lesson whose record does not
    match it, so that the lesson runs again (see the module's docstring)."""
    runs = lesson_runs(out_dir)
    for md5_file in out_dir.glob("*.py.md5"):
        script = md5_file.name.removesuffix(".md5")
        md5 = md5_file.read_text().strip()
        if not _current(runs.get(script, {}), md5, gallery_dir, script, torch):
            md5_file.unlink()


def record_runs(
    out_dir: Path, gallery_dir: Path, executed: list[str] = (), run: dict | None = None
) -> None:
    """Record *run* (PyTorch's version, ``SOURCE_DATE_EPOCH``) for each lesson
    in *executed*, keep the records of the other current lessons, and drop the
    rest. Each record is a file of its own, which only its lesson's page
    depends on: executing one lesson leaves the other pages untouched."""
    previous = lesson_runs(out_dir)
    runs = {}
    for source in lessons_in(gallery_dir):
        name = source.name
        if name in executed and run is not None:
            runs[name] = {
                **run,
                "md5": _md5(source),
                "solution": solution_digest(gallery_dir, name),
            }
        elif name in previous:
            runs[name] = previous[name]
    for name, record in runs.items():
        _write_if_changed(run_file(out_dir, name), json.dumps(record, sort_keys=True) + "\n")
    for path in out_dir.glob(f"*{RUN_SUFFIX}"):
        if path.name.removesuffix(RUN_SUFFIX) not in runs:
            path.unlink()
    _write_if_changed(out_dir / HEADER_RECORD, _md5(gallery_dir / HEADER) + "\n")


def forget_removed(gallery_dir: Path, out_dir: Path) -> list[Path]:
    """Remove what the run wrote for a lesson that gallery/ no longer has (one
    renamed or deleted): sphinx-gallery only adds, and a page left behind
    would be built, outside every table of contents. Returns what it removed."""
    stems = "|".join(re.escape(p.stem) for p in lessons_in(gallery_dir)) or "(?!)"
    mine = re.compile(rf"(?:{stems})\.|sphx_glr_(?:{stems})_(?:\d{{3}}|thumb)\.")
    found = [*out_dir.glob("[0-9][0-9]_*"), *out_dir.glob("images/**/sphx_glr_[0-9][0-9]_*")]
    removed = [path for path in found if path.is_file() and not mine.match(path.name)]
    for path in removed:
        path.unlink()
    return removed


def up_to_date(gallery_dir: Path, out_dir: Path) -> bool:
    """True when a run would change nothing (so Sphinx need not even start)."""
    lessons, runs, torch = lessons_in(gallery_dir), lesson_runs(out_dir), installed_torch()
    header = out_dir / HEADER_RECORD
    return (
        (out_dir / "index.rst").exists()
        and header.exists()
        and header.read_text().strip() == _md5(gallery_dir / HEADER)
        and set(runs) == {p.name for p in lessons}
        and not stale_lessons(gallery_dir, out_dir)
        and all(_current(runs[p.name], _md5(p), gallery_dir, p.name, torch) for p in lessons)
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
    forget_removed(gallery_dir, out_dir)
    if plot and up_to_date(gallery_dir, out_dir):
        print(f"gallery: executed 0 lesson(s) ; reused {len(lessons)}")
        return 0
    from ext.lessons.graphs import DotMissingError, require_dot

    if out_dir.exists():
        forget_incomplete(out_dir, *((gallery_dir, installed_torch()) if plot else ()))
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
    overrides = {
        "plot_gallery": str(plot),
        "sphinx_gallery_conf.junit": junit.name,
    }
    messages = io.StringIO()
    try:
        # sphinx-gallery generates the gallery when Sphinx has made its builder
        # (the builder-inited event), so the application's start-up is the whole
        # run: nothing is read or written afterwards.
        with captured_output() as log, warnings.catch_warnings():
            warnings.filterwarnings("ignore", message=WORKER_RESTARTED, category=UserWarning)
            Sphinx(
                srcdir, ROOT, outdir, outdir / "doctrees", "dummy", confoverrides=overrides,
                status=None, warning=messages, freshenv=True, tags=["run_lessons"],
                parallel=workers(len(stale) if plot else 0),
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
    record_runs(out_dir, gallery_dir, names, run_info)
    print(
        f"gallery: executed {len(names)} lesson(s) {' '.join(names)}; "
        f"reused {len(lessons) - len(names)}"
    )
    return 0


# Upstream limitation (joblib 1.6's loky, which sphinx-gallery's parallel run
# uses, with no public switch): where psutil is installed (ipykernel brings
# it), a worker whose memory grew by more than 300 MB since its first task is
# replaced by a new one once its task is done, and when tasks were waiting
# the replacement is announced with this warning. A lesson that first
# compiles with torch.compile grows a worker that much. The task's result has
# already come back, so only the warning is dropped; a worker that dies
# mid-task still fails the run (joblib raises TerminatedWorkerError).
WORKER_RESTARTED = "A worker stopped while some jobs were given to the executor"


def workers(stale: int) -> int:
    """How many processes execute the *stale* lessons (sphinx-gallery's
    ``parallel``, which conf.py takes from Sphinx's): one per core this
    process may use, and no more than there are lessons to run. One means the
    lessons run in this process, which needs no worker to start and import
    torch (an edited lesson, or a machine of one core)."""
    return max(1, min(stale, len(os.sched_getaffinity(0))))


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
