"""The lessons' pages in every build, and the rule a lesson runs under.

Every build (html in each language, gettext) reads docs/lessons/, which
``make gallery`` (tools/gallery.py) wrote, as ordinary reST and executes
nothing; sphinx-gallery, loaded there with no gallery to generate (conf.py),
gives it its stylesheet and the links in the lessons' code. This extension
keeps two things sphinx-gallery adds from changing the site, and leaves a
page that lists its own sections (the error index) that one list.

While ``make gallery`` executes a lesson, :func:`strict_warnings` makes a
warning an error: a lesson's page shows what the lesson printed, so it must
never show a warning (with a path of the machine that built it). A lesson that
expects a warning catches it with :func:`warnings.catch_warnings` and explains
it.
"""

from __future__ import annotations

import gc
import sys
import warnings
from pathlib import Path

from docutils import nodes

# --------------------------------------------------------------------------
# Sphinx side: every build


def relative_gallery_folders(app, config) -> None:
    """sphinx-gallery adds its static and template folders by absolute path;
    they are named relative to the project when they lie inside it (an
    in-tree .venv): ``html_static_path`` and ``templates_path`` are hashed
    into .buildinfo, and an absolute path would make two checkouts build
    different files."""
    root = Path(app.confdir)

    def relative(folder: str) -> str:
        try:
            return Path(folder).relative_to(root).as_posix()
        except ValueError:  # outside the project: the same for every checkout
            return folder

    config.html_static_path = [relative(f) for f in config.html_static_path]
    config.templates_path = [relative(f) for f in config.templates_path]


def without_tag_filter(app, pagename, templatename, context, doctree) -> None:
    """sphinx-gallery adds its script sg-tags.js to every page, to filter a
    gallery's cards by their tags; the lessons have no tags, so it leaves
    the page's list of scripts, which Sphinx's documented
    ``html-page-context`` event hands its handlers to change."""
    scripts = context["script_files"]
    scripts[:] = [js for js in scripts if Path(js.filename).name != "sg-tags.js"]


def one_list_of_sections(app, doctree) -> None:
    """A page that lists its sections at its top (the error index's
    ``.. contents:: :local:``) does without Furo's copy of that list, through
    Furo's documented ``hide-toc`` page metadata: the reader gets one list,
    and the page its weight of before."""
    if any("contents" in topic["classes"] for topic in doctree.findall(nodes.topic)):
        app.env.metadata[app.env.docname]["hide-toc"] = ""


def setup(app):
    # After sphinx-gallery's own handler, which adds the folders (priority 10).
    app.connect("config-inited", relative_gallery_folders, priority=900)
    app.connect("html-page-context", without_tag_filter)
    app.connect("doctree-read", one_list_of_sections, priority=900)  # after Sphinx's metadata
    return {"parallel_read_safe": True, "parallel_write_safe": True}


# --------------------------------------------------------------------------
# Warnings while a lesson runs

_active: tuple[warnings.catch_warnings, object] | None = None


def _refuse(message, category, filename, lineno, line=None):
    """In place of warnings.formatwarning: a warning about to be shown raises."""
    raise message if isinstance(message, Warning) else category(message)


def frozen_imports(gallery_conf, fname, when) -> None:
    """sphinx-gallery's ``reset_modules`` hook: before the first lesson that a
    process runs (the lesson run itself, or each of its worker processes),
    import torch and torchviz, then move what they created out of Python's
    garbage collections (:func:`gc.freeze`, Python's documented call for
    this). sphinx-gallery collects garbage before every lesson; what these
    imports create lives as long as the process, and without this each of those
    collections walks it again (about 0.15 s each on this project's machine)."""
    if when == "before" and "torchviz" not in sys.modules:
        import torch  # noqa: F401
        import torchviz  # noqa: F401

        gc.freeze()


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
