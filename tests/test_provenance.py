"""Unit tests of ext/lessons/provenance.py: a lesson's page gets, under its title, the
line that says which PyTorch executed it and when (from the run file that
tools/gallery.py writes); a lesson never executed gets none.
"""

from __future__ import annotations

import json
from types import SimpleNamespace

from ext.lessons import provenance as gallery


def test_the_run_line_goes_under_a_lessons_title(tmp_path):
    from ext.lessons import provenance

    lessons = tmp_path / "lessons"
    lessons.mkdir()
    gallery.run_file(lessons, "01_a.py").write_text(
        json.dumps({"torch": "2.13.0+cpu", "epoch": 1795436971})
    )
    deps = []
    app = SimpleNamespace(srcdir=str(tmp_path), env=SimpleNamespace(note_dependency=deps.append))
    page = ".. _sphx_glr_lessons_01_a.py:\n\n\n.. _lesson-a:\n\nTitle\n=====\n\nIntro.\n"
    source = [page]
    provenance.add_run_line(app, "lessons/01_a", source)
    assert "=====\n\n.. lesson-run:: 2.13.0+cpu 2026-11-23 numpy\n\n\nIntro." in source[0]
    assert deps == [str(gallery.run_file(lessons, "01_a.py"))]
    source = [page]
    provenance.add_run_line(app, "lessons/02_b", source)  # never executed: no line
    assert source == [page]
    assert provenance.run_date(0) == "1970-01-01"
