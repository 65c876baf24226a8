"""Turn the torchviz graphs that a lesson displays into SVG files.

sphinx-gallery calls :func:`scraper` after each code block. When the block
ends with a :class:`graphviz.Digraph` (such as ``torchviz.make_dot(...)``),
the graph is redrawn with the site's one legend (the first lesson explains
it) and rendered by Graphviz's ``dot`` into one SVG file, drawn in the light
palette, whose own style repaints it in the dark one where the colour scheme
is dark (docs/_static/custom.css gives each image the page's scheme): a page
fetches one file per graph, whichever scheme the reader chose. A click opens
it large (docs/_static/reader.js). Two things torchviz does not do are done here:

* torchviz names a Function's saved tensor only when the caller passed that
  very tensor object in ``params``. A saved output never is, because autograd
  hands out a new object each time it unpacks one; a saved intermediate is
  unpacked as the object saved, but the caller holds no reference to it to
  pass. So an anonymous saved tensor is named after the argument that the Function's
  ``forward`` (or ``setup_context``) passed to ``ctx.save_for_backward``:
  ``exp_pos`` and ``exp_neg`` rather than two anonymous boxes.
* torchviz names every node after ``id()`` of a Python object, a memory
  address. The nodes are renamed n1, n2, ... in order of first appearance,
  so a lesson gives the same SVG bytes on every build.
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


class DotMissingError(RuntimeError):
    """Graphviz's ``dot`` is not on PATH; the message says how to install it."""


def require_dot() -> str:
    """The path of ``dot``, or :class:`DotMissingError`."""
    path = shutil.which("dot")
    if path is None:
        raise DotMissingError(
            "Graphviz's `dot` was not found on PATH, and the lessons' graphs need it. "
            "Install it (Debian/Ubuntu: `sudo apt-get install graphviz`), or run "
            "`make html`, which installs it when run as root."
        )
    return path


# --------------------------------------------------------------------------
# Reading what torchviz drew

# torchviz's fill colours, and what each says about a tensor.
ROLES = {
    "lightblue": "leaf",  # a leaf that requires grad
    "darkolivegreen1": "output",  # a tensor passed to make_dot
    "darkolivegreen3": "output",  # the base of an output that is a view
    "orange": "saved",  # any other tensor that a custom Function saved
}
# A tensor with several roles is drawn with the first of them.
PRIORITY = ("leaf", "output", "saved")

_NAME = r'(?:\d+|"(?:[^"\\]|\\.)*")'
_EDGE = re.compile(rf"^\s*(?P<a>{_NAME}) -> (?P<b>{_NAME})(?:\s*\[(?P<attrs>.*)\])?\s*$", re.S)
_NODE = re.compile(rf"^\s*(?P<id>{_NAME})(?:\s*\[(?P<attrs>.*)\])?\s*$", re.S)
_ATTR = re.compile(r'(\w+)=("(?:[^"\\]|\\.)*"|[^\s"]+)')


def _attrs(text: str | None) -> dict[str, str]:
    return {
        key: value[1:-1].replace('\\"', '"') if value.startswith('"') else value
        for key, value in _ATTR.findall(text or "")
    }


@dataclass
class Node:
    label: str = ""
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
        if m := _EDGE.match(line):
            nodes.setdefault(m["a"], Node())
            nodes.setdefault(m["b"], Node())
            # A saved tensor's line has no arrowhead.
            edges.append((m["a"], m["b"], _attrs(m["attrs"]).get("dir") == "none"))
            continue
        m = _NODE.match(line)
        if m is None or m["id"] in ("graph", "node", "edge"):
            continue
        attrs = _attrs(m["attrs"])
        node = nodes.setdefault(m["id"], Node())
        # torchviz draws a tensor as "name\n (shape)"; keep a name once given.
        new = attrs.get("label")
        if new is not None and (not node.label or (new.split("\n")[0].strip() and not node.name)):
            node.label = new
        if role := ROLES.get(attrs.get("fillcolor", "")):
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
        try:
            tree = ast.parse(textwrap.dedent(inspect.getsource(getattr(function, method))))
        except (AttributeError, OSError, TypeError, SyntaxError):
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
    saved: dict[str, list[str]] = {}
    for a, b, is_saved in graph.edges:
        if is_saved:
            saved.setdefault(b, []).append(a)
    for node_id, tensors in saved.items():
        # A custom Function's node is named after its class: "ExpLikeBackward".
        label = graph.nodes[node_id].label
        function = namespace.get(label.removesuffix("Backward"))
        if not (label.endswith("Backward") and isinstance(function, type)):
            continue
        names = saved_names(function)
        if names is not None and len(names) == len(tensors):
            for tensor_id, name in zip(tensors, names, strict=True):
                node = graph.nodes[tensor_id]
                if not node.name:
                    node.label = f"{name}\n{node.shape}"


# --------------------------------------------------------------------------
# Drawing with the site's legend


# The legend's colours, each as (light, dark): labels, lines, backward nodes,
# and the fill and border of a tensor in each role.
LEGEND = {
    "text": ("#1f1f1f", "#e6e6e6"),
    "line": ("#555555", "#b0b0b0"),
    "node": ("#e8e8e8", "#3a3d41"),
    "leaf": ("#cde3f6", "#1e4a70"),
    "leaf border": ("#2c6aa0", "#7fb6e6"),
    "output": ("#d5eec6", "#2c5424"),
    "output border": ("#3f7a2b", "#8fcf78"),
    "saved": ("#ffdcaa", "#6e4300"),
    "saved border": ("#b36200", "#f0a850"),
}
LIGHT = {key: light for key, (light, _) in LEGEND.items()}
DARK = {key: dark for key, (_, dark) in LEGEND.items()}


def styled(graph: Graph, palette: dict) -> graphviz.Digraph:
    """*graph* drawn with the legend, its nodes named n1, n2, ... in order."""
    ids = {old: f"n{i}" for i, old in enumerate(graph.nodes, start=1)}
    dot = graphviz.Digraph(
        graph_attr={"bgcolor": "transparent", "size": "12,12"},
        node_attr={
            "shape": "box",
            "fontname": "monospace",
            "fontsize": "10",
            "height": "0.2",
            "fontcolor": palette["text"],
            "color": palette["line"],
        },
        edge_attr={"color": palette["line"]},
    )
    for old, node in graph.nodes.items():
        role = next((r for r in PRIORITY if r in node.roles), None)
        if role is None:  # a backward node
            dot.node(ids[old], node.label, style="filled", fillcolor=palette["node"])
        else:
            label = f"{node.name}\n{node.shape}" if node.name else node.shape
            dot.node(
                ids[old],
                label,
                style="rounded,filled",
                fillcolor=palette[role],
                color=palette[f"{role} border"],
            )
    for a, b, is_saved in graph.edges:
        dot.edge(ids[a], ids[b], **({"dir": "none", "style": "dashed"} if is_saved else {}))
    return dot


def render_svg(dot: graphviz.Digraph) -> bytes:
    """Render *dot* to SVG bytes that are identical from build to build."""
    require_dot()
    svg = dot.pipe(format="svg")
    # The first comment names the Graphviz version; the rest repeat node names.
    return re.sub(rb"<!--.*?-->\n?", b"", svg, flags=re.DOTALL)


def themed_svg(graph: Graph) -> bytes:
    """*graph* as one SVG: drawn in LIGHT, and in DARK where the scheme is dark.

    The style maps each colour that ``dot`` wrote as a fill or stroke
    attribute to its dark counterpart. In an ``<img>``, the scheme is the
    image's ``color-scheme`` (Chromium, Firefox); opened on its own, the
    reader's system setting, with the canvas of that scheme.
    """
    svg = render_svg(styled(graph, LIGHT))
    rules = "".join(
        f'[{attr}="{light}"]{{{attr}:{dark}}}'
        for light, dark in LEGEND.values()
        for attr in ("fill", "stroke")
        if f'{attr}="{light}"'.encode() in svg
    )
    style = f"<style>svg{{color-scheme:light dark}}@media (prefers-color-scheme:dark){{{rules}}}</style>"
    return re.sub(rb"(<svg\b[^>]*>)", lambda m: m[1] + b"\n" + style.encode(), svg, count=1)


def alt_text(graph: Graph) -> str:
    """What the graph holds, in one line: its tensors, nodes and saved tensors."""
    nodes = graph.nodes.values()
    tensors = dict.fromkeys(n.name for n in nodes if n.is_tensor and n.name)
    backward = dict.fromkeys(n.label for n in nodes if not n.is_tensor)
    saved = [n.name or n.shape for n in nodes if n.roles == {"saved"}]
    parts = ["Autograd graph drawn by torchviz."]
    for title, names in (("Tensors", tensors), ("Backward nodes", backward)):
        if names:
            parts.append(f"{title}: {', '.join(names)}.")
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


def scraper(block, block_vars: dict, gallery_conf: dict) -> str:
    """sphinx-gallery image scraper for graphs (see the module docstring)."""
    namespace = block_vars["example_globals"]
    value = displayed_value(block.content, namespace)
    if not isinstance(value, graphviz.Digraph):
        return ""
    graph = parse(value)
    name_saved_tensors(graph, namespace)
    alt = alt_text(graph)
    path = Path(next(block_vars["image_path_iterator"])).with_suffix(".svg")
    svg = themed_svg(graph)
    if not path.exists() or path.read_bytes() != svg:
        path.write_bytes(svg)
    uri = "/" + path.relative_to(gallery_conf["src_dir"]).as_posix()
    rst = f"\n.. image:: {uri}\n   :alt: {alt}\n   :class: autograd-graph\n"
    # dot's width: Sphinx then links the image to its full-size file
    # (html_scaled_image_link), which opens without JavaScript too.
    if width := re.search(rb'<svg[^>]*\swidth="([\d.]+pt)"', svg):
        rst += f"   :width: {width[1].decode()}\n"
    return rst + "\n"
