"""The lessons' pages in every build, and the rule a lesson runs under.

Every build (html in each language, gettext) reads docs/lessons/, which
``make gallery`` (tools/gallery.py) wrote, as ordinary reST and executes
nothing; this extension gives it sphinx-gallery's stylesheet. While that run
executes a lesson, :func:`strict_warnings` makes a warning an error: a lesson's
page shows what the lesson printed, so it must never show a warning (with a
path of the machine that built it). A lesson that expects a warning catches it
with :func:`warnings.catch_warnings` and explains it.
"""

from __future__ import annotations

import warnings
from pathlib import Path

# --------------------------------------------------------------------------
# Sphinx side: every build


def add_gallery_style(app, config) -> None:
    """sphinx-gallery's stylesheet, as ``sphinx_gallery.load_style`` adds it,
    but with its folder named relative to the project when it lies inside it
    (an in-tree .venv): ``html_static_path`` is hashed into .buildinfo, and an
    absolute path would make two checkouts build different files."""
    from sphinx_gallery import glr_path_static

    static = Path(glr_path_static())
    try:
        static = static.relative_to(Path(app.confdir))
    except ValueError:
        pass  # a virtual environment outside the project: the same for every checkout
    config.html_static_path.append(static.as_posix())
    app.add_css_file("sg_gallery.css")


def setup(app):
    app.connect("config-inited", add_gallery_style)
    return {"parallel_read_safe": True, "parallel_write_safe": True}


# --------------------------------------------------------------------------
# Warnings while a lesson runs

_active: tuple[warnings.catch_warnings, object] | None = None


def _refuse(message, category, filename, lineno, line=None):
    """In place of warnings.formatwarning: a warning about to be shown raises."""
    raise message if isinstance(message, Warning) else category(message)


def strict_warnings(gallery_conf, fname, when) -> None:
    """sphinx-gallery's documented ``reset_modules`` hook, called before and
    after each lesson.

    While a lesson runs, a warning that Python is about to show (the page
    would show it, as would a reader's terminal) is raised instead, so that
    sphinx-gallery reports the lesson's traceback. The filters stay what they
    are for a reader: a warning that Python or a library hides (torchviz's
    DeprecationWarning about distutils, raised inside torchviz) or that code
    records with ``warnings.catch_warnings(record=True)`` is never shown, so
    it is no error either. Each lesson starts afresh, as when run on its own.
    """
    global _active
    if _active is not None:
        context, formatwarning = _active
        warnings.formatwarning = formatwarning
        context.__exit__(None, None, None)
        _active = None
    if when == "before":
        context = warnings.catch_warnings()  # also forgets what was already shown
        context.__enter__()
        _active = (context, warnings.formatwarning)
        warnings.formatwarning = _refuse
