"""make bench: how fast the site builds for authors, translators and readers.

Every figure is measured on whole processes (make, python) in a temporary
copy of the project, so the working tree is never touched. Each timing is the
median of RUNS runs, reported with its min and max. The report is written to
_build/bench/report.md and _build/bench/report.json.

    python tools/bench.py [--runs N] [--quick] [--out DIR]

--quick measures each figure once (for the test that keeps this script
working); its numbers are not the project's numbers.
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
from html.parser import HTMLParser
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
from ext.workspace import copy_project  # noqa: E402

VENV = Path(sys.prefix)
BUDGET = 500 * 1024


# -- Running things ---------------------------------------------------------
def env() -> dict[str, str]:
    out = dict(os.environ)
    out.pop("MAKEFLAGS", None)
    out.setdefault("SOURCE_DATE_EPOCH", "315532800")
    return out


def timed(cmd: list[str], cwd: Path) -> tuple[float, str]:
    """Run *cmd*; return its wall time and its combined output. Fail loudly."""
    start = time.perf_counter()
    result = subprocess.run(
        cmd, cwd=cwd, env=env(), stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True
    )
    elapsed = time.perf_counter() - start
    if result.returncode:
        sys.exit(f"error: {' '.join(cmd)} failed in {cwd}:\n{result.stdout[-3000:]}")
    return elapsed, result.stdout


def make(cwd: Path, *targets: str) -> tuple[float, str]:
    return timed(["make", "--no-print-directory", *targets, f"VENV={VENV}"], cwd)


def executed(output: str) -> int:
    """How many lessons the gallery run executed (0 when it did not run)."""
    counts = [int(n) for n in re.findall(r"gallery: executed (\d+) lesson", output)]
    return sum(counts)


def clean(cwd: Path) -> None:
    shutil.rmtree(cwd / "_build", ignore_errors=True)
    shutil.rmtree(cwd / "docs" / "lessons", ignore_errors=True)


def summary(values: list[float]) -> dict:
    return {
        "median": statistics.median(values),
        "min": min(values),
        "max": max(values),
        "runs": len(values),
    }


# -- The figures ---------------------------------------------------------------
FLOOR = """
import contextlib, io, runpy, sys
for path in sys.argv[1:]:
    with contextlib.redirect_stdout(io.StringIO()):
        runpy.run_path(path, run_name="__main__")
"""


def lesson_paths(cwd: Path) -> list[str]:
    return [str(p) for p in sorted((cwd / "gallery").glob("[0-9][0-9]_*.py"))]


def floor(cwd: Path, runs: int) -> dict:
    lessons = lesson_paths(cwd)
    times = [timed([sys.executable, "-c", FLOOR, *lessons], cwd)[0] for _ in range(runs)]
    return {"seconds": summary(times), "lessons": len(lessons)}


def clean_build(cwd: Path, runs: int) -> dict:
    """Each clean build is paired with a floor run just before it.

    This machine's speed drifts by a tenth over minutes; a ratio of two
    figures taken minutes apart carries that drift, one of two runs taken
    back to back does not (as zh_after_en pairs its two builds).
    """
    lessons = lesson_paths(cwd)
    times, floors, scripts = [], [], []
    for _ in range(runs):
        floors.append(timed([sys.executable, "-c", FLOOR, *lessons], cwd)[0])
        clean(cwd)
        t, out = make(cwd, "html")
        times.append(t)
        scripts.append(executed(out))
    ratios = [t / f for t, f in zip(times, floors, strict=True)]
    return {
        "seconds": summary(times),
        "floor_seconds": summary(floors),
        "ratio": summary(ratios),
        "scripts": scripts,
    }


def zh_after_en(cwd: Path, runs: int) -> dict:
    en_times, zh_times, scripts = [], [], []
    for _ in range(runs):
        clean(cwd)
        t_en, _ = make(cwd, "html-en")
        t_zh, out = make(cwd, "html-zh")
        en_times.append(t_en)
        zh_times.append(t_zh)
        scripts.append(executed(out))
    ratios = [z / e for z, e in zip(zh_times, en_times, strict=True)]
    return {
        "en_seconds": summary(en_times),
        "zh_seconds": summary(zh_times),
        "ratio": summary(ratios),
        "scripts": scripts,
    }


def edit_one_msgstr(cwd: Path, n: int) -> None:
    """Change one translated message of the first lesson's catalog."""
    import polib

    po = sorted((cwd / "locale" / "zh_CN" / "LC_MESSAGES" / "lessons").glob("*.po"))[0]
    catalog = polib.pofile(str(po), wrapwidth=79)
    entry = next(e for e in catalog.translated_entries() if "。" in e.msgstr)
    entry.msgstr = re.sub(r"（基准 \d+）$", "", entry.msgstr) + f"（基准 {n}）"
    catalog.save(str(po))


def translator_loop(cwd: Path, runs: int) -> dict:
    make(cwd, "html")
    nochange, edited, scripts = [], [], []
    for n in range(runs):
        nochange.append(make(cwd, "html-zh")[0])
        edit_one_msgstr(cwd, n)
        t, out = make(cwd, "html-zh")
        edited.append(t)
        scripts.append(executed(out))
    ratios = [e / c for e, c in zip(edited, nochange, strict=True)]
    return {
        "nochange_seconds": summary(nochange),
        "edited_seconds": summary(edited),
        "ratio": summary(ratios),
        "scripts": scripts,
    }


def author_loop(cwd: Path, runs: int) -> dict:
    make(cwd, "html")
    lessons = sorted((cwd / "gallery").glob("[0-9][0-9]_*.py"))
    times, scripts = [], []
    for n in range(runs):
        lesson = lessons[n % len(lessons)]
        lesson.write_text(lesson.read_text() + f"\n# %%\n# Bench edit {n}.\n")
        t, out = make(cwd, "html")
        times.append(t)
        scripts.append(executed(out))
    return {"seconds": summary(times), "scripts": scripts}


class Assets(HTMLParser):
    def __init__(self):
        super().__init__()
        self.urls: list[str] = []

    def handle_starttag(self, tag, attrs):
        a = dict(attrs)
        if tag == "script" and a.get("src"):
            self.urls.append(a["src"])
        elif tag == "link" and a.get("rel") in ("stylesheet",) and a.get("href"):
            self.urls.append(a["href"])
        elif tag == "img" and a.get("src"):
            self.urls.append(a["src"])


def page_weight(page: Path) -> int:
    """Bytes of a page and of every script, stylesheet and image it loads."""
    parser = Assets()
    parser.feed(page.read_text(encoding="utf-8"))
    total = page.stat().st_size
    for url in dict.fromkeys(parser.urls):
        path = (page.parent / url.split("?")[0].split("#")[0]).resolve()
        if path.is_file():
            total += path.stat().st_size
    return total


def reader(cwd: Path) -> dict:
    pages = {}
    for lang in ("en", "zh_CN"):
        for page in sorted((cwd / "_build" / "html" / lang / "lessons").glob("[0-9][0-9]_*.html")):
            pages[f"{lang}/{page.stem}"] = page_weight(page)
    return {"bytes": pages, "max": max(pages.values())}


# -- Report ----------------------------------------------------------------------
def check(value: float, limit: float) -> str:
    return "ok" if value <= limit else "OVER"


def report(results: dict) -> str:
    f = results
    rows = [
        ("floor", "every lesson, back to back, one process", f["floor"]["seconds"], "–", ""),
    ]
    clean_ratio = f["clean_build"]["ratio"]["median"]
    rows.append(
        (
            "clean bilingual build",
            f"`make html`: {clean_ratio:.2f} × the floor run just before it",
            f["clean_build"]["seconds"],
            "≤ 2.0",
            check(clean_ratio, 2.0),
        )
    )
    z = f["zh_after_en"]
    rows.append(
        (
            "zh after en",
            f"`make html-zh`: {max(z['scripts'])} scripts, {z['ratio']['median']:.2f} × en build",
            z["zh_seconds"],
            "0 scripts, ≤ 0.35",
            check(z["ratio"]["median"], 0.35) if max(z["scripts"]) == 0 else "OVER",
        )
    )
    t = f["translator_loop"]
    rows.append(
        (
            "translator loop",
            f"one msgstr, `make html-zh`: {max(t['scripts'])} scripts, "
            f"{t['ratio']['median']:.2f} × no-change rebuild",
            t["edited_seconds"],
            "0 scripts, ≤ 1.5",
            check(t["ratio"]["median"], 1.5) if max(t["scripts"]) == 0 else "OVER",
        )
    )
    a = f["author_loop"]
    rows.append(
        (
            "author loop",
            f"one lesson edited, `make html`: {sorted(set(a['scripts']))} scripts",
            a["seconds"],
            "exactly 1",
            "ok" if set(a["scripts"]) == {1} else "OVER",
        )
    )
    r = f["reader"]
    rows.append(
        (
            "reader",
            f"heaviest lesson page with its assets: {r['max'] / 1024:.0f} KB",
            None,
            "≤ 500 KB",
            check(r["max"], BUDGET),
        )
    )
    lines = [
        f"# make bench ({'quick, not representative' if f['quick'] else 'median of'}"
        f"{'' if f['quick'] else ' ' + str(f['runs']) + ' runs'})",
        "",
        "| figure | measured | seconds: median (min–max) | target | |",
        "|---|---|---|---|---|",
    ]
    for name, what, secs, target, verdict in rows:
        timing = f"{secs['median']:.2f} ({secs['min']:.2f}–{secs['max']:.2f})" if secs else "–"
        lines.append(f"| {name} | {what} | {timing} | {target} | {verdict} |")
    lines += ["", f"Machine: {os.cpu_count()} cores; Python {sys.version.split()[0]}.", ""]
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--quick", action="store_true", help="one run each, to test the bench")
    parser.add_argument("--out", type=Path, default=ROOT / "_build" / "bench")
    args = parser.parse_args(argv)
    runs = 1 if args.quick else max(args.runs, 3)
    with tempfile.TemporaryDirectory(prefix="bench-") as tmp:
        cwd = copy_project(Path(tmp))
        results = {"quick": args.quick, "runs": runs}
        steps = [
            ("floor", floor),
            ("clean_build", clean_build),
            ("zh_after_en", zh_after_en),
            ("translator_loop", translator_loop),
            ("author_loop", author_loop),
        ]
        for name, step in steps:
            print(f"bench: {name} …", flush=True)
            results[name] = step(cwd, runs)
        results["reader"] = reader(cwd)
    args.out.mkdir(parents=True, exist_ok=True)
    (args.out / "report.json").write_text(json.dumps(results, indent=1, sort_keys=True) + "\n")
    text = report(results)
    (args.out / "report.md").write_text(text)
    print(text)
    return 0


if __name__ == "__main__":
    sys.exit(main())
