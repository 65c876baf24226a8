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
        [sys.executable, str(ROOT / "tools" / "bench.py"), "--quick", "--out", str(tmp_path)],
        cwd=ROOT,
        env=build_env(),
        capture_output=True,
        text=True,
    )
    assert result.returncode == 0, result.stdout[-2000:] + result.stderr[-2000:]
    data = json.loads((tmp_path / "report.json").read_text())
    for figure in ["floor", "clean_build", "zh_after_en", "translator_loop", "author_loop"]:
        assert data[figure], figure
    for key in ["median", "min", "max", "runs"]:
        assert key in data["clean_build"]["seconds"]
        assert key in data["clean_build"]["ratio"]
    assert data["floor"]["lessons"] == len(LESSONS)
    assert data["clean_build"]["scripts"] == [len(LESSONS)]
    assert data["zh_after_en"]["scripts"] == [0]
    assert data["translator_loop"]["scripts"] == [0]
    assert data["author_loop"]["scripts"] == [1]
    assert len(data["reader"]["bytes"]) == 2 * len(LESSONS)
    text = (tmp_path / "report.md").read_text()
    assert text.startswith("# make bench") and "| reader |" in text
