"""The lessons' prose: the four patterns in at most 3,000 words.

That each lesson runs on its own, as a reader runs it, with no warning, is
tests/test_notebooks.py's test (the downloaded notebook, in a fresh kernel)."""

from __future__ import annotations

import re
import tempfile

from conftest import LESSONS


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
