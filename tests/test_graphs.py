"""Unit tests of ext/lessons/graphs.py: a torchviz graph is read (its tensors' roles,
its saved-tensor edges), its saved tensors are named after the custom
Function's ``save_for_backward`` call, and it is styled with the light and the
dark palette, described in alt text and drawn by ``dot`` to one SVG that holds
both palettes, as the scraper does for the graph a lesson displays.
"""

from __future__ import annotations

import re
from types import SimpleNamespace

import graphviz
import pytest
import torch

from ext.lessons import graphs


def torchviz_like(ids=("140211", "140377", "140502", "140613")) -> graphviz.Digraph:
    """What torchviz draws for a Function that saved its output: ids are id()s."""
    leaf, node, out, saved = ids
    g = graphviz.Digraph()
    g.node(out, "out\n (3)", fillcolor="darkolivegreen1")
    g.node(node, "ExpLikeBackward")
    g.edge(leaf, node)
    g.node(leaf, "x\n (3)", fillcolor="lightblue")
    g.edge(saved, node, dir="none")
    g.node(saved, "\n (3)", fillcolor="orange")
    g.edge(node, out)
    return g


class ExpLike(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x):
        result = torch.exp(x)
        ctx.save_for_backward(result)
        return result

    @staticmethod
    def backward(ctx, grad_out):
        (result,) = ctx.saved_tensors
        return grad_out * result


def test_parse_reads_roles_labels_and_saved_edges():
    graph = graphs.parse(torchviz_like())
    roles = {n.name or n.shape: n.roles for n in graph.nodes.values()}
    assert roles == {"out": {"output"}, "ExpLikeBackward": set(), "x": {"leaf"}, "(3)": {"saved"}}
    assert [saved for *_, saved in graph.edges] == [False, True, False]


def test_a_tensor_with_several_roles_keeps_its_name_and_the_first_role():
    g = graphviz.Digraph()
    g.node("1", "x\n (3)", fillcolor="darkolivegreen1")
    g.node("1", "x\n (3)", fillcolor="lightblue")
    g.node("1", "\n (3)", fillcolor="orange")
    (node,) = graphs.parse(g).nodes.values()
    assert node.name == "x" and node.roles == {"output", "leaf", "saved"}
    dot = graphs.styled(graphs.parse(g), graphs.LIGHT).source
    assert graphs.LIGHT["leaf"] in dot and graphs.LIGHT["saved"] not in dot


def test_saved_tensors_are_named_after_the_save_for_backward_call():
    assert graphs.saved_names(ExpLike) == ["result"]
    graph = graphs.parse(torchviz_like())
    graphs.name_saved_tensors(graph, {"ExpLike": ExpLike})
    assert "result" in [n.name for n in graph.nodes.values()]


def test_saved_tensors_stay_anonymous_when_the_call_is_ambiguous():
    class Starred(ExpLike):
        @staticmethod
        def forward(ctx, *xs):
            ctx.save_for_backward(*xs)
            return xs[0]

    assert graphs.saved_names(Starred) is None
    graph = graphs.parse(torchviz_like())
    graphs.name_saved_tensors(graph, {"ExpLike": Starred})
    assert sorted(n.name for n in graph.nodes.values() if n.is_tensor) == ["", "out", "x"]


def test_rendering_does_not_depend_on_object_ids():
    a = graphs.render_svg(graphs.styled(graphs.parse(torchviz_like()), graphs.LIGHT))
    other = torchviz_like(ids=("9", "8", "7", "6"))
    assert a == graphs.render_svg(graphs.styled(graphs.parse(other), graphs.LIGHT))
    assert b"<!--" not in a and b"140211" not in a and a.lstrip().startswith(b"<?xml")


def test_the_dark_palette_draws_other_colours():
    graph = graphs.parse(torchviz_like())
    light = graphs.render_svg(graphs.styled(graph, graphs.LIGHT))
    dark = graphs.render_svg(graphs.styled(graph, graphs.DARK))
    assert graphs.DARK["leaf"].encode() in dark
    assert graphs.LIGHT["leaf"].encode() not in dark and light != dark


def test_alt_text_lists_tensors_nodes_and_saved_tensors():
    graph = graphs.parse(torchviz_like())
    graphs.name_saved_tensors(graph, {"ExpLike": ExpLike})
    alt = graphs.alt_text(graph)
    assert alt.startswith("Autograd graph drawn by torchviz.")
    assert "Tensors: out, x, result." in alt and "ExpLikeBackward" in alt
    assert "Saved by a custom Function: result." in alt


def test_displayed_value_is_the_last_expression_only():
    g = {"___": "value"}
    assert graphs.displayed_value("x = 1\nx", g) == "value"
    assert graphs.displayed_value("x = 1", g) is None
    assert graphs.displayed_value("def f(:", g) is None


def test_one_svg_draws_the_dark_palette_where_the_scheme_is_dark():
    svg = graphs.themed_svg(graphs.parse(torchviz_like())).decode()
    light_leaf, dark_leaf = graphs.LIGHT["leaf"], graphs.DARK["leaf"]
    assert f'fill="{light_leaf}"' in svg and dark_leaf not in svg.split("<style>")[0]
    (style,) = re.findall(r"<style>(.*?)</style>", svg)
    dark = style[style.index("@media (prefers-color-scheme:dark)") :]
    assert f'[fill="{light_leaf}"]{{fill:{dark_leaf}}}' in dark
    # Every colour the drawing uses has its dark counterpart, and no other.
    used = set(re.findall(r'(fill|stroke)="(#[0-9a-f]{6})"', svg.split("</style>")[1]))
    assert used == set(re.findall(r'\[(fill|stroke)="(#[0-9a-f]{6})"\]', dark))


def test_scraper_writes_one_svg_per_graph(tmp_path):
    src = tmp_path / "docs"
    images = src / "lessons" / "images"
    images.mkdir(parents=True)
    paths = iter([str(images / "sphx_glr_01_x_001.png")])
    block = SimpleNamespace(content="graph")
    namespace = {"___": torchviz_like(), "ExpLike": ExpLike}
    rst = graphs.scraper(
        block, {"example_globals": namespace, "image_path_iterator": paths}, {"src_dir": str(src)}
    )
    assert [p.name for p in images.iterdir()] == ["sphx_glr_01_x_001.svg"]
    assert rst.count(".. image:: /lessons/images/sphx_glr_01_x_001.svg") == 1
    assert ":class: autograd-graph\n" in rst
    assert rst.count(":alt: Autograd graph drawn by torchviz.") == 1
    assert re.search(r":width: [\d.]+pt", rst), "a width makes Sphinx link the full-size image"


def test_scraper_ignores_other_values(tmp_path):
    block = SimpleNamespace(content="x")
    assert graphs.scraper(block, {"example_globals": {"___": 3}}, {}) == ""


def test_dot_missing_is_one_clear_error(monkeypatch):
    monkeypatch.setenv("PATH", "/nonexistent")
    with pytest.raises(graphs.DotMissingError, match="apt-get install graphviz"):
        graphs.render_svg(graphviz.Digraph())
