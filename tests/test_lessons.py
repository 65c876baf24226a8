"""Each lesson runs on its own, as a reader would run the downloaded script,
and prints no warning."""

from __future__ import annotations

import subprocess
import sys

import pytest
from conftest import LESSONS


@pytest.mark.parametrize("lesson", LESSONS, ids=[p.stem for p in LESSONS])
def test_lesson_runs_on_its_own(lesson, tmp_path):
    result = subprocess.run(
        [sys.executable, str(lesson)],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert result.returncode == 0, result.stderr[-3000:]
    assert result.stdout.strip(), "a lesson shows its results"
    assert not result.stderr.strip(), "a lesson run on its own prints no warning"
