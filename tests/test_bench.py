"""The benchmark keeps working: a quick run writes a well-formed report.

No timing is asserted here; targets live in the report of `make bench`.
"""

from __future__ import annotations

import json
import subprocess
import sys

import pytest
from conftest import LESSONS, ROOT, build_env

pytestmark = pytest.mark.build


def test_quick_bench_writes_a_report(tmp_path):
    result = subprocess.run(
        [sys.executable, "-m", "tools.bench", "--quick", "--out", str(tmp_path)],
        cwd=ROOT,
        env=build_env(),
        capture_output=True,
        text=True,
    )
    assert result.returncode == 0, result.stdout[-2000:] + result.stderr[-2000:]
    data = json.loads((tmp_path / "report.json").read_text())
    figures = data["trees"]["this"]
    assert set(figures) == {"clean", "zh_after_en", "translator", "author"}
    for key in ["median", "min", "max"]:
        assert key in figures["clean"]["seconds"]
        assert key in figures["clean"]["ratio"]
    assert figures["clean"]["executed"] == [len(LESSONS)]
    assert figures["zh_after_en"]["executed"] == [0]
    assert figures["translator"]["executed"] == [0]
    assert figures["author"]["executed"] == [1]
    text = (tmp_path / "report.md").read_text()
    assert text.startswith("# make bench") and "| this | author |" in text
