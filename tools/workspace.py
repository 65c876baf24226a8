"""The project's own files, for work done on a copy (tests, make bench).

A build writes into the source tree (docs/lessons/) and into _build/, so
tests and benchmarks never build in the working tree: they copy what git
tracks, plus new files that git does not ignore, into a folder of their own.
"""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

from ext import ROOT


def project_files(root: Path = ROOT) -> list[str]:
    out = subprocess.run(
        ["git", "ls-files", "--cached", "--others", "--exclude-standard", "-z"],
        cwd=root,
        capture_output=True,
        text=True,
        check=True,
    ).stdout
    return [f for f in out.split("\0") if f and (root / f).is_file()]


def copy_project(dest: Path, root: Path = ROOT) -> Path:
    """Copy the project's files (with their times) into *dest*."""
    for rel in project_files(root):
        target = dest / rel
        target.parent.mkdir(parents=True, exist_ok=True)
        shutil.copy2(root / rel, target)
    return dest
