"""Sphinx configuration, shared by every language and every builder.

The sources are docs/ (hand-written pages) and gallery/ (the lessons). The
Makefile builds them once per language; run `make help` for the targets.
"""

import os
import sys
from importlib.metadata import version as installed_version
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))

# -- Project ---------------------------------------------------------------
project = "Double Backward with Custom Functions"
author = "The double-backward tutorial authors"
copyright = "2026, the double-backward tutorial authors"

# -- Extensions --------------------------------------------------------------
extensions = [
    "myst_parser",
    "sphinx_copybutton",
    "sphinx.ext.intersphinx",  # links to PyTorch's documentation, from a local inventory
    "sphinx_gallery.gen_gallery",  # …in the lessons' code too; its stylesheet
    "ext.lessons.gallery",  # the lessons' pages, made once by `make gallery`
    "ext.lessons.cards",  # the gallery's cards are translatable
    "ext.lessons.exercises",  # each exercise's solution, shown on demand under its lesson
    "ext.translation.code_comments",  # comments and docstrings in code are translated too
    "ext.pages.language_switcher",  # links to the same page in the other languages
    "ext.pages.publishing",  # with SITE_URL: canonical links, absolute hreflang, sitemaps
    "ext.translation.search",  # Chinese search knows the glossary's words
    "ext.translation.theme_labels",  # the theme's labels, the title and copyright (sphinx.po)
    "ext.pages.mathml",  # formulas become MathML at build time
    "ext.lessons.downloads",  # a translated page offers translated .py and .ipynb files
    "ext.pages.a11y",  # keyboard access to wide code blocks and formulas
    "ext.pages.weight",  # code blocks with the same colours and fewer tags
    "ext.lessons.provenance",  # each lesson names the PyTorch that executed it, and when
    "ext.pages.repository",  # with REPO_URL: Colab, source, edit and report links, dates
    "ext.pages.meta",  # each page's description
]
# Only `python -m tools.gallery` starts Sphinx with the tag `run_lessons`: that
# run executes the lessons and writes their pages into docs/lessons/, and needs
# nothing else.
if tags.has("run_lessons"):  # noqa: F821 (Sphinx gives conf.py its tags)
    extensions = ["sphinx_gallery.gen_gallery"]
root_doc = "index"
exclude_patterns = ["_static", "_templates", "_inventories"]
myst_enable_extensions = ["dollarmath", "colon_fence", "deflist"]
html_math_renderer = "mathml"

# Strict: every reference must resolve (the Makefile adds -W --keep-going).
nitpicky = True

# -- PyTorch's API ---------------------------------------------------------------
# Names of PyTorch's API link to its documentation, offline. The build has no
# network, so intersphinx reads a local inventory, docs/_inventories/pytorch.inv,
# which `make inventory` writes (with sphobjinv) from the list kept by hand
# beside it, pytorch.txt: one line per name, with its page on docs.pytorch.org.
# - In the prose, a role such as :func:`~torch.autograd.gradcheck` (reST) or
#   {py:func}`torch.autograd.gradcheck` (MyST) becomes a link, and with
#   `nitpicky` a name missing from the list fails the build.
# - In the lessons' code, sphinx-gallery links every name that the list has:
#   the lesson run records the names each code block uses
#   (docs/lessons/*.codeobj.json), and each build resolves them through the
#   same inventory (sphinx-gallery's "Add intersphinx links to your examples").
# The list holds what the lessons call and name, not the types of their
# variables (torch.Tensor, nn.Parameter): sphinx-gallery would link every
# tensor variable of every block to the same page.
# The links go to the documentation of the PyTorch that the build runs.
torch_minor = ".".join(installed_version("torch").split(".")[:2])  # 2.13.0+cpu -> 2.13
intersphinx_mapping = {
    "torch": (f"https://docs.pytorch.org/docs/{torch_minor}/", "_inventories/pytorch.inv")
}
add_function_parentheses = False  # :func:`gradcheck` reads "gradcheck", as the prose does

# -- Gallery: the lessons ---------------------------------------------------------
# sphinx-gallery's generator is loaded by every build, in one of two roles. In
# the lesson run (`python -m tools.gallery`, tag run_lessons) it executes the
# lessons of gallery/ and writes their pages into docs/lessons/, as set here.
# Every other build (each language, gettext) reads docs/lessons/ as ordinary
# reST; there sphinx-gallery has no gallery to generate (below), and only
# links the lessons' code (see "PyTorch's API") and adds its stylesheet.
sphinx_gallery_conf = {
    "examples_dirs": "../gallery",
    "gallery_dirs": "lessons",
    "filename_pattern": r"/\d\d_[^/]+\.py$",  # execute every lesson
    "within_subsection_order": "FileNameSortKey",  # file order is reading order
    "image_scrapers": ("ext.lessons.graphs.scraper",),  # graphviz graphs become SVG files
    "ignore_repr_types": r"graphviz\.",  # …and never print as a repr
    "default_thumb_file": "docs/_static/lesson-thumb.svg",  # relative to the root
    # A warning a lesson does not catch fails the build; torch is imported once
    # per process (see ext/lessons/gallery.py).
    "reset_modules": ("ext.lessons.gallery.frozen_imports", "ext.lessons.gallery.strict_warnings"),
    "reset_modules_order": "both",
    "remove_config_comments": True,
    # Nothing that changes from run to run may reach a page or a catalog.
    "min_reported_time": float("inf"),
    "write_computation_times": False,
    "show_memory": False,
    "show_signature": False,
    "download_all_examples": False,
    # Its main stylesheet only: the lessons show no Binder badge, DataFrame or
    # HTML repr. (A key sphinx-gallery checks but does not document yet: its
    # issue #1600.)
    "css": ["sg_gallery"],
    # The stale lessons execute side by side, in as many worker processes as
    # the lesson run starts Sphinx with (its `parallel`, which tools/gallery.py
    # sets: one per core, at most one per stale lesson). Each lesson seeds its
    # own random numbers and needs nothing another one left behind, so its page
    # is the same whichever process runs it (tests/test_notebooks.py runs each
    # one alone and compares what it prints with its page).
    "parallel": True,
}
if not tags.has("run_lessons"):  # noqa: F821
    # No gallery: a language build generates nothing and writes nothing into
    # docs/, so that the languages build side by side from the same folder.
    sphinx_gallery_conf.update(examples_dirs=[], gallery_dirs=[])

# -- Languages ---------------------------------------------------------------
language = "en"  # the Makefile passes -D language=<code> for each language
locale_dirs = ["../locale"]  # checked by `make` before a build (tools/catalogs.py)
gettext_compact = False  # one catalog per page
gettext_location = False  # no line numbers: no churn for translators
gettext_uuid = False

# -- HTML --------------------------------------------------------------------
# Furo: light and dark modes, phone layouts, and a small footprint (no CSS
# framework, no icon font, no search index on every page), so a lesson page
# with all its assets stays light (tests/test_browser.py: at most 300 KB).
html_theme = "furo"
html_title = "Double backward in PyTorch"
html_static_path = ["docs/_static"]
templates_path = ["docs/_templates"]
html_css_files = ["custom.css"]
html_js_files = [("reader.js", {"defer": "defer"})]  # keyboard and language switcher
html_favicon = "docs/_static/favicon.svg"
html_copy_source = False
html_show_sourcelink = False
html_sidebars = {
    "**": [
        "sidebar/brand.html",
        "sidebar/languages.html",  # the same page in the other languages
        "sidebar/search.html",
        "sidebar/scroll-start.html",
        "sidebar/navigation.html",
        "sidebar/scroll-end.html",
    ]
}
html_theme_options = {
    "navigation_with_keys": True,
    "top_of_page_buttons": [],
}
# Chinese search: jieba also knows the words of the translators' table of
# terms (反向传播, 计算图), which ext/translation/search.py writes to this file for a
# Chinese build; other languages ignore the option.
html_search_options = {"dict": "_build/search/jieba-terms.txt"}
# The results: the builders' and translators' pages after the readers'
# (docs/_static/search-scorer.js), and each result's summary written from the
# page's own text by docs/_static/search-results.js, not by Sphinx from the
# top of the page (see there).
html_search_scorer = "docs/_static/search-scorer.js"
html_show_search_summary = False

# -- Publishing ----------------------------------------------------------------
# SITE_URL is the address of the site's root (make html
# SITE_URL=https://example.org/double-backward/; docs/building.md). Set, the
# Makefile gives each language its address (html_baseurl = SITE_URL/<code>/)
# and the list of languages (sitemap_locales): every page gets a canonical
# link and absolute hreflang links, and each language a sitemap.xml that
# lists every page in every language. Unset, links stay relative and no
# sitemap is written.
site_url = os.environ.get("SITE_URL") or None  # checked by `make` (ext/pages/publishing.py)
if site_url:
    extensions.append("sphinx_sitemap")
sitemap_url_scheme = "{lang}{link}"  # SITE_URL/<code>/<page>.html
sitemap_excludes = ["search.html", "genindex.html"]  # nothing there to index

# -- The repository --------------------------------------------------------------
# REPO_URL is the GitHub repository the site is built from (make html
# REPO_URL=https://github.com/<owner>/<repo>; docs/building.md). Set, each
# lesson offers "Open in Colab" (its notebook, which .github/workflows/site.yml
# publishes on the branch notebooks_branch), "View the source" and "Report a
# problem with this page"; every other page "Edit this page" and "Report a
# problem"; and each page says when git last changed its source
# (sphinx-last-updated-by-git). Unset, none of this shows.
repo_url = os.environ.get("REPO_URL") or None  # checked by `make` (ext/pages/repository.py)
repo_branch = "main"  # the branch the pages' sources are read on
notebooks_branch = "notebooks"
if repo_url:
    extensions.append("sphinx_last_updated_by_git")
    html_last_updated_fmt = "%Y-%m-%d"  # as "Executed with PyTorch ... on 2026-11-23"
git_last_updated_timezone = "UTC"  # the same day on every machine
# A copy of the files without git history (a tarball, the tests' copies)
# builds too, with no dates: git's "not a git repository" is no error.
suppress_warnings = ["git.subprocess_error"]
