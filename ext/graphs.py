"""Turn the graphviz graphs that a lesson displays into SVG files.

sphinx-gallery calls :func:`scraper` after each code block. When the block
ends with an expression whose value is a :class:`graphviz.Digraph` (for
example ``torchviz.make_dot(...)``, or a name bound to one), the graph is
rendered by Graphviz's ``dot`` into an SVG file next to the gallery's other
images, and the block's output gets an ``image`` directive with alt text.

torchviz names every node after ``id()`` of a Python object, a memory address
that changes from run to run. :func:`stable_copy` renames the nodes in order of
first appearance, so the same lesson gives the same SVG bytes on every build.
"""

from __future__ import annotations

import ast
import re
import shutil
from pathlib import Path

import graphviz

# One statement of a graphviz body: "\t<node>" or "\t<node> -> <node>", where a
# node name is a bare number (torchviz) or a quoted string.
_STATEMENT = re.compile(
    r'^(?P<indent>\s*)(?P<a>\d+|"(?:[^"\\]|\\.)*")'
    r'(?:(?P<arrow> -> )(?P<b>\d+|"(?:[^"\\]|\\.)*"))?(?P<rest>.*)$',
    re.DOTALL,
)

DOT_MISSING = (
    "Graphviz's `dot` was not found on PATH, and the lessons' graphs need it. "
    "Install it (Debian/Ubuntu: `sudo apt-get install graphviz`), or run "
    "`make html`, which installs it when run as root."
)


class DotMissingError(RuntimeError):
    """Raised when Graphviz's ``dot`` executable is not on PATH."""

    def __init__(self) -> None:
        super().__init__(DOT_MISSING)


def require_dot() -> str:
    """Return the path of ``dot``, or raise :class:`DotMissingError`."""
    path = shutil.which("dot")
    if path is None:
        raise DotMissingError()
    return path


def stable_copy(graph: graphviz.Digraph) -> graphviz.Digraph:
    """Return a copy of *graph* whose node names are n1, n2, … in order of use."""
    names: dict[str, str] = {}

    def rename(name: str) -> str:
        return names.setdefault(name, f"n{len(names) + 1}")

    body = []
    for line in graph.body:
        m = _STATEMENT.match(line)
        if m is None or m["a"].startswith(("graph", "node", "edge")):
            body.append(line)
            continue
        new = m["indent"] + rename(m["a"])
        if m["arrow"]:
            new += m["arrow"] + rename(m["b"])
        body.append(new + m["rest"])
    copy = graph.copy()
    copy.body = body
    return copy


def alt_text(graph: graphviz.Digraph) -> str:
    """The graph's alt text: its ``comment`` if the lesson set one.

    Otherwise a description built from the node labels, so that no graph is
    ever embedded without alt text.
    """
    if graph.comment:
        return " ".join(str(graph.comment).split())
    labels = []
    for line in graph.body:
        m = re.search(r'label="?((?:[^"\\\]]|\\.)*)"?', line)
        if m and "->" not in line.split("[")[0]:
            label = m[1].replace("\\n", " ").strip()
            if label and label not in labels:
                labels.append(label)
    return "Computation graph with the nodes: " + ", ".join(labels) + "."


def render_svg(graph: graphviz.Digraph) -> bytes:
    """Render *graph* to SVG bytes that are identical from build to build."""
    require_dot()
    svg = stable_copy(graph).pipe(format="svg")
    # The first comment names the Graphviz version; the rest repeat node names.
    return re.sub(rb"<!--.*?-->\n?", b"", svg, flags=re.DOTALL)


def displayed_value(block_source: str, example_globals: dict):
    """The value that a code block displays: its last expression, or None."""
    try:
        tree = ast.parse(block_source)
    except SyntaxError:
        return None
    if tree.body and isinstance(tree.body[-1], ast.Expr):
        return example_globals.get("___")
    return None


def image_rst(path: Path, srcdir: Path, alt: str) -> str:
    """The reST that embeds the SVG at *path*."""
    uri = "/" + path.relative_to(srcdir).as_posix()
    alt = alt.replace("\n", " ")
    return f"\n.. image:: {uri}\n   :alt: {alt}\n   :class: autograd-graph\n\n"


def scraper(block, block_vars: dict, gallery_conf: dict) -> str:
    """sphinx-gallery image scraper for graphs (see the module docstring)."""
    value = displayed_value(block.content, block_vars["example_globals"])
    if not isinstance(value, graphviz.Digraph):
        return ""
    png_path = Path(next(block_vars["image_path_iterator"]))
    svg_path = png_path.with_suffix(".svg")
    svg = render_svg(value)
    if not svg_path.exists() or svg_path.read_bytes() != svg:
        svg_path.write_bytes(svg)
    return image_rst(svg_path, Path(gallery_conf["src_dir"]), alt_text(value))
