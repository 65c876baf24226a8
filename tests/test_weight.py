"""Unit tests of ext/pages/weight.py: code blocks lose the tags that change
nothing on screen, and keep every other."""

from __future__ import annotations

from pygments.styles import get_style_by_name

from ext.pages.weight import lighter, plain_classes

LINK = (
    '<a class="sphx-glr-backref-module-torch-autograd sphx-glr-backref-type-py-function'
    ' reference external" href="https://docs.pytorch.org/x" title="torch.autograd.grad">'
)


def test_plain_classes_are_those_both_styles_draw_as_text():
    plain = plain_classes(get_style_by_name("a11y-light"), get_style_by_name("native"))
    assert {"n", "p", "w"} <= plain
    # keywords, strings, operators, and the module names that "native" underlines
    assert not plain & {"k", "s2", "o", "nn", "nc"}


def test_code_keeps_its_text_colours_and_links_with_fewer_tags():
    pre = (
        '<pre tabindex="0"><span class="kn">from</span><span class="w"> </span>'
        '<span class="nn">torch</span><span class="nn">.</span><span class="nn">autograd</span>'
        f'<span class="w"> </span><span class="kn">import</span> {LINK}<span class="n">grad</span>'
        '</a><span class="p">,</span></pre>'
    )
    assert lighter(pre, frozenset({"n", "p", "w"})) == (
        '<pre tabindex="0"><span class="kn">from</span> <span class="nn">torch.autograd</span>'
        ' <span class="kn">import</span> <a class="reference external"'
        ' href="https://docs.pytorch.org/x" title="torch.autograd.grad">grad</a>,</pre>'
    )


def test_prose_keeps_its_spans_but_inline_code_loses_its_word_spans():
    html = (
        '<p><span class="n">kept</span> <code class="docutils literal notranslate">'
        '<span class="pre">ctx.save_for_backward</span> <span class="pre">x</span></code></p>'
    )
    assert lighter(html, frozenset({"n"})) == (
        '<p><span class="n">kept</span> <code class="docutils literal notranslate">'
        "ctx.save_for_backward x</code></p>"
    )


def test_a_code_block_links_each_target_once():
    """The first use of a name in a block is its link; a later use of the
    same target keeps its colours and loses the link; another block links
    it again."""
    block = (
        '<pre><a class="reference external" href="https://x/Function" title="F">Function</a>'
        ' <a class="reference external" href="https://x/Function" title="F">'
        '<span class="nc">Cube</span></a>'
        ' <a class="reference external" href="https://x/grad" title="g">grad</a></pre>'
    )
    assert lighter(block + block, frozenset()) == 2 * (
        '<pre><a class="reference external" href="https://x/Function" title="F">Function</a>'
        ' <span class="nc">Cube</span>'
        ' <a class="reference external" href="https://x/grad" title="g">grad</a></pre>'
    )
