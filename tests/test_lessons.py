"""Each lesson runs on its own, as a reader would run the downloaded script,
and prints no warning."""

from __future__ import annotations

import re
import subprocess
import sys
import tempfile

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


def prose(source: str) -> str:
    """A lesson's prose: its docstring and text cells, without an exercise."""
    from sphinx_gallery.py_source_parser import split_code_and_text_blocks

    with tempfile.NamedTemporaryFile("w", suffix=".py", encoding="utf-8") as f:
        f.write(source)
        f.flush()
        _, blocks = split_code_and_text_blocks(f.name)
    text = "\n".join(block.content for block in blocks if block.type == "text")
    exercise = re.search(r"^Exercise\b.*\n[-=~^]{3,}$", text, flags=re.M)
    return text[: exercise.start()] if exercise else text


def test_the_four_patterns_take_at_most_3000_words():
    """Lessons 01-05 say each thing once: at most 3,000 words of prose."""
    core = [p for p in LESSONS if p.name[:2] in {"01", "02", "03", "04", "05"}]
    counts = {p.stem: len(prose(p.read_text(encoding="utf-8")).split()) for p in core}
    assert len(core) == 5
    assert sum(counts.values()) <= 3000, counts


def test_prose_stops_at_the_exercise():
    lesson = '"""\nTitle\n=====\n\nOne two.\n"""\n\n# %%\n# Exercise\n# --------\n#\n# Three.\n'
    assert prose(lesson).split() == ["Title", "=====", "One", "two."]
