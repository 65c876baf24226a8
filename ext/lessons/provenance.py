"""Each lesson page says which PyTorch executed it, and when.

``make gallery`` (tools/gallery.py) records, for each lesson it executes, the version
of the PyTorch it imported and ``SOURCE_DATE_EPOCH`` (the build's "now": the
time of the last commit), in docs/lessons/<lesson>.py.run.json. When Sphinx reads a
lesson's page, this extension puts a ``lesson-run`` line under its title:

    Executed with PyTorch 2.13.0+cpu on 2026-11-23.

The sentence is a site label (ext/translation/theme_labels.py, ``sphinx.po``) with two
``%s`` for the version and the date, so a new PyTorch release changes no
translation. A lesson that has no recorded run (``make html-noplot``) shows no
line. Every lesson page depends on its own record, so a lesson executed again
by another PyTorch is re-read even when its output did not change, and a
lesson executed again leaves the other lessons' pages alone.
"""

from __future__ import annotations

import json
import re
import time
from pathlib import Path

from docutils import nodes
from sphinx.util.docutils import SphinxDirective

# The title of a generated lesson page: the first reST title under its label.
_TITLE = re.compile(r"^\.\. _lesson-[\w-]+:\n\n.+\n=+\n", re.M)


RUN_SUFFIX = ".run.json"


def run_file(out_dir: Path, script: str) -> Path:
    """Where the run that executed lesson *script* (``01_x.py``) is recorded."""
    return out_dir / f"{script}{RUN_SUFFIX}"


def recorded_run(out_dir: Path, script: str) -> dict | None:
    """The run that executed lesson *script*: ``{"torch": version, "epoch":
    SOURCE_DATE_EPOCH}``, or None when none is recorded."""
    try:
        return json.loads(run_file(out_dir, script).read_text())
    except (OSError, ValueError):
        return None


def run_date(epoch: int) -> str:
    """The day of *epoch*, in UTC, as ISO 8601 (the same in every language)."""
    return time.strftime("%Y-%m-%d", time.gmtime(epoch))


def add_run_line(app, docname: str, source: list[str]) -> None:
    """Put the ``lesson-run`` directive under the title of a lesson's page,
    with what the lesson needs besides PyTorch (as its downloads say)."""
    from ext.lessons.downloads import requirements

    m = re.fullmatch(r"lessons/(\d\d_[^/]+)", docname)
    if not m:
        return
    lessons = Path(app.srcdir) / "lessons"
    app.env.note_dependency(str(run_file(lessons, f"{m[1]}.py")))
    run = recorded_run(lessons, f"{m[1]}.py")
    title = _TITLE.search(source[0])
    if run is None or title is None:
        return
    script = lessons / f"{m[1]}.py"
    needs = requirements(script.read_text("utf-8") if script.exists() else "")[1]
    line = f"\n.. lesson-run:: {run['torch']} {run_date(int(run['epoch']))} {' '.join(needs)}\n\n"
    source[0] = source[0][: title.end()] + line + source[0][title.end() :]


class lesson_run(nodes.General, nodes.Element):
    """The lines that name the PyTorch that executed a lesson, and the day;
    what it needs, and its downloads."""


class LessonRun(SphinxDirective):
    required_arguments = 2  # PyTorch's version, the date
    optional_arguments = 10  # what the lesson needs besides PyTorch

    def run(self):
        torch, date, *needs = self.arguments
        stem = Path(self.env.docname).name
        return [lesson_run("", torch=torch, date=date, needs=needs, stem=stem)]


def visit_lesson_run(self, node: lesson_run) -> None:
    """The run line, then "Needs ... · Download: .ipynb · .py · .zip", the
    downloads being the files sphinx-gallery's footer offers at the end."""
    from urllib.parse import quote

    from ext.translation.theme_labels import DOWNLOAD, EXECUTED, NEEDS_LINE, label

    text = label(EXECUTED) % (node["torch"], node["date"])
    self.body.append(f'<p class="lesson-run">{self.encode(text)}</p>\n')
    sentence = label(NEEDS_LINE)
    needs = sentence % ("、" if sentence[0] > "\u3000" else ", ").join(["PyTorch", *node["needs"]])
    links = []
    for suffix in (".ipynb", ".py", ".zip"):
        name = f"lessons/{node['stem']}{suffix}"
        dest = self.builder.env.dlfiles.get(Path(name), (None, None))[1]
        if dest:
            href = f"{self.builder.dlpath}/{quote(str(dest))}"
            links.append(f'<a class="reference download" href="{href}" download="">{suffix}</a>')
    download = label(DOWNLOAD)
    gap = "" if download[-1:] > "\u3000" else " "  # none after a full-width colon (下载：)
    self.body.append(
        f'<p class="lesson-needs">{self.encode(needs)} · {self.encode(download)}{gap}'
        + " · ".join(links)
        + "</p>\n"
    )
    raise nodes.SkipNode


def skip(self, node) -> None:
    raise nodes.SkipNode


def setup(app):
    app.connect("source-read", add_run_line)
    app.add_node(
        lesson_run,
        html=(visit_lesson_run, None),
        **{b: (skip, None) for b in ("latex", "text", "man", "texinfo")},
    )
    app.add_directive("lesson-run", LessonRun)
    return {"parallel_read_safe": True, "parallel_write_safe": True}
