"""make bench: how fast the site builds for authors and translators.

Every figure is measured on whole processes (make) in a temporary copy of the
project, so the working tree is never touched. Each timing is the median of
RUNS runs, with its min and max. The report is written to
_build/bench/report.md and report.json.

    python -m tools.bench [--runs N] [--quick] [--out DIR] [--compare DIR]

--compare DIR measures another checkout of the project (say, main before a
change) in the same session, the two alternating run by run, so that both
see the same machine. --quick measures each figure once (for the test that
keeps this script working); its numbers are not the project's numbers.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from ext import ROOT
from tools.workspace import copy_project

VENV = Path(sys.prefix)
# figure: (what is compared, limit, lessons executed that the target allows)
TARGETS = {
    "clean": ("× the floor run just before it", 2.5, None),
    "zh_after_en": ("× the en build", 0.55, 0),
    "translator": ("× a no-change rebuild", 1.5, 0),
    "author": ("lessons executed", None, 1),
}
FLOOR = """
import contextlib, io, runpy, sys
for path in sys.argv[1:]:
    with contextlib.redirect_stdout(io.StringIO()):
        runpy.run_path(path, run_name="__main__")
"""


def timed(cmd: list[str], cwd: Path) -> tuple[float, int]:
    """Run *cmd*; return its wall time and how many lessons it executed."""
    env = dict(os.environ, SOURCE_DATE_EPOCH="315532800")
    env.pop("MAKEFLAGS", None)
    start = time.perf_counter()
    result = subprocess.run(cmd, cwd=cwd, env=env, capture_output=True, text=True)
    elapsed = time.perf_counter() - start
    if result.returncode:
        sys.exit(
            f"error: {' '.join(cmd)} failed in {cwd}:\n{(result.stdout + result.stderr)[-3000:]}"
        )
    counts = re.findall(r"gallery: executed (\d+) lesson", result.stdout + result.stderr)
    return elapsed, sum(int(n) for n in counts)


def make(cwd: Path, *targets: str) -> tuple[float, int]:
    return timed(["make", "--no-print-directory", *targets, f"VENV={VENV}"], cwd)


def clean(cwd: Path) -> None:
    shutil.rmtree(cwd / "_build", ignore_errors=True)
    shutil.rmtree(cwd / "docs" / "lessons", ignore_errors=True)


def edit_one_msgstr(cwd: Path, n: int) -> None:
    """Change one translated message of the first lesson's catalog."""
    import polib

    po = sorted((cwd / "locale" / "zh_CN" / "LC_MESSAGES" / "lessons").glob("*.po"))[0]
    catalog = polib.pofile(str(po), wrapwidth=79)
    entry = next(e for e in catalog.translated_entries() if "。" in e.msgstr)
    entry.msgstr = re.sub(r"（基准 \d+）$", "", entry.msgstr) + f"（基准 {n}）"
    catalog.save(str(po))


def one_run(cwd: Path, n: int) -> dict:
    """Each figure once: (seconds, what it is compared with, lessons executed)."""
    lessons = [str(p) for p in sorted((cwd / "gallery").glob("[0-9][0-9]_*.py"))]
    floor, _ = timed([sys.executable, "-c", FLOOR, *lessons], cwd)
    clean(cwd)
    html, executed = make(cwd, "html")
    out = {"clean": (html, floor, executed)}
    clean(cwd)
    en, _ = make(cwd, "html-en")
    zh, executed = make(cwd, "html-zh")
    out["zh_after_en"] = (zh, en, executed)
    make(cwd, "html")
    nochange, _ = make(cwd, "html-zh")
    edit_one_msgstr(cwd, n)
    edited, executed = make(cwd, "html-zh")
    out["translator"] = (edited, nochange, executed)
    lesson = Path(lessons[n % len(lessons)])
    lesson.write_text(lesson.read_text() + f"\n# %%\n# Bench edit {n}.\n")
    seconds, executed = make(cwd, "html")
    out["author"] = (seconds, None, executed)
    return out


def summary(values: list[float]) -> dict:
    return {"median": statistics.median(values), "min": min(values), "max": max(values)}


def figures(runs: list[dict]) -> dict:
    result = {}
    for name in TARGETS:
        seconds = [run[name][0] for run in runs]
        base = [run[name][1] for run in runs]
        result[name] = {
            "seconds": summary(seconds),
            "executed": [run[name][2] for run in runs],
        }
        if base[0] is not None:
            result[name]["base_seconds"] = summary(base)
            result[name]["ratio"] = summary([s / b for s, b in zip(seconds, base, strict=True)])
    return result


def verdict(name: str, figure: dict) -> str:
    _, limit, executed = TARGETS[name]
    ok = executed is None or set(figure["executed"]) == {executed}
    if limit is not None:
        ok = ok and figure["ratio"]["median"] <= limit
    return "ok" if ok else "OVER"


def span(s: dict) -> str:
    return f"{s['median']:.2f} ({s['min']:.2f}–{s['max']:.2f})"


def report(results: dict) -> str:
    lines = [
        f"# make bench ({'quick, not representative' if results['quick'] else 'median of'}"
        f"{'' if results['quick'] else ' ' + str(results['runs']) + ' runs'})",
        "",
        "| tree | figure | seconds | compared with (s) | ratio | target | lessons run | |",
        "|---|---|---|---|---|---|---|---|",
    ]
    for tree, figs in results["trees"].items():
        for name, (what, limit, executed) in TARGETS.items():
            f = figs[name]
            base = span(f["base_seconds"]) if "base_seconds" in f else "–"
            ratio = span(f["ratio"]) if "ratio" in f else "–"
            target = (f"≤ {limit} {what}" if limit else what) + (
                f", {executed} run" if executed is not None else ""
            )
            ran = sorted(set(f["executed"]))
            lines.append(
                f"| {tree} | {name} | {span(f['seconds'])} | {base} | {ratio} | {target} "
                f"| {ran} | {verdict(name, f)} |"
            )
    lines += ["", f"Machine: {os.cpu_count()} cores; Python {sys.version.split()[0]}.", ""]
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--quick", action="store_true", help="one run each, to test the bench")
    parser.add_argument("--out", type=Path, default=ROOT / "_build" / "bench")
    parser.add_argument("--compare", type=Path, help="another checkout, measured alternately")
    args = parser.parse_args(argv)
    runs = 1 if args.quick else max(args.runs, 3)
    sources = {"this": ROOT, **({"compared": args.compare.resolve()} if args.compare else {})}
    measured: dict[str, list[dict]] = {tree: [] for tree in sources}
    with tempfile.TemporaryDirectory(prefix="bench-") as tmp:
        copies = {tree: copy_project(Path(tmp) / tree, src) for tree, src in sources.items()}
        for n in range(runs):
            order = list(copies) if n % 2 == 0 else list(reversed(copies))
            for tree in order:
                print(f"bench: run {n + 1}/{runs}, {tree} …", flush=True)
                measured[tree].append(one_run(copies[tree], n))
    results = {
        "quick": args.quick,
        "runs": runs,
        "trees": {tree: figures(runs) for tree, runs in measured.items()},
        "samples": measured,
    }
    args.out.mkdir(parents=True, exist_ok=True)
    (args.out / "report.json").write_text(json.dumps(results, indent=1, sort_keys=True) + "\n")
    text = report(results)
    (args.out / "report.md").write_text(text)
    print(text)
    return 0


if __name__ == "__main__":
    sys.exit(main())
