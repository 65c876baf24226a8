"""Unit tests of the project's own Sphinx extension code (ext/)."""

from __future__ import annotations

import json
import re
from pathlib import Path
from types import SimpleNamespace

import graphviz
import polib
import pytest
import torch

from ext import cards, catalogs, gallery, graphs, landing, languages


# -- graphs ------------------------------------------------------------------
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
    assert graphs.LIGHT.fills["leaf"] in dot and graphs.LIGHT.fills["saved"] not in dot


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
    assert graphs.DARK.fills["leaf"].encode() in dark
    assert graphs.LIGHT.fills["leaf"].encode() not in dark and light != dark


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


def test_scraper_writes_a_light_and_a_dark_svg(tmp_path):
    src = tmp_path / "docs"
    images = src / "lessons" / "images"
    images.mkdir(parents=True)
    paths = iter([str(images / "sphx_glr_01_x_001.png")])
    block = SimpleNamespace(content="graph")
    namespace = {"___": torchviz_like(), "ExpLike": ExpLike}
    rst = graphs.scraper(
        block, {"example_globals": namespace, "image_path_iterator": paths}, {"src_dir": str(src)}
    )
    for name, theme in (("sphx_glr_01_x_001.svg", "light"), ("sphx_glr_01_x_001_dark.svg", "dark")):
        assert (images / name).is_file()
        assert f".. image:: /lessons/images/{name}" in rst
        assert f":class: autograd-graph only-{theme}" in rst
    assert rst.count(":alt: Autograd graph drawn by torchviz.") == 2
    assert re.search(r":width: [\d.]+pt", rst), "a width makes Sphinx link the full-size image"


def test_scraper_ignores_other_values(tmp_path):
    block = SimpleNamespace(content="x")
    assert graphs.scraper(block, {"example_globals": {"___": 3}}, {}) == ""


def test_dot_missing_is_one_clear_error(monkeypatch):
    monkeypatch.setenv("PATH", "/nonexistent")
    with pytest.raises(graphs.DotMissingError, match="apt-get install graphviz"):
        graphs.render_svg(graphviz.Digraph())


# -- gallery -----------------------------------------------------------------
CARD = """
.. raw:: html

    <div class="sphx-glr-thumbcontainer" tooltip="Save the &quot;inputs&quot;.">

.. only:: html

  .. image:: /lessons/images/thumb/sphx_glr_01_a_thumb.svg
    :alt:

  :doc:`/lessons/01_a`

.. raw:: html

      <div class="sphx-glr-thumbnail-title">Pattern 1</div>
    </div>

"""


def test_cards_become_translatable_directives():
    out = cards.translatable_cards("intro\n" + CARD + "outro\n")
    assert "raw:: html" not in out.split("outro")[0].split("intro")[1]
    assert ".. lesson-card:: /lessons/01_a" in out
    assert ":thumbnail: /lessons/images/thumb/sphx_glr_01_a_thumb.svg" in out
    assert '   Pattern 1\n\n   Save the "inputs".\n' in out


def test_text_without_cards_is_unchanged():
    assert cards.translatable_cards("no cards here\n") == "no cards here\n"


def test_describe_failure_names_script_and_line():
    src = str(gallery.ROOT / "gallery" / "01_x.py")
    tb = (
        "Traceback (most recent call last):\n"
        f'  File "{src}", line 12, in <module>\n'
        "    f()\n"
        f'  File "{src}", line 4, in f\n'
        "    raise ValueError('boom')\n"
        "ValueError: boom\n"
    )
    text = gallery.describe_failure(src, tb)
    assert text.splitlines()[0] == "error: lesson gallery/01_x.py:4 raised ValueError: boom"
    assert text.splitlines()[-1] == "Reproduce it with: python gallery/01_x.py"


def test_forget_incomplete_removes_unrecorded_checksums(tmp_path):
    (tmp_path / "01_a.py.md5").write_text("aaa")
    (tmp_path / "02_b.py.md5").write_text("bbb")
    (tmp_path / gallery.COMPLETE).write_text(json.dumps({"lessons": {"01_a.py.md5": "aaa"}}))
    gallery.forget_incomplete(tmp_path)
    assert (tmp_path / "01_a.py.md5").exists()
    assert not (tmp_path / "02_b.py.md5").exists()


def test_record_complete_lists_only_current_lessons(tmp_path):
    (tmp_path / gallery.HEADER).write_text("Lessons\n")
    (tmp_path / "01_a.py").write_text("print(1)\n")
    (tmp_path / "01_a.py.md5").write_text(gallery._md5(tmp_path / "01_a.py"))
    (tmp_path / "02_b.py").write_text("print(2)\n")
    (tmp_path / "02_b.py.md5").write_text("stale")
    gallery.record_complete(tmp_path, tmp_path)
    done = json.loads((tmp_path / gallery.COMPLETE).read_text())
    assert list(done["lessons"]) == ["01_a.py.md5"]
    assert done["header"] == gallery._md5(tmp_path / gallery.HEADER)


def test_each_lesson_keeps_the_run_that_executed_it(tmp_path):
    (tmp_path / gallery.HEADER).write_text("Lessons\n")
    for name in ("01_a.py", "02_b.py"):
        (tmp_path / name).write_text(f"print({name!r})\n")
        (tmp_path / f"{name}.md5").write_text(gallery._md5(tmp_path / name))
    gallery.record_complete(tmp_path, tmp_path, ["01_a.py", "02_b.py"], {"torch": "1", "epoch": 1})
    first = gallery.run_file(tmp_path, "01_a.py").stat().st_mtime_ns
    gallery.record_complete(tmp_path, tmp_path, ["02_b.py"], {"torch": "2", "epoch": 2})
    assert gallery.lesson_runs(tmp_path) == {
        "01_a.py": {"torch": "1", "epoch": 1, "solution": None},
        "02_b.py": {"torch": "2", "epoch": 2, "solution": None},
    }
    # The page of a lesson that did not run depends on a file left untouched.
    assert gallery.run_file(tmp_path, "01_a.py").stat().st_mtime_ns == first


def test_another_pytorch_runs_every_lesson_again(tmp_path):
    src, out = tmp_path / "gallery", tmp_path / "out"
    src.mkdir()
    out.mkdir()
    (src / gallery.HEADER).write_text("Lessons\n")
    (src / "01_a.py").write_text("a\n")
    (out / "01_a.py").write_text("a\n")
    (out / "01_a.py.md5").write_text(gallery._md5(src / "01_a.py"))
    (out / "index.rst").write_text("index\n")
    gallery.record_complete(out, src, ["01_a.py"], {"torch": "0.0.1", "epoch": 0})
    assert not gallery.up_to_date(src, out)
    gallery.forget_incomplete(out, gallery.installed_torch())
    assert gallery.stale_lessons(src, out) == ["01_a.py"]


def test_a_changed_solution_runs_its_lesson_again(tmp_path):
    """The hidden cell of a lesson with an exercise proves the solution: a
    changed solution (or prove.py) makes the lesson run again, its source
    unchanged; another lesson's solution does not."""
    src, out = tmp_path / "gallery", tmp_path / "out"
    (src / "solutions").mkdir(parents=True)
    out.mkdir()
    (src / gallery.HEADER).write_text("Lessons\n")
    for name in ("01_a.py", "02_b.py"):
        (src / name).write_text(f"{name}\n")
        (out / name).write_text(f"{name}\n")
        (out / f"{name}.md5").write_text(gallery._md5(src / name))
    (src / "solutions" / "01_a.py").write_text("answer = 1\n")
    (src / "solutions" / "prove.py").write_text("def prove(): ...\n")
    (out / "index.rst").write_text("index\n")
    run = {"torch": gallery.installed_torch(), "epoch": 0}
    gallery.record_complete(out, src, ["01_a.py", "02_b.py"], run)
    assert gallery.up_to_date(src, out)
    (src / "solutions" / "01_a.py").write_text("answer = 2\n")
    assert not gallery.up_to_date(src, out)
    gallery.forget_incomplete(out, run["torch"], src)
    assert gallery.stale_lessons(src, out) == ["01_a.py"]


def test_our_checksum_is_sphinx_gallerys(tmp_path):
    from sphinx_gallery.utils import get_md5sum

    path = tmp_path / "a.py"
    path.write_bytes("x = 'ü'\r\nprint(x)\n".encode())
    assert gallery._md5(path) == get_md5sum(path, mode="t")


def test_up_to_date_needs_every_lesson_and_the_header_unchanged(tmp_path):
    src, out = tmp_path / "gallery", tmp_path / "out"
    src.mkdir()
    out.mkdir()
    (src / gallery.HEADER).write_text("Lessons\n")
    (src / "01_a.py").write_text("a\n")
    (out / "01_a.py").write_text("a\n")
    (out / "01_a.py.md5").write_text(gallery._md5(src / "01_a.py"))
    (out / "index.rst").write_text("index\n")
    run = {"torch": gallery.installed_torch(), "epoch": 0}
    gallery.record_complete(out, src, ["01_a.py"], run)
    assert gallery.up_to_date(src, out)
    (src / gallery.HEADER).write_text("Lessons, renamed\n")
    assert not gallery.up_to_date(src, out)
    gallery.record_complete(out, src)
    assert gallery.up_to_date(src, out)
    (src / "02_b.py").write_text("b\n")
    assert not gallery.up_to_date(src, out)


def test_stale_lessons(tmp_path):
    src, out = tmp_path / "gallery", tmp_path / "out"
    src.mkdir()
    out.mkdir()
    (src / "01_a.py").write_text("a\n")
    (src / "02_b.py").write_text("b\n")
    (out / "01_a.py.md5").write_text(gallery._md5(src / "01_a.py"))
    assert gallery.stale_lessons(src, out) == ["02_b.py"]


# -- i18n --------------------------------------------------------------------
@pytest.mark.parametrize("code", ["en", "zh_CN", "ja", "fr"])
def test_known_language_codes(code, tmp_path):
    languages.check_language(code, tmp_path, need_catalogs=False)


@pytest.mark.parametrize("code", ["xx", "zh-Hant-XX-bad", ""])
def test_unknown_language_codes(code, tmp_path):
    with pytest.raises(languages.LanguageError, match="unknown language code"):
        languages.check_language(code, tmp_path)


def test_a_language_without_catalogs_says_run_update_po(tmp_path):
    with pytest.raises(languages.LanguageError, match="make update-po"):
        languages.check_language("ja", tmp_path)


def write_po(path: Path, entries: list[tuple[str, str]], fuzzy: bool = False) -> Path:
    catalog = polib.POFile()
    catalog.metadata = {"Content-Type": "text/plain; charset=UTF-8", "Language": "zh_CN"}
    for msgid, msgstr in entries:
        catalog.append(polib.POEntry(msgid=msgid, msgstr=msgstr, flags=["fuzzy"] if fuzzy else []))
    path.parent.mkdir(parents=True, exist_ok=True)
    catalog.save(str(path))
    return path


@pytest.mark.parametrize(
    ("msgid", "msgstr"),
    [
        ("Use ``gradcheck`` here.", "在这里使用 ``gradcheck``。"),
        ("See :ref:`the lesson <lesson-a>`.", "见 :ref:`该课程 <lesson-a>`。"),
        ("See :doc:`/building`.", "见 :doc:`/building`。"),
        ("It is :math:`2x`.", "它是 :math:`2x`。"),
    ],
)
def test_markup_kept_passes(tmp_path, msgid, msgstr):
    po = write_po(tmp_path / "a.po", [(msgid, msgstr)])
    assert catalogs.check_catalog(po, "a", tmp_path) == []


@pytest.mark.parametrize(
    ("msgid", "msgstr"),
    [
        ("Use ``gradcheck`` here.", "在这里使用 gradcheck。"),  # literal dropped
        ("Use ``gradcheck`` here.", "在这里使用 ``梯度检查``。"),  # literal translated
        ("See :ref:`the lesson <lesson-a>`.", "见 :ref:`该课程 <lesson-b>`。"),  # target
        ("It is :math:`2x`.", "它是 :math:`2y`。"),
        ("Use ``gradcheck`` here.", "在这里使用 ``gradcheck 。"),  # broken literal
    ],
)
def test_markup_changed_is_reported_with_file_and_line(tmp_path, msgid, msgstr):
    po = write_po(tmp_path / "a.po", [(msgid, msgstr)])
    (problem,) = catalogs.check_catalog(po, "a", tmp_path)
    assert problem.path == po and problem.line > 0
    assert "markup" in problem.message


def test_broken_emphasis_is_reported(tmp_path):
    po = write_po(tmp_path / "a.po", [("It is **not** recorded.", "它 **不会被记录。")])
    (problem,) = catalogs.check_catalog(po, "a", tmp_path)
    assert "broken reST" in problem.message


def test_markdown_catalogs_use_markdown_markup(tmp_path):
    (tmp_path / "page.md").write_text("# x\n")
    ok = write_po(tmp_path / "ok.po", [("Run `make html`.", "运行 `make html`。")])
    bad = write_po(tmp_path / "bad.po", [("Run `make html`.", "运行 make html。")])
    assert catalogs.check_catalog(ok, "page", tmp_path) == []
    assert len(catalogs.check_catalog(bad, "page", tmp_path)) == 1


def test_a_syntax_error_names_file_and_line(tmp_path):
    po = tmp_path / "bad.po"
    po.write_text('msgid ""\nmsgstr ""\n\nmsgid "a"\nmsgstr "b\n')
    with pytest.raises(catalogs.CatalogError, match=r"bad.po:\d+: syntax error"):
        catalogs.load(po)


def test_landing_page_lists_every_language():
    page = landing.landing_page(["en", "zh_CN", "ja"])
    for code in ["en", "zh_CN", "ja"]:
        assert f'href="{code}/index.html"' in page
    assert 'hreflang="zh-CN"' in page and "简体中文" in page
    assert '["en", "zh_CN", "ja"]' in page


# -- Chinese style -----------------------------------------------------------
GLOSSARY = {"gradient": "梯度", "autograd": "自动微分", "tensor": "张量", "leaf tensor": "叶子张量"}


def zh(msgid, msgstr, syntax="rst"):
    return catalogs.zh_style_problems(msgid, msgstr, syntax, GLOSSARY)


def test_good_chinese_passes():
    assert zh("The gradient of ``x`` is a tensor.", "``x`` 的梯度是一个张量。") == []


def test_glossary_terms_get_their_translation():
    (problem,) = zh("The gradient is zero.", "斜率为零。")
    assert "'gradient'" in problem and "梯度" in problem


def test_longer_glossary_terms_win():
    assert zh("A leaf tensor.", "一个叶子张量。") == []
    (problem,) = zh("A leaf tensor.", "一个叶节点。")
    assert "'leaf tensor'" in problem


def test_code_is_not_held_to_the_glossary():
    assert zh("Call ``torch.autograd.grad``.", "调用 ``torch.autograd.grad``。") == []


@pytest.mark.parametrize("bad", ["渐变", "自动分级", "转发"])
def test_known_mistranslations_are_refused(bad):
    problems = zh("It works.", f"它{bad}了。")
    assert any(bad in p for p in problems)


@pytest.mark.parametrize(
    "msgstr",
    ["梯度是零, 对吗", "梯度是零.", "梯度(一阶)是零。", "注意:梯度是零。"],
)
def test_half_width_punctuation_in_chinese_is_reported(msgstr):
    assert any("full-width" in p for p in zh("The gradient is zero.", msgstr))


@pytest.mark.parametrize("msgstr", ["使用PyTorch计算梯度。", "梯度有3个分量。"])
def test_missing_space_between_chinese_and_latin_is_reported(msgstr):
    assert any("one space" in p for p in zh("Use PyTorch to compute the gradient.", msgstr))


def test_space_before_full_width_punctuation_is_reported():
    assert any("no space" in p for p in zh("Use PyTorch.", "使用 PyTorch 。"))


def test_the_real_glossary_is_read_from_the_docs():
    terms = catalogs.read_glossary()
    for term in [
        "backward",
        "forward",
        "gradient",
        "double backward",
        "computation graph",
        "autograd",
        "tensor",
        "in-place",
        "saved tensor",
        "leaf tensor",
        "hook",
        "Jacobian",
        "Hessian",
        "vector-Jacobian product",
    ]:
        assert term in terms, term
    assert terms["gradient"] == "梯度" and terms["autograd"] == "自动微分"


def test_a_term_inside_a_dotted_name_is_code():
    assert zh("Extending torch.autograd", "扩展 torch.autograd") == []


def test_markdown_code_spans_with_several_backticks():
    tokens = catalogs.markup_tokens("Keep `` :math:`2x` `` and ` ``x`` ` intact.", "md")
    assert tokens == sorted(["`` :math:`2x` ``", "` ``x`` `"])


def test_a_page_that_quotes_a_mistranslation_may_quote_it():
    assert not any("渐变" in p for p in zh("Never write 渐变.", "不要写渐变。"))


def test_the_search_dictionary_holds_whole_glossary_words():
    words = catalogs.glossary_words()
    for word in ["反向传播", "计算图", "梯度", "自动微分", "二阶反向传播"]:
        assert word in words


def test_scrollable_blocks_become_focusable():
    from ext.a11y import focusable_scrollers

    body = '<pre>x</pre><div class="math-wrapper docutils container"><math/></div><p>t</p>'
    out = focusable_scrollers(body)
    assert out.count('tabindex="0"') == 2
    assert focusable_scrollers(out) == out


# -- theme labels ----------------------------------------------------------------
def test_theme_labels_are_translated_outside_the_article_only():
    from ext.theme_labels import translate_chrome

    table = {"Back to top": "回到顶部", "Toggle navigation of %s": "展开或折叠 %s 的导航"}
    page = (
        '<a href="#">Back to top</a><input aria-label="Toggle navigation of 课程">'
        "<article><p>Back to top</p></article><span> Back to top </span>"
    )
    out = translate_chrome(page, table)
    assert out == (
        '<a href="#">回到顶部</a><input aria-label="展开或折叠 课程 的导航">'
        "<article><p>Back to top</p></article><span> 回到顶部 </span>"
    )


def test_theme_labels_match_through_html_entities():
    from ext.theme_labels import translate_text

    table = {"Copyright © %s": "版权所有 © %s"}
    assert translate_text("Copyright &#169; 2026, us", table) == "版权所有 © 2026, us"


def test_the_credit_line_is_spaced_as_chinese_is():
    """Furo's footer, as its template writes it, translated label by label."""
    from ext.theme_labels import translate_chrome

    table = {"Made with": "构建工具：", "and": "和", "'s": "的"}
    footer = "<div>\n  Made with <a>Sphinx</a> and <a>@pradyunsg</a>'s\n  \n  <a>Furo</a>\n</div>"
    out = translate_chrome(footer, table)
    text = re.sub(r"\s+", " ", re.sub(r"<[^>]+>", "", out)).strip()
    assert text == "构建工具：Sphinx 和 @pradyunsg 的 Furo"
    # A label that is neither: its spaces stay as the template wrote them.
    assert translate_chrome("<span> Back to top </span>", {"Back to top": "回到顶部"}) == (
        "<span> 回到顶部 </span>"
    )


def test_theme_template_lists_title_copyright_and_labels():
    from types import SimpleNamespace

    from ext.theme_labels import SITE_STRINGS, THEME_STRINGS, pot_text

    config = SimpleNamespace(project="P", html_title="My site", copyright="2026, me")
    pot = polib.pofile(pot_text(config))
    assert [e.msgid for e in pot] == ["My site", "2026, me", *THEME_STRINGS, *SITE_STRINGS]


def test_one_parse_per_catalog_still_blames_the_right_message():
    found = catalogs.rst_problems_many(
        [
            "好的 ``x``。",
            "坏的 ``x 。",
            "以冒号结尾::",
            "- 一个列表项",
            "   缩进的一段",
            "又一个 **粗体** 。",
            "最后一个坏的 *x",
        ]
    )
    assert [bool(f) for f in found] == [False, True, False, False, False, False, True]


def test_check_reports_incomplete_and_unwrapped_catalogs(tmp_path):
    po = write_po(
        tmp_path / "zh_CN" / "LC_MESSAGES" / "a.po",
        [("Done.", "完成。"), ("Not yet.", ""), ("x " * 60 + "end.", "")],
    )
    catalog = polib.pofile(str(po))
    catalog[0].flags.append("fuzzy")
    catalog.save(str(po))
    # One entry written on a single long line, as an editor might leave it.
    long = "word " * 30
    po.write_text(
        po.read_text(encoding="utf-8") + f'\nmsgid "{long}"\nmsgstr "{"词 " * 30}"\n',
        encoding="utf-8",
    )
    errors = catalogs.check(["zh_CN"], tmp_path, tmp_path)
    assert any("2 untranslated and 1 fuzzy" in e for e in errors), errors
    assert f"{po}: not wrapped by powrap (run `make wrap` to fix)" in errors, errors


# -- the lesson run: warnings, failures, the JUnit report ------------------------
STRICT = """
import json, warnings
from ext import gallery

def outcome(code, module="__main__"):
    try:
        exec(code, {"__name__": module, "warnings": warnings})
    except Warning as w:
        return type(w).__name__
    return "not raised"

warn = "warnings.warn('x', {}, stacklevel=1)"
gallery.strict_warnings({}, "01_a.py", "before")
found = {
    "user": outcome(warn.format("UserWarning")),
    "future in a library": outcome(warn.format("FutureWarning"), "torch.jit._script"),
    "deprecation in the lesson": outcome(warn.format("DeprecationWarning")),
    "deprecation in a library": outcome(warn.format("DeprecationWarning"), "torchviz.dot"),
    "caught by the lesson": outcome(
        "with warnings.catch_warnings(record=True) as caught:\\n"
        "    warnings.simplefilter('always')\\n"
        "    " + warn.format("UserWarning")
    ),
    "recorded by a library": outcome(
        "with warnings.catch_warnings(record=True) as caught:\\n"
        "    " + warn.format("UserWarning"), "torch.library"
    ),
}
gallery.strict_warnings({}, "01_a.py", "after")
found["after the lesson"] = outcome(warn.format("UserWarning"))
print(json.dumps(found))
"""


def test_while_a_lesson_runs_a_warning_python_would_show_is_raised():
    """In a fresh interpreter, as in the lesson run (pytest records warnings)."""
    import subprocess
    import sys

    run = subprocess.run(
        [sys.executable, "-c", STRICT], cwd=gallery.ROOT, capture_output=True, text=True
    )
    assert run.returncode == 0, run.stderr
    assert json.loads(run.stdout) == {
        "user": "UserWarning",
        "future in a library": "FutureWarning",
        "deprecation in the lesson": "DeprecationWarning",
        "deprecation in a library": "not raised",  # hidden from a reader too
        "caught by the lesson": "not raised",
        "recorded by a library": "not raised",  # torch's opcheck records warnings
        "after the lesson": "not raised",  # shown as usual
    }
    assert "UserWarning: x" in run.stderr  # the one shown after the lesson


def test_describe_failure_names_the_line_that_warned_and_what_to_do():
    src = str(gallery.ROOT / "gallery" / "08_x.py")
    tb = (
        "Traceback (most recent call last):\n"
        f'  File "{src}", line 58, in <module>\n'
        "    x_dual = fwAD.make_dual(x, v)\n"
        '  File "/venv/lib/python3.11/site-packages/torch/jit/_script.py", line 1491, in script\n'
        "    warnings.warn(\n"
        "FutureWarning: `torch.jit.script` is deprecated.\n"
    )
    text = gallery.describe_failure(src, tb)
    first = text.splitlines()[0]
    assert first == (
        "error: lesson gallery/08_x.py:58 warned FutureWarning: `torch.jit.script` is deprecated."
    )
    assert "warnings.catch_warnings()" in text


def test_the_junit_report_gives_executed_and_failed_lessons(tmp_path):
    src = tmp_path / "docs"
    src.mkdir()
    report = tmp_path / "j.xml"
    report.write_text(
        '<?xml version="1.0" encoding="utf-8"?><testsuite>'
        '<testcase classname="01_a" file="../gallery/01_a.py" line="1" name="A" time="1"/>'
        '<testcase classname="02_b" file="../gallery/02_b.py" line="1" name="B" time="1">'
        '<failure message="ValueError: boom">Traceback\nValueError: boom</failure></testcase>'
        "</testsuite>"
    )
    executed, failed = gallery.read_junit(report, src)
    a, b = (str((tmp_path / "gallery" / n).resolve()) for n in ("01_a.py", "02_b.py"))
    assert executed == [a, b]
    assert failed == {b: "Traceback\nValueError: boom"}
    assert gallery.read_junit(tmp_path / "missing.xml", src) == ([], {})


def test_the_gallery_style_is_named_relative_to_an_in_tree_environment(tmp_path, monkeypatch):
    import sphinx_gallery

    static = tmp_path / ".venv" / "sphinx_gallery" / "_static"
    monkeypatch.setattr(sphinx_gallery, "glr_path_static", lambda: str(static))
    css = []
    app = SimpleNamespace(confdir=str(tmp_path), add_css_file=css.append)
    config = SimpleNamespace(html_static_path=["docs/_static"])
    gallery.add_gallery_style(app, config)
    assert config.html_static_path == ["docs/_static", ".venv/sphinx_gallery/_static"]
    assert css == ["sg_gallery.css"]


# -- shims: each fails here when its upstream changes -----------------------------
def test_sphinx_still_names_a_chinese_stemmer_it_does_not_ship():
    """sphinx-doc/sphinx#14229: when this fails, the installed Sphinx names the
    stemmer it ships; delete ChineseSearch from ext/search.py."""
    from sphinx.search.zh import SearchChinese

    from ext.search import ChineseSearch

    assert (SearchChinese.language_name, SearchChinese.js_stemmer_rawcode) == (
        "Chinese",
        "english-stemmer.js",
    ), "Sphinx fixed its Chinese stemmer name: remove the shim in ext/search.py"
    assert ChineseSearch.language_name + "Stemmer" == "EnglishStemmer"


def test_an_unknown_card_markup_stops_the_build():
    from sphinx.errors import ExtensionError

    source = ['.. raw:: html\n\n    <div class="sphx-glr-thumbcontainer" new-attribute="x">\n']
    with pytest.raises(ExtensionError, match="ext/cards.py"):
        cards.on_source_read(None, "lessons/index", source)


def test_formulas_become_mathml():
    from docutils.utils.math import latex2mathml

    from ext import mathml

    assert "<math" in latex2mathml.tex2mathml(r"\frac{\partial y}{\partial x}")
    assert callable(mathml.visit_math) and callable(mathml.visit_displaymath)


# -- downloads that run as downloaded ---------------------------------------------
LESSON = '''r"""
.. _lesson-a:

Title
=====

Intro.
"""

# %%
# Text with :func:`~torch.autograd.gradcheck`, see :ref:`lesson-b`.

import numpy as np
from torchviz import make_dot

# sphinx_gallery_thumbnail_path = '_static/thumbs/a.svg'
x = 1

# sphinx_gallery_start_ignore
import runpy
runpy.run_path("solutions/prove.py")
# sphinx_gallery_end_ignore
'''


def test_a_download_drops_what_only_the_build_needs():
    from ext.downloads import reader_script

    script = reader_script(LESSON)
    assert "sphinx_gallery" not in script and "solutions" not in script and "runpy" not in script
    assert script.endswith("x = 1\n")


def test_a_download_names_what_a_reader_with_pytorch_lacks():
    from ext.downloads import draws_graphs, requirements

    pins = {"torchviz": "torchviz==0.0.3", "numpy": "numpy==2.4.6"}
    assert requirements(LESSON, pins) == ["torchviz==0.0.3", "setuptools", "numpy"]
    assert requirements("import torch\nimport warnings\n", pins) == []
    assert draws_graphs(LESSON) and not draws_graphs("import numpy\n")


def test_the_note_follows_the_docstring_in_the_readers_language():
    from ext.downloads import insert_note, setup_note

    note = setup_note(["torchviz==0.0.3"], True, lambda msgid: msgid)
    assert "``pip install torchviz==0.0.3``" in note and "``dot``" in note
    script = insert_note(LESSON, note)
    after = script.split('"""\n', 2)[2]
    assert after.startswith("\n# %%\n# Besides PyTorch")
    assert all(len(line) <= 79 for line in after.splitlines()[:6])
    assert "``sudo apt-get install graphviz``" in " ".join(after.splitlines()[:6])
    chinese = {"x": "本课需要 %s。", "y": "还需要 ``dot``。"}
    zh = setup_note(["numpy"], True, lambda m: chinese["x" if "%s" in m else "y"])
    assert zh == "本课需要 ``pip install numpy``。还需要 ``dot``。"
    assert setup_note([], True, str) == ""


def test_a_notebook_turns_roles_into_links():
    from ext.downloads import Linker

    link = Linker(
        api={"torch.autograd.gradcheck": "https://docs/gradcheck.html"},
        labels={"lesson-b": ("lessons/02_b", "lesson-b", "Pattern B")},
        titles={"summary": "Summary"},
    )
    text = "Use :func:`~torch.autograd.gradcheck`, :ref:`lesson-b`, :doc:`/summary`."
    assert (
        link(text)
        == "Use [`gradcheck`](https://docs/gradcheck.html), [Pattern B](02_b.ipynb), Summary."
    )
    link.baseurl = "https://example.org/en/"
    assert "[Summary](https://example.org/en/summary.html)" in link(text)
    assert "[Pattern B](https://example.org/en/lessons/02_b.html#lesson-b)" in link(text)
    assert (
        link(":ref:`the rules <lesson-b>`")
        == "[the rules](https://example.org/en/lessons/02_b.html#lesson-b)"
    )


# -- provenance --------------------------------------------------------------------
def test_the_run_line_goes_under_a_lessons_title(tmp_path):
    from ext import provenance

    lessons = tmp_path / "lessons"
    lessons.mkdir()
    gallery.run_file(lessons, "01_a.py").write_text(
        json.dumps({"torch": "2.13.0+cpu", "epoch": 1795436971})
    )
    deps = []
    app = SimpleNamespace(srcdir=str(tmp_path), env=SimpleNamespace(note_dependency=deps.append))
    page = ".. _sphx_glr_lessons_01_a.py:\n\n\n.. _lesson-a:\n\nTitle\n=====\n\nIntro.\n"
    source = [page]
    provenance.add_run_line(app, "lessons/01_a", source)
    assert "=====\n\n.. lesson-run:: 2.13.0+cpu 2026-11-23\n\n\nIntro." in source[0]
    assert deps == [str(gallery.run_file(lessons, "01_a.py"))]
    source = [page]
    provenance.add_run_line(app, "lessons/02_b", source)  # never executed: no line
    assert source == [page]
    assert provenance.run_date(0) == "1970-01-01"


# -- API links ---------------------------------------------------------------------
def test_the_inventory_is_written_from_the_list():
    """`make inventory` was run after the last change to pytorch.txt."""
    import sphobjinv

    folder = gallery.ROOT / "docs" / "_inventories"
    listed = sphobjinv.Inventory(plaintext=(folder / "pytorch.txt").read_bytes())
    written = sphobjinv.Inventory(folder / "pytorch.inv")
    assert [o.as_str for o in written.objects] == [o.as_str for o in listed.objects]
    names = [o.name for o in listed.objects]
    assert len(names) == len(set(names))
    for obj in listed.objects:
        assert obj.domain == "py" and not obj.uri.startswith(("http", "/")), obj.as_str
        assert re.fullmatch(r"(generated/[\w.]+\.html#\$?[\w.]*|[a-z]+\.html(#\$)?)", obj.uri), (
            obj.uri
        )
    for name in [
        "torch.autograd.Function",
        "torch.autograd.gradcheck",
        "torch.autograd.gradgradcheck",
        "torch.autograd.function.FunctionCtx.save_for_backward",
        "torch.autograd.function.once_differentiable",
        "torch.func.grad",
        "torch.library.custom_op",
    ]:
        assert name in names, name


def test_sphinx_gallery_still_has_the_code_link_transform():
    """ext/api_links.py registers sphinx-gallery's own code-link transform:
    when this fails, sphinx-gallery moved it (see ext/api_links.py)."""
    from sphinx_gallery import _doctree_links

    assert callable(_doctree_links.setup_doctree_links)
    assert _doctree_links.CodeLinksTransform.formats == ("html",)


# ext/code_comments.py: the comments and docstrings of code blocks


CODE = '''\
class Cube(torch.autograd.Function):
    """x**3, saving the input."""

    @staticmethod
    def forward(ctx, x):  # noqa: D102
        ctx.save_for_backward(x)  # an input: safe to save
        return x**3

    def backward(ctx, g):
        """Two lines,
        left alone."""
        return g  # the mistake
'''


def test_code_messages_are_comments_and_one_line_docstrings_never_tool_comments():
    from ext.code_comments import messages

    assert messages(CODE) == ["x**3, saving the input.", "an input: safe to save", "the mistake"]
    assert messages("x = (") == []  # not Python: nothing to translate


def test_translated_code_changes_only_the_texts_it_translates():
    from ext.code_comments import messages, translate

    table = {"x**3, saving the input.": "x**3，保存输入。", "the mistake": "错误所在"}
    out = translate(CODE, lambda text: table.get(text, text))
    assert out == CODE.replace("x**3, saving the input.", "x**3，保存输入。").replace(
        "# the mistake", "# 错误所在"
    )
    # Found again in the translated code, where columns of wide characters
    # count differently for ast (bytes) and tokenize (characters).
    assert messages(out) == ["x**3，保存输入。", "an input: safe to save", "错误所在"]
    assert translate(out, lambda text: text) == out


def test_a_translation_that_would_break_the_code_keeps_the_english():
    from ext.code_comments import translate

    for bad in ["two\nlines", 'closes """ early', "ends in a backslash\\"]:
        out = translate(CODE, lambda text, bad=bad: bad if text.startswith("x**3") else text)
        assert '"""x**3, saving the input."""' in out, bad
    out = translate(CODE, lambda text: "two\nlines" if text == "the mistake" else text)
    assert "# the mistake" in out


def test_chinese_style_catches_course_for_lesson_italics_and_spaced_brackets():
    assert any("课程" in p for p in zh("In this lesson, x.", "在本课程中，x。"))
    assert any("italics" in p for p in zh("A *critic* D.", "一个 *判别器* D。"))
    assert any("italics" in p for p in zh("A *critic* D.", "一个 _判别器_ D。", "md"))
    assert zh("A *critic* D.", "一个 **判别器** D。") == []
    assert zh("A *critic* D.", "一个 **判别器** D。", "md") == []
    assert any("\\ （" in p for p in zh("``x`` (blue)", "``x`` （蓝色）"))
    assert zh("``x`` (blue)", "``x``\\ （蓝色）") == []
    assert zh("`x` (blue)", "`x`（蓝色）", "md") == []


def test_code_comments_may_keep_names_and_brackets():
    """In a comment, ``forward`` and ``(x, exp(x))`` are code, unmarked."""
    msgid = "returns (x, exp(x)); forward has two inputs"
    msgstr = "返回 (x, exp(x))；forward 有两个输入"
    glossary = {"forward": "前向"}
    assert catalogs.zh_style_problems(msgid, msgstr, "code", glossary) == []
    assert len(catalogs.zh_style_problems(msgid, msgstr, "rst", glossary)) == 2


def test_pofilter_names_the_catalog_line_and_check(tmp_path):
    """A placeholder lost and a trailing space, found by translate-toolkit."""
    po = tmp_path / "zh_CN" / "LC_MESSAGES" / "theme.po"
    po.parent.mkdir(parents=True)
    po.write_text(
        'msgid ""\nmsgstr ""\n"Content-Type: text/plain; charset=UTF-8\\n"\n\n'
        'msgid "Good"\nmsgstr "好"\n\n'
        'msgid "Executed with PyTorch %s on %s."\nmsgstr "本页由 PyTorch %s 执行。 "\n',
        encoding="utf-8",
    )
    problems = [str(p) for p in catalogs.pofilter_problems("zh_CN", tmp_path)]
    assert len(problems) == 2, problems
    assert all(p.startswith(f"{po}:8: pofilter ") for p in problems)
    assert {p.split("pofilter ")[1].split(":")[0] for p in problems} == {"endwhitespace", "printf"}


def test_a_catalog_header_names_its_translator_and_date(tmp_path):
    po = tmp_path / "x.po"
    header = 'msgid ""\nmsgstr ""\n"Content-Type: text/plain; charset=UTF-8\\n"\n'
    po.write_text(header + '"PO-Revision-Date: YEAR-MO-DA HO:MI+ZONE\\n"\n', encoding="utf-8")
    assert len(catalogs.header_problems(po)) == 2
    po.write_text(
        header + '"PO-Revision-Date: 2026-11-23 14:00+0000\\n"\n"Last-Translator: Team\\n"\n',
        encoding="utf-8",
    )
    assert catalogs.header_problems(po) == []


def test_a_capitalised_term_in_lower_case_is_a_name_in_code():
    glossary = {"Hessian": "黑塞矩阵"}
    assert (
        catalogs.zh_style_problems("jacrev and hessian", "jacrev 和 hessian", "rst", glossary) == []
    )
    assert catalogs.zh_style_problems("The Hessian.", "Hessian。", "rst", glossary)
