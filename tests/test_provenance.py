"""Unit tests of ext/lessons/provenance.py: a lesson's page gets, under its title, the
line that says which PyTorch executed it and when (from the run file that
tools/gallery.py writes); a lesson never executed gets none; the line under it
spaces its download label as the page's language does.
"""

from __future__ import annotations

import html
import json
from pathlib import Path
from types import SimpleNamespace

import pytest
from docutils import nodes

from ext.lessons import provenance as gallery
from ext.translation import theme_labels


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


def visited(monkeypatch, words):
    """The "Needs ... · Download: ..." line as visit_lesson_run writes it, with
    the labels of *words* (the catalog of the page's language)."""
    monkeypatch.setattr(theme_labels, "label", lambda msgid: words.get(msgid, msgid))
    files = {Path(f"lessons/01_a{s}"): (None, f"h/01_a{s}") for s in (".ipynb", ".py", ".zip")}
    builder = SimpleNamespace(env=SimpleNamespace(dlfiles=files), dlpath="../_downloads")
    writer = SimpleNamespace(body=[], encode=html.escape, builder=builder)
    node = gallery.lesson_run("", torch="2.13.0", date="2026-11-23", needs=["numpy"], stem="01_a")
    with pytest.raises(nodes.SkipNode):
        gallery.visit_lesson_run(writer, node)
    return writer.body[-1]


def test_the_download_label_is_spaced_as_its_language_spaces(monkeypatch):
    """One space after "Download:", none after the full-width colon of 下载：."""
    english = visited(monkeypatch, {})
    assert "Needs PyTorch, numpy · Download: <a " in english
    chinese = visited(monkeypatch, {"Needs %s": "需要 %s", "Download:": "下载："})
    assert "需要 PyTorch、numpy · 下载：<a " in chinese
    assert chinese.count("<a ") == 3 and "·  " not in chinese
