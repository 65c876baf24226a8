"""Turn the torchviz graphs that a lesson displays into SVG files.

sphinx-gallery calls :func:`scraper` after each code block. When the block
ends with an expression whose value is a :class:`graphviz.Digraph` (for
example ``torchviz.make_dot(...)``), the graph is redrawn with the site's one
legend and rendered by Graphviz's ``dot`` twice, for the light and the dark
theme. The page shows the one that matches the theme; a click opens it full
size.

The legend (explained once, in the first lesson):

* grey boxes are backward nodes (a tensor's ``grad_fn``, or ``AccumulateGrad``
  for a leaf); rounded boxes are tensors: blue for a leaf that requires grad,
  green for a tensor passed to ``make_dot``, orange for any other tensor that
  a custom Function saved;
* arrows point the way the values were computed, from inputs to results; a
  backward pass walks them the other way;
* a dashed line without an arrowhead joins a custom Function's node to a
  tensor that it saved.

torchviz gives a Function's saved tensors no name unless the caller passed
the very same tensor object in ``params`` (an input can be; an output or an
intermediate cannot, because autograd hands out a new tensor object each time
it unpacks one). So a saved tensor without a name is named after the argument
that the Function's ``forward`` (or ``setup_context``) passed to
``ctx.save_for_backward``: ``exp_pos`` and ``exp_neg`` rather than two
anonymous boxes.

torchviz also names every node after ``id()`` of a Python object, a memory
address that changes from run to run. The nodes are renamed n1, n2, ... in
order of first appearance, so the same lesson gives the same SVG bytes on
every build.
"""

from __future__ import annotations

import ast
import inspect
import re
import shutil
import textwrap
from dataclasses import dataclass, field
from pathlib import Path

import graphviz

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


# --------------------------------------------------------------------------
# Reading what torchviz drew

# torchviz's fill colours, and what each says about a tensor.
ROLES = {
    "lightblue": "leaf",
    "darkolivegreen1": "output",
    "darkolivegreen3": "output",  # the base of an output that is a view
    "orange": "saved",
}
# A tensor with several roles is drawn with the first of them.
PRIORITY = ("leaf", "output", "saved")

_NAME = r'(?:\d+|"(?:[^"\\]|\\.)*")'
_EDGE = re.compile(rf"^\s*(?P<a>{_NAME}) -> (?P<b>{_NAME})(?:\s*\[(?P<attrs>.*)\])?\s*$", re.S)
_NODE = re.compile(rf"^\s*(?P<id>{_NAME})(?:\s*\[(?P<attrs>.*)\])?\s*$", re.S)
_ATTR = re.compile(r'(\w+)=("(?:[^"\\]|\\.)*"|[^\s"]+)')


def _attrs(text: str | None) -> dict[str, str]:
    found = {}
    for key, value in _ATTR.findall(text or ""):
        if value.startswith('"'):
            value = value[1:-1].replace('\\"', '"')
        found[key] = value
    return found


@dataclass
class Node:
    label: str
    roles: set[str] = field(default_factory=set)

    @property
    def is_tensor(self) -> bool:
        return bool(self.roles)

    @property
    def name(self) -> str:
        """A tensor's name (the line before its shape), or a node's label."""
        return self.label.split("\n")[0].strip() if self.is_tensor else self.label

    @property
    def shape(self) -> str:
        return self.label.split("\n")[-1].strip() if self.is_tensor else ""


@dataclass
class Graph:
    nodes: dict[str, Node]
    edges: list[tuple[str, str, bool]]  # (from, to, is a saved-tensor line)


def parse(graph: graphviz.Digraph) -> Graph:
    """The nodes (in order of first appearance) and edges torchviz drew."""
    nodes: dict[str, Node] = {}
    edges: list[tuple[str, str, bool]] = []
    for line in graph.body:
        m = _EDGE.match(line)
        if m:
            for end in (m["a"], m["b"]):
                nodes.setdefault(end, Node(""))
            saved = _attrs(m["attrs"]).get("dir") == "none"
            edges.append((m["a"], m["b"], saved))
            continue
        m = _NODE.match(line)
        if m is None or m["id"] in ("graph", "node", "edge"):
            continue
        attrs = _attrs(m["attrs"])
        node = nodes.setdefault(m["id"], Node(""))
        if "label" in attrs:
            # torchviz draws a tensor as "name\n (shape)"; keep a name once given.
            new = attrs["label"]
            if not node.label or (new.split("\n")[0].strip() and not node.name):
                node.label = new
        role = ROLES.get(attrs.get("fillcolor", ""))
        if role:
            node.roles.add(role)
    return Graph(nodes, edges)


# --------------------------------------------------------------------------
# Naming saved tensors after the code that saved them


def saved_names(function: type) -> list[str] | None:
    """The arguments of the one ``ctx.save_for_backward(...)`` call in the
    ``forward`` or ``setup_context`` of *function*, as written; None if there
    is no such single call with plain arguments."""
    calls = []
    for method in ("forward", "setup_context"):
        code = getattr(function, method, None)
        if code is None:
            continue
        try:
            tree = ast.parse(textwrap.dedent(inspect.getsource(code)))
        except (OSError, TypeError, SyntaxError):
            continue
        calls += [
            node
            for node in ast.walk(tree)
            if isinstance(node, ast.Call)
            and isinstance(node.func, ast.Attribute)
            and node.func.attr == "save_for_backward"
        ]
    if len(calls) != 1 or any(isinstance(a, ast.Starred) for a in calls[0].args):
        return None
    return [ast.unparse(arg) for arg in calls[0].args]


def name_saved_tensors(graph: Graph, namespace: dict) -> None:
    """Name each anonymous tensor a custom Function saved (see the module)."""
    import torch

    saved: dict[str, list[str]] = {}
    for a, b, is_saved in graph.edges:
        if is_saved:
            saved.setdefault(b, []).append(a)
    for node_id, tensors in saved.items():
        label = graph.nodes[node_id].label
        function = namespace.get(label.removesuffix("Backward"))
        if not (
            label.endswith("Backward")
            and isinstance(function, type)
            and issubclass(function, torch.autograd.Function)
        ):
            continue
        names = saved_names(function)
        if names is None or len(names) != len(tensors):
            continue
        for tensor_id, name in zip(tensors, names, strict=True):
            node = graph.nodes[tensor_id]
            if not node.name:
                node.label = f"{name}\n{node.shape}"


# --------------------------------------------------------------------------
# Drawing with the site's legend


@dataclass(frozen=True)
class Palette:
    text: str
    line: str
    node: str
    fills: dict[str, str]
    borders: dict[str, str]


LIGHT = Palette(
    text="#1f1f1f",
    line="#555555",
    node="#e8e8e8",
    fills={"leaf": "#cde3f6", "output": "#d5eec6", "saved": "#ffdcaa"},
    borders={"leaf": "#2c6aa0", "output": "#3f7a2b", "saved": "#b36200"},
)
DARK = Palette(
    text="#e6e6e6",
    line="#b0b0b0",
    node="#3a3d41",
    fills={"leaf": "#1e4a70", "output": "#2c5424", "saved": "#6e4300"},
    borders={"leaf": "#7fb6e6", "output": "#8fcf78", "saved": "#f0a850"},
)


def styled(graph: Graph, palette: Palette) -> graphviz.Digraph:
    """*graph* drawn with the legend, its nodes named n1, n2, ... in order."""
    ids = {old: f"n{i}" for i, old in enumerate(graph.nodes, start=1)}
    dot = graphviz.Digraph(
        graph_attr={"bgcolor": "transparent", "size": "12,12"},
        node_attr={
            "shape": "box",
            "fontname": "monospace",
            "fontsize": "10",
            "height": "0.2",
            "fontcolor": palette.text,
            "color": palette.line,
        },
        edge_attr={"color": palette.line},
    )
    for old, node in graph.nodes.items():
        role = next((r for r in PRIORITY if r in node.roles), None)
        if role is None:
            dot.node(ids[old], node.label, style="filled", fillcolor=palette.node)
        else:
            label = f"{node.name}\n{node.shape}" if node.name else node.shape
            dot.node(
                ids[old],
                label,
                style="rounded,filled",
                fillcolor=palette.fills[role],
                color=palette.borders[role],
            )
    for a, b, is_saved in graph.edges:
        if is_saved:
            dot.edge(ids[a], ids[b], dir="none", style="dashed")
        else:
            dot.edge(ids[a], ids[b])
    return dot


def render_svg(dot: graphviz.Digraph) -> bytes:
    """Render *dot* to SVG bytes that are identical from build to build."""
    require_dot()
    svg = dot.pipe(format="svg")
    # The first comment names the Graphviz version; the rest repeat node names.
    return re.sub(rb"<!--.*?-->\n?", b"", svg, flags=re.DOTALL)


def svg_width(svg: bytes) -> str:
    """The width that ``dot`` gave the drawing, such as ``"251pt"``."""
    m = re.search(rb'<svg[^>]*\swidth="([\d.]+pt)"', svg)
    return m[1].decode() if m else ""


def alt_text(graph: Graph) -> str:
    """What the graph holds, in one line: its tensors, nodes and saved tensors."""
    named = [n.name for n in graph.nodes.values() if n.is_tensor and n.name]
    tensors = list(dict.fromkeys(named))
    backward = list(dict.fromkeys(n.label for n in graph.nodes.values() if not n.is_tensor))
    saved = [n.name or n.shape for n in graph.nodes.values() if n.roles == {"saved"}]
    parts = ["Autograd graph drawn by torchviz."]
    if tensors:
        parts.append("Tensors: " + ", ".join(tensors) + ".")
    if backward:
        parts.append("Backward nodes: " + ", ".join(backward) + ".")
    if saved:
        parts.append("Saved by a custom Function: " + ", ".join(saved) + ".")
    return " ".join(parts)


# --------------------------------------------------------------------------
# sphinx-gallery


def displayed_value(block_source: str, example_globals: dict):
    """The value that a code block displays: its last expression, or None.

    A shim: sphinx-gallery gives a scraper no public way to see the value a
    block displays. It keeps it in ``example_globals["___"]``, an undocumented
    name; if that ever changes, no graph is drawn, and
    tests/test_build.py (every lesson that calls make_dot shows a graph) fails.
    """
    try:
        tree = ast.parse(block_source)
    except SyntaxError:
        return None
    if tree.body and isinstance(tree.body[-1], ast.Expr):
        return example_globals.get("___")
    return None


def image_rst(path: Path, srcdir: Path, alt: str, width: str, theme: str) -> str:
    """The reST that embeds the SVG at *path* for one theme (light or dark).

    A width makes Sphinx link the image to its full-size file
    (``html_scaled_image_link``), which a phone reader can open and zoom.
    """
    uri = "/" + path.relative_to(srcdir).as_posix()
    lines = [f".. image:: {uri}", f"   :alt: {alt}", f"   :class: autograd-graph only-{theme}"]
    if width:
        lines.append(f"   :width: {width}")
    return "\n".join(lines) + "\n"


def write_if_changed(path: Path, data: bytes) -> None:
    if not path.exists() or path.read_bytes() != data:
        path.write_bytes(data)


def scraper(block, block_vars: dict, gallery_conf: dict) -> str:
    """sphinx-gallery image scraper for graphs (see the module docstring)."""
    namespace = block_vars["example_globals"]
    value = displayed_value(block.content, namespace)
    if not isinstance(value, graphviz.Digraph):
        return ""
    graph = parse(value)
    name_saved_tensors(graph, namespace)
    alt = alt_text(graph)
    light = Path(next(block_vars["image_path_iterator"])).with_suffix(".svg")
    dark = light.with_name(light.stem + "_dark.svg")
    srcdir = Path(gallery_conf["src_dir"])
    rst = ""
    for path, palette, theme in ((light, LIGHT, "light"), (dark, DARK, "dark")):
        svg = render_svg(styled(graph, palette))
        write_if_changed(path, svg)
        rst += "\n" + image_rst(path, srcdir, alt, svg_width(svg), theme)
    return rst + "\n"
