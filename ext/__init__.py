"""The site's own Sphinx extensions and commands (README.md lists them)."""

from pathlib import Path

# The project: conf.py, gallery/, docs/ and locale/ are here. Defined once;
# the commands in tools/ and the tests import it too.
ROOT = Path(__file__).resolve().parent.parent
