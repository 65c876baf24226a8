"""Build one language: its catalogs are checked while Sphinx starts up.

``make html-<lang>`` runs ``python -m ext.build <lang> <sphinx-build options>``.
For a translated language, the catalog check (``python -m ext.i18n validate``,
a quarter of a second) runs in a process of its own while this one imports
Sphinx (a third of a second), so on two cores it costs no wall time. Sphinx
starts building only once the check has passed: broken catalogs still stop the
build before anything is read or written, with the checker's one-line errors
and nothing of Sphinx's.

Everything Sphinx imports is imported before it starts, then frozen out of the
garbage collector (see :func:`main`).
"""

from __future__ import annotations

import gc
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def main(argv: list[str]) -> int:
    if not argv:
        print("usage: python -m ext.build LANGUAGE [sphinx-build options]", file=sys.stderr)
        return 2
    lang, sphinx_args = argv[0], argv[1:]
    from ext.i18n import SOURCE_LANGUAGE

    check = None
    if lang != SOURCE_LANGUAGE:
        command = [sys.executable, "-m", "ext.i18n", "validate", lang]
        check = subprocess.Popen(command, cwd=ROOT)
    from sphinx.cmd.build import main as sphinx_build

    preload()
    # What is loaded now lives as long as the process. Every full garbage
    # collection would walk all of it again; frozen, it is skipped (about a
    # tenth of the build's CPU time), here and in the forked workers.
    gc.freeze()
    if check is not None and check.wait() != 0:
        return check.returncode
    return sphinx_build(sphinx_args)


def preload() -> None:
    """Import what Sphinx will load (its own extensions and ours), while the
    check runs: that is most of Sphinx's start-up."""
    import importlib
    import runpy

    from sphinx.application import builtin_extensions

    extensions = runpy.run_path(str(ROOT / "conf.py"))["extensions"]
    for name in (*builtin_extensions, *extensions):
        importlib.import_module(name)


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
