"""Shared fixtures: a copy of the project, built once per test session.

Tests never build inside the working tree. Each build happens in a temporary
copy of the project's files (what git tracks, plus new files not ignored),
using the project's own virtual environment, the way sphinx-gallery's
tinybuild does it.
"""

from __future__ import annotations

import functools
import os
import re
import shutil
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

import pytest

from ext import ROOT
from tools import workspace

VENV = Path(sys.prefix)
LESSONS = sorted(ROOT.glob("gallery/[0-9][0-9]_*.py"))
# The site's languages, from the one line that lists them (the Makefile's).
LANGUAGES = re.search(r"^LANGUAGES := (.+)$", (ROOT / "Makefile").read_text(), re.M)[1].split()


def copy_project(dest: Path, with_generated: Path | None = None) -> Path:
    """Copy the project's sources to *dest*; optionally the executed gallery too."""
    workspace.copy_project(dest)
    if with_generated is not None:
        shutil.copytree(with_generated / "docs" / "lessons", dest / "docs" / "lessons")
    return dest


def build_env(**extra: str) -> dict[str, str]:
    env = dict(os.environ)
    env.pop("MAKEFLAGS", None)
    env.setdefault("SOURCE_DATE_EPOCH", _epoch())
    env.update(extra)
    return env


def _epoch() -> str:
    out = subprocess.run(
        ["git", "log", "-1", "--format=%ct"], cwd=ROOT, capture_output=True, text=True
    ).stdout.strip()
    return out or "315532800"


def require(available: bool, what: str, install: str) -> None:
    """Stop a test that needs a tool this machine lacks. In CI (``CI=true``)
    the tool must be there, and its absence fails the test; elsewhere the test
    is skipped, with the command that installs the tool."""
    if available:
        return
    message = f"{what} is missing; install it with: {install}"
    if os.environ.get("CI", "").lower() in ("1", "true", "yes"):
        pytest.fail(message)
    pytest.skip(message)


@functools.cache
def unshare_permitted() -> bool:
    """Whether this machine lets a command run with no network (``unshare -n``,
    which needs root)."""
    return bool(
        shutil.which("unshare")
        and not subprocess.run(["unshare", "-n", "true"], capture_output=True).returncode
    )


NO_NETWORK = ("`unshare -n` (run without network; needs root)", "sudo make test")


def no_network() -> list[str]:
    """The prefix that runs a command with no network, or a skip (a fail in
    CI) where it is not permitted."""
    require(unshare_permitted(), *NO_NETWORK)
    return ["unshare", "-n"]


@dataclass
class Run:
    returncode: int
    output: str


def make(project: Path, *targets: str, env: dict | None = None, prefix: list[str] = ()) -> Run:
    """Run make in *project* with this interpreter's venv; stdout+stderr combined."""
    result = subprocess.run(
        [*prefix, "make", "--no-print-directory", *targets, f"VENV={VENV}"],
        cwd=project,
        env=env or build_env(),
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
    )
    return Run(result.returncode, result.stdout)


def snapshot(folder: Path) -> dict[str, bytes]:
    """Every file under *folder*, by relative path, with its bytes."""
    return {
        p.relative_to(folder).as_posix(): p.read_bytes()
        for p in sorted(folder.rglob("*"))
        if p.is_file()
    }


@dataclass
class Site:
    root: Path
    log: str
    offline: bool = False  # built with no network at all

    @property
    def html(self) -> Path:
        return self.root / "_build" / "html"

    def pages(self, lang: str) -> list[Path]:
        base = self.html / lang
        return sorted(p for p in base.rglob("*.html") if "_static" not in p.parts)

    def download(self, lang: str, lesson: Path, suffix: str) -> Path:
        """The file a lesson's page offers for download (.py, .ipynb, .zip)."""
        folder = self.html / lang / "lessons"
        page = (folder / f"{lesson.stem}.html").read_text(encoding="utf-8")
        m = re.search(rf'href="([^"]*{lesson.stem}{suffix})"', page)
        assert m, f"{lang}/{lesson.stem}: no {suffix} download"
        return folder / m[1]


@pytest.fixture(scope="session")
def site(tmp_path_factory) -> Site:
    """The whole site, built once from a clean copy with `make html`, with no
    network where this machine permits it (tests/test_build.py asserts it)."""
    root = copy_project(tmp_path_factory.mktemp("site"))
    offline = unshare_permitted()
    run = make(root, "html", prefix=["unshare", "-n"] if offline else [])
    assert run.returncode == 0, run.output
    return Site(root, run.output, offline)


@pytest.hookimpl(wrapper=True)
def pytest_runtest_makereport(item, call):
    """Mark a test whose body failed, so fixtures can keep evidence (screenshots)."""
    report = yield
    if report.when == "call" and report.failed:
        item.failed_call = True
    return report
