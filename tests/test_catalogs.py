"""The catalogs: complete, stable under update-po, and never losing work.

The tests marked ``build`` check the project's own catalogs, in a copy of the
built site; below them, the unit tests of tools/catalogs.py and
tools/translators.py, on small catalogs written for the test: markup kept,
msgfmt's errors and header warnings, completeness, pofilter, update-po's
merge, the Chinese style with its glossary, and the one check left to Sphinx
(a translation whose reST does not parse).
"""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import polib
import pytest
from conftest import ROOT, copy_project, make, snapshot

from tools import catalogs, translators


@pytest.mark.build
def test_the_catalogs_pass_every_check():
    """make check's catalog checks, and the wrapping it asks of powrap."""
    paths = [str(p) for p in (ROOT / "locale").rglob("*.po")]
    for command in [["tools.catalogs", "check", "zh_CN"], ["powrap", "--check", "--quiet", *paths]]:
        run = subprocess.run([sys.executable, "-m", *command], cwd=ROOT, capture_output=True)
        assert run.returncode == 0, run.stderr


@pytest.fixture(scope="module")
def updated(site, tmp_path_factory):
    """A copy of the project after `make update-po` (which extracts the
    messages first), and its catalogs from before."""
    root = copy_project(tmp_path_factory.mktemp("p"), with_generated=site.root)
    before = snapshot(root / "locale")
    run = make(root, "update-po")
    assert run.returncode == 0, run.output
    assert "executed 0 lesson(s)" in run.output
    return root, before


@pytest.mark.build
def test_update_po_on_an_unchanged_tree_changes_nothing(updated):
    root, before = updated
    assert snapshot(root / "locale") == before


@pytest.mark.build
def test_catalogs_are_in_step_with_the_sources(updated):
    """Every message of the sources is in a catalog: nobody forgot update-po."""
    root, _ = updated
    for pot in sorted((root / "_build" / "gettext").rglob("*.pot")):
        rel = pot.relative_to(root / "_build" / "gettext").with_suffix(".po")
        po = polib.pofile(str(ROOT / "locale" / "zh_CN" / "LC_MESSAGES" / rel))
        have = {e.msgid for e in po if not e.obsolete}
        missing = [e.msgid for e in polib.pofile(str(pot)) if e.msgid not in have]
        assert not missing, f"{rel}: run `make update-po`: {missing[:3]}"


@pytest.mark.build
def test_a_changed_sentence_keeps_its_translation_as_a_fuzzy_suggestion(site, tmp_path):
    """Edit one English paragraph and delete another: both translations survive."""
    root = copy_project(tmp_path / "p", with_generated=site.root)
    page = root / "docs" / "building.md"
    po_path = root / "locale" / "zh_CN" / "LC_MESSAGES" / "building.po"
    blocks = page.read_text().split("\n\n")
    plain = [i for i, b in enumerate(blocks) if b[:1].isalpha()]  # paragraphs
    by_text = {" ".join(blocks[i].split()): i for i in plain}
    catalog = polib.pofile(str(po_path))
    changed, removed = [e for e in catalog if e.msgstr and e.msgid in by_text][:2]
    blocks[by_text[changed.msgid]] += " Really."
    del blocks[by_text[removed.msgid]]
    page.write_text("\n\n".join(blocks))

    run = make(root, "update-po")
    assert run.returncode == 0, run.output
    after = polib.pofile(str(po_path))
    (fuzzy,) = [e for e in after.fuzzy_entries() if e.previous_msgid == changed.msgid]
    assert fuzzy.msgid == changed.msgid + " Really."
    assert fuzzy.msgstr == changed.msgstr
    (obsolete,) = [e for e in after.obsolete_entries() if e.msgid == removed.msgid]
    assert obsolete.msgstr == removed.msgstr
    # make stat (sphinx-intl's) counts the fuzzy entry, succeeds while work
    # remains, and shows none of babel's complaints about the #| lines.
    run = make(root, "stat")
    assert run.returncode == 0, run.output
    (line,) = [ln for ln in run.output.splitlines() if "/building.po: " in ln]
    assert " 1 fuzzy, " in line, line
    assert "WARNING" not in run.output and "in all: " in run.output
    # prune-po keeps the old translation while the catalog still has work to
    # do, and drops it, and only it, once the suggestion is confirmed.
    run = make(root, "prune-po")
    assert run.returncode == 0, run.output
    assert "kept locale/zh_CN/LC_MESSAGES/building.po: 1 message(s)" in run.output
    assert polib.pofile(str(po_path)).obsolete_entries()
    fuzzy.flags.remove("fuzzy")
    fuzzy.previous_msgid = None
    after.save(str(po_path))
    run = make(root, "prune-po")
    assert run.returncode == 0, run.output
    assert "pruned locale/zh_CN/LC_MESSAGES/building.po: 1 obsolete entries" in run.output
    pruned = polib.pofile(str(po_path))
    assert not pruned.obsolete_entries()
    assert {e.msgid: e.msgstr for e in pruned} == {
        e.msgid: e.msgstr for e in after if not e.obsolete
    }


# == unit tests of tools/catalogs.py and tools/translators.py =======================


# -- markup kept, and catalogs whole --------------------------------------------


def write_po(path: Path, entries: list[tuple[str, str]], header: str = "") -> Path:
    """A catalog of *entries*, with a header of *header*'s fields."""
    catalog = polib.POFile()
    catalog.metadata = {
        "Project-Id-Version": "test",
        "MIME-Version": "1.0",
        "Content-Type": "text/plain; charset=UTF-8",
        "Content-Transfer-Encoding": "8bit",
        "Language": "zh_CN",
    }
    catalog.metadata.update(line.split(": ", 1) for line in header.splitlines())
    for msgid, msgstr in entries:
        catalog.append(polib.POEntry(msgid=msgid, msgstr=msgstr))
    path.parent.mkdir(parents=True, exist_ok=True)
    catalog.save(str(path))
    return path


SIGNED = "PO-Revision-Date: 2026-11-23 14:00+0000\nLast-Translator: Team\nLanguage-Team: zh"


@pytest.mark.parametrize(
    ("msgid", "msgstr"),
    [
        ("Use ``gradcheck`` here.", "在这里使用 ``gradcheck``。"),
        ("See :ref:`the lesson <lesson-a>`.", "见 :ref:`该课程 <lesson-a>`。"),
        ("See :doc:`/building`.", "见 :doc:`/building`。"),
        ("It is :math:`2x`.", "它是 :math:`2x`。"),
    ],
)
def test_markup_kept_passes(msgid, msgstr):
    assert catalogs.markup_problems(msgid, msgstr, "rst") == []


@pytest.mark.parametrize(
    ("msgid", "msgstr"),
    [
        ("Use ``gradcheck`` here.", "在这里使用 gradcheck。"),  # literal dropped
        ("Use ``gradcheck`` here.", "在这里使用 ``梯度检查``。"),  # literal translated
        ("See :ref:`the lesson <lesson-a>`.", "见 :ref:`该课程 <lesson-b>`。"),  # target
        ("It is :math:`2x`.", "它是 :math:`2y`。"),
        ("Use ``gradcheck`` here.", "在这里使用 ``gradcheck 。"),  # broken literal
        ("Run `make html`.", "运行 make html。"),  # as Markdown below
    ],
)
def test_markup_changed_is_reported(msgid, msgstr):
    syntax = "md" if msgid.startswith("Run") else "rst"
    (problem,) = catalogs.markup_problems(msgid, msgstr, syntax)
    assert "markup" in problem


def test_markdown_code_spans_with_several_backticks():
    tokens = catalogs.markup_tokens("Keep `` :math:`2x` `` and ` ``x`` ` intact.", "md")
    assert tokens == sorted(["`` :math:`2x` ``", "` ``x`` `"])


def test_broken_rest_in_a_translation_names_its_catalog_line(tmp_path):
    """A translation that does not parse as reST stops the build before
    Sphinx starts, at its own line of the catalog; a role that only Sphinx
    knows, and a message beside the broken one, are not blamed."""
    po = write_po(
        tmp_path / "zh_CN" / "LC_MESSAGES" / "a.po",
        [
            ("See :ref:`x`.", "见 :ref:`x`。"),
            ("It is **not** recorded.", "它 **不会被记录。"),
            ("Fine.", "好。"),
        ],
    )
    line = polib.pofile(str(po))[1].linenum
    errors = catalogs.check(["zh_CN"], False, tmp_path, tmp_path)
    assert len(errors) == 1, errors
    assert errors[0].startswith(f"{po}:{line}: broken reST in msgstr: "), errors
    assert "Inline strong start-string without end-string" in errors[0]


def test_a_syntax_error_is_one_error_naming_file_and_line(tmp_path):
    po = tmp_path / "bad.po"
    po.write_text('msgid ""\nmsgstr ""\n\nmsgid "a"\nmsgstr "b\n\nmsgid "c"\nmsgstr "d\n')
    (error,), _ = catalogs.msgfmt(po)
    assert re.fullmatch(rf"{po}:\d+: end-of-line within string .*; fix the file and rebuild", error)


def test_check_names_file_and_line_and_what_is_unfinished(tmp_path):
    """make check: markup at its line, msgfmt's header warnings, counts of the
    untranslated and fuzzy entries; the build's check only the markup."""
    po = write_po(
        tmp_path / "zh_CN" / "LC_MESSAGES" / "a.po",
        [("Done.", "完成。"), ("Not yet.", ""), ("Use ``x``.", "使用 x。")],
    )
    catalog = polib.pofile(str(po))
    catalog[0].flags.append("fuzzy")
    catalog.save(str(po))
    line = polib.pofile(str(po))[2].linenum
    markup = f"{po}:{line}: msgstr does not keep the markup of its msgid (``x``)"
    errors = catalogs.check(["zh_CN"], False, tmp_path, tmp_path)
    assert len(errors) == 1 and errors[0].startswith(markup), errors
    errors = catalogs.check(["zh_CN"], True, tmp_path, tmp_path)
    assert errors[0].startswith(markup), errors
    assert f"{po}: 1 untranslated and 1 fuzzy entries; translate them" in errors[-1]
    assert f"{po}:3: warning: header field 'Last-Translator' missing in header" in errors
    write_po(po, [("Done.", "完成。")], SIGNED)
    assert catalogs.check(["zh_CN"], True, tmp_path, tmp_path) == []


def test_pofilter_names_the_catalog_line_and_check(tmp_path):
    """A placeholder lost and a trailing space, found by translate-toolkit."""
    po = tmp_path / "zh_CN" / "LC_MESSAGES" / "sphinx.po"
    po.parent.mkdir(parents=True)
    po.write_text(
        'msgid ""\nmsgstr ""\n"Content-Type: text/plain; charset=UTF-8\\n"\n\n'
        'msgid "Good"\nmsgstr "好"\n\n'
        'msgid "Executed with PyTorch %s on %s."\nmsgstr "本页由 PyTorch %s 执行。 "\n',
        encoding="utf-8",
    )
    problems = catalogs.pofilter_problems(po, polib.pofile(str(po)), "zh_CN")
    assert len(problems) == 2, problems
    assert all(p.startswith(f"{po}:8: pofilter ") for p in problems)
    assert {p.split("pofilter ")[1].split(":")[0] for p in problems} == {"endwhitespace", "printf"}


def test_update_po_creates_merges_and_leaves_alone(tmp_path, capsys):
    """A new page gets its template to sign; a changed message keeps its
    translation as a fuzzy suggestion; an unchanged catalog keeps its bytes."""
    pots, locale = tmp_path / "gettext", tmp_path / "locale"
    write_po(pots / "new.pot", [("Fresh.", "")])
    write_po(pots / "same.pot", [("Same.", "")])
    write_po(pots / "old.pot", [("Save the inputs, always.", "")])
    same = write_po(locale / "zh_CN" / "LC_MESSAGES" / "same.po", [("Same.", "一样。")], SIGNED)
    old = write_po(locale / "zh_CN" / "LC_MESSAGES" / "old.po", [("Save the inputs.", "保存。")])
    before = same.read_bytes()
    assert translators.update_po(["zh_CN"], pots, locale) == []
    assert same.read_bytes() == before
    (fuzzy,) = polib.pofile(str(old)).fuzzy_entries()
    assert (fuzzy.previous_msgid, fuzzy.msgstr) == ("Save the inputs.", "保存。")
    new = locale / "zh_CN" / "LC_MESSAGES" / "new.po"
    assert polib.pofile(str(new)).metadata["Language"] == "zh_CN"
    assert any("'Last-Translator'" in warning for warning in catalogs.msgfmt(new)[1])
    out = capsys.readouterr().out
    assert f"created {new}" in out and f"updated {old}" in out and "same" not in out


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


def test_a_page_that_quotes_a_mistranslation_may_quote_it():
    assert not any("渐变" in p for p in zh("Never write 渐变.", "不要写渐变。"))


def test_the_search_dictionary_holds_whole_glossary_words():
    words = catalogs.glossary_words()
    for word in ["反向传播", "计算图", "梯度", "自动微分", "二阶反向传播"]:
        assert word in words


def test_chinese_style_catches_course_for_lesson_italics_and_spaced_brackets():
    assert any("课程" in p for p in zh("In this lesson, x.", "在本课程中，x。"))
    assert any("italics" in p for p in zh("A *critic* D.", "一个 *评判器* D。"))
    assert any("italics" in p for p in zh("A *critic* D.", "一个 _评判器_ D。", "md"))
    assert zh("A *critic* D.", "一个 **评判器** D。") == []
    assert zh("A *critic* D.", "一个 **评判器** D。", "md") == []
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


def test_a_comment_translated_as_itself_is_refused():
    """Sphinx marks a whole code block translated once one of its messages is
    its own translation, and the block's other comments then stay English."""
    assert catalogs.zh_style_problems("float32", "float32", "code", {})
    assert catalogs.zh_style_problems("float32", "float32 张量", "code", {}) == []


def test_a_capitalised_term_in_lower_case_is_a_name_in_code():
    glossary = {"Hessian": "黑塞矩阵"}
    assert (
        catalogs.zh_style_problems("jacrev and hessian", "jacrev 和 hessian", "rst", glossary) == []
    )
    assert catalogs.zh_style_problems("The Hessian.", "Hessian。", "rst", glossary)


# -- renderings never to use, lesson numbers, links, one rendering per text ----


def test_the_table_of_variants_is_read_from_the_docs():
    """One list, in docs/translating.md: the old mistranslations and the
    variants of a term that already has its rendering."""
    rules = {v.bad: v for v in catalogs.read_variants()}
    assert not hasattr(catalogs, "FORBIDDEN")
    for bad, right in [
        ("渐变", "梯度"),
        ("课程", "课"),
        ("反向计算", "反向函数"),
        ("第二遍", "第二次"),
        ("悄悄", "不报错"),
        ("静默", "不报错"),
        ("笔记本", "notebook"),
        ("检查", "检验"),
        ("判别器", "评判器"),
        ("保存张量钩子", "已保存张量的钩子"),
        ("当下", "如今"),
    ]:
        assert rules[bad].right == right, bad
    assert rules["检查"].english and not rules["悄悄"].english


def test_a_critic_is_no_discriminator():
    """WGAN's critic scores, it does not classify: 判别器 is refused where the
    English says critic, and stays right for a GAN's discriminator."""
    assert any("评判器" in p for p in zh("A *critic* D.", "一个 **判别器** D。"))
    assert zh("A GAN's discriminator.", "GAN 的判别器。") == []


def test_today_is_no_literary_word():
    (problem,) = zh("Today: torch.compile", "当下：torch.compile")
    assert "如今" in problem
    assert zh("Today: torch.compile", "如今：torch.compile") == []


def test_a_variant_is_refused_naming_what_to_write():
    (problem,) = zh("Backward is recorded.", "反向计算会被记录。")
    assert problem.startswith("uses 反向计算: write 反向函数, says the table of variants: ")
    (problem,) = zh("It is silently wrong.", "它悄悄算错。")
    assert "不报错" in problem


def test_a_scoped_variant_is_refused_only_where_the_english_has_its_words():
    """检查 is 检验 where the English checks derivatives (gradcheck and the
    like); elsewhere it is right, and the term 原地修改检查 keeps it."""
    assert any("检验" in p for p in zh("Check it with ``gradcheck``.", "用 ``gradcheck`` 检查它。"))
    assert zh("``make check`` checks the catalogs.", "``make check`` 检查消息目录。") == []
    terms = {"in-place check": "原地修改检查"}
    msgid = "The in-place check, which ``gradcheck`` does not do."
    msgstr = "原地修改检查，``gradcheck`` 不做这件事。"
    assert catalogs.zh_style_problems(msgid, msgstr, "rst", terms) == []


@pytest.mark.parametrize(
    ("msgstr", "right"),
    [
        ("见第 01 课。", "第 1 课"),
        ("（第 08 课）", "第 8 课"),
        ("见第01课。", "第 1 课"),
        ("见 05 课。", "第 5 课"),
    ],
)
def test_a_lesson_number_with_a_leading_zero_is_refused(msgstr, right):
    problems = zh("See lesson 01.", msgstr)  # 第01课 breaks the spacing rule too
    assert any("leading zero" in p and f"write {right}" in p for p in problems), problems


def test_lesson_numbers_and_file_names_pass():
    assert zh("See lesson 10.", "见第 10 课。") == []
    assert zh("Run ``05_untracked.py``.", "运行 ``05_untracked.py``。") == []


@pytest.mark.parametrize(
    ("msgstr", "syntax"),
    [
        ("讲解见 :ref:`第 1 课 <lesson-a>`。", "rst"),
        (":ref:`跳到末尾 <end>` 下载完整的示例代码。", "rst"),
        ("见 `术语表 <https://example.org>`__。", "rst"),
        ("讲解见 {ref}`第 1 课 <lesson-a>`。", "md"),
        ("见 [术语表](glossary.md)。", "md"),
        ("情形和 :ref:`第 5 课 <lesson-a>` 中一样。", "rst"),
        ("见 :ref:`lesson-a`。", "rst"),  # Sphinx puts in the section's Chinese title
        ("{doc}`glossary` 面向读者。", "md"),
    ],
)
def test_a_space_beside_a_chinese_link_is_refused(msgstr, syntax):
    problems = zh("See it.", msgstr, syntax)
    assert any(p.startswith("no space between a link whose text is Chinese") for p in problems)


@pytest.mark.parametrize(
    ("msgstr", "syntax"),
    [
        ("讲解见\\ :ref:`第 1 课 <lesson-a>`。", "rst"),
        (":ref:`跳到末尾 <end>`\\ 下载完整的示例代码。", "rst"),
        ("讲解见{ref}`第 1 课 <lesson-a>`。", "md"),
        ("用 :func:`gradcheck <torch.autograd.gradcheck>` 检验。", "rst"),  # Latin keeps it
        ("用 [gradcheck](https://example.org) 检验。", "md"),
        ("见\\ :ref:`lesson-a`。", "rst"),
        ("{doc}`glossary`面向读者，见{ref}`lesson-a`。", "md"),  # no space asked for either
    ],
)
def test_a_chinese_link_without_a_space_passes(msgstr, syntax):
    assert zh("See it.", msgstr, syntax) == []


def test_myst_has_no_escaped_space():
    """``\\ `` is reST's; a MyST page shows the backslash."""
    (problem,) = zh("Use **bold** here.", "这里用\\ **粗体**\\ 。", "md")
    assert "MyST has no escaped space" in problem
    assert zh("Use **bold** here.", "这里用\\ **粗体**。", "rst") == []
    assert zh("Write `\\ ` here.", "这里写 `\\ `。", "md") == []  # code shows it


def test_one_english_text_is_translated_alike_in_every_catalog(tmp_path):
    """The same msgid translated two ways, in two catalogs, is refused with
    both places named; the translators' guide may keep an English term."""
    base = tmp_path / "zh_CN" / "LC_MESSAGES"
    a = write_po(base / "a.po", [("Summary", "小结"), ("Fine.", "好。")], SIGNED)
    b = write_po(base / "b.po", [("Summary", "总结")], SIGNED)
    write_po(base / "translating.po", [("Summary", "Summary")], SIGNED)
    errors = catalogs.check(["zh_CN"], True, tmp_path, tmp_path)
    (line_a,), (line_b,) = (
        [e.linenum for e in polib.pofile(str(p)) if e.msgid == "Summary"] for p in (a, b)
    )
    assert errors == [
        f"{b}:{line_b}: the same English as {a}:{line_a}, translated differently; translate both alike"
    ]
    write_po(b, [("Summary", "小结")], SIGNED)
    assert catalogs.check(["zh_CN"], True, tmp_path, tmp_path) == []


def test_a_card_reads_as_its_lessons_opening_without_markup(tmp_path):
    """sphinx-gallery's card is the lesson's first paragraph without markup,
    a message of the lessons' index: its Chinese is the lesson's, read so."""
    base = tmp_path / "zh_CN" / "LC_MESSAGES" / "lessons"
    opening = ("Use :func:`~torch.autograd.gradcheck`, see :ref:`lesson 04 <lesson-d>`.",
               "用 :func:`~torch.autograd.gradcheck`，见\\ :ref:`第 4 课 <lesson-d>`。")  # fmt: skip
    lesson = write_po(base / "01_a.po", [opening], SIGNED)
    index = write_po(
        base / "index.po", [("Use gradcheck, see lesson 04.", "用 gradcheck，见第 4 课。")], SIGNED
    )
    assert catalogs.check(["zh_CN"], True, tmp_path, tmp_path) == []
    write_po(index, [("Use gradcheck, see lesson 04.", "用 gradcheck 检验，见第四课。")], SIGNED)
    (error,) = catalogs.check(["zh_CN"], True, tmp_path, tmp_path)
    assert error.startswith(f"{index}:{polib.pofile(str(index))[0].linenum}: a card reads as ")
    assert f"({lesson}:{polib.pofile(str(lesson))[0].linenum})" in error
    assert error.endswith(": 用 gradcheck，见第 4 课。")


def test_a_cards_terms_are_read_in_its_lessons_opening(tmp_path):
    """A card's plain "forward" is ``forward`` in the lesson it comes from
    (gallery/), so its Chinese keeps the method's name; without that lesson
    the word is the term, which the table of terms translates."""
    lessons = tmp_path / "locale" / "zh_CN" / "LC_MESSAGES" / "lessons"
    gallery = tmp_path / "gallery" / "01_a.py"
    gallery.parent.mkdir()
    gallery.write_text('"""\nA\n=\n\nWrite ``forward`` in\n``float64``.\n"""\n', encoding="utf-8")
    opening = ("Write ``forward`` in ``float64``.", "用 ``float64`` 编写 ``forward``。")
    write_po(lessons / "01_a.po", [opening], SIGNED)
    write_po(
        lessons / "index.po", [("Write forward in float64.", "用 float64 编写 forward。")], SIGNED
    )
    docs, locale = tmp_path / "docs", tmp_path / "locale"
    assert catalogs.check(["zh_CN"], True, docs, locale) == []
    gallery.unlink()
    (error,) = catalogs.check(["zh_CN"], True, docs, locale)
    assert "'forward' is translated as '前向'" in error


def test_pytorchs_message_in_a_heading_is_glossed_in_chinese(tmp_path):
    """The paragraph under a heading that quotes PyTorch's English message
    says in Chinese what it means; elsewhere no gloss is asked for."""
    base = tmp_path / "zh_CN" / "LC_MESSAGES" / "lessons"
    heading = ("``element 0 of tensors does not require grad``",) * 2
    below = "**Cause:** the gradient has no graph."
    glossed = write_po(base / "15_a.po", [heading, (below, "**含义**：没有计算图。**原因**：梯度没有计算图。")], SIGNED)  # fmt: skip
    assert catalogs.check(["zh_CN"], True, tmp_path, tmp_path) == []
    write_po(glossed, [heading, (below, "**原因**：梯度没有计算图。")], SIGNED)
    (error,) = catalogs.check(["zh_CN"], True, tmp_path, tmp_path)
    assert error.startswith(f"{glossed}:{polib.pofile(str(glossed))[1].linenum}: under PyTorch")
    write_po(
        glossed, [("Plain prose.", "普通的文字。"), (below, "**原因**：梯度没有计算图。")], SIGNED
    )
    assert catalogs.check(["zh_CN"], True, tmp_path, tmp_path) == []


def test_the_gloss_may_set_pytorchs_names_as_code_and_nothing_else_may(tmp_path):
    """The gloss renders PyTorch's English message, whose names are code in
    Chinese too; anywhere else a literal the English lacks is refused."""
    base = tmp_path / "zh_CN" / "LC_MESSAGES" / "lessons"
    heading = ("``x has no grad_fn``",) * 2
    below = "**Cause:** ``x`` was detached."
    po = write_po(base / "15_a.po", [heading, (below, "**含义**：``x`` 没有 ``grad_fn``。**原因**：``x`` 被分离了。")], SIGNED)  # fmt: skip
    assert catalogs.check(["zh_CN"], True, tmp_path, tmp_path) == []
    write_po(po, [heading, (below, "**含义**：x 没有 grad_fn。**原因**：``x`` 被 ``detach`` 分离了。")], SIGNED)  # fmt: skip
    (error,) = catalogs.check(["zh_CN"], True, tmp_path, tmp_path)
    assert "does not keep the markup" in error


def test_markup_that_rest_reads_as_text_is_refused(tmp_path):
    """A role right after ） is plain text to reST, without a complaint from
    docutils, though every character of the markup is kept: refused, naming
    the escaped space that makes it markup again."""
    base = tmp_path / "zh_CN" / "LC_MESSAGES"
    english = "(See below.) :ref:`Lesson 01 <lesson-a>` uses ``x`` (a tensor)."
    po = write_po(base / "a.po", [(english, "（见下文。）:ref:`第 1 课 <lesson-a>`\\ 使用 ``x``\\ （一个张量）。")], SIGNED)  # fmt: skip
    (error,) = catalogs.check(["zh_CN"], True, tmp_path, tmp_path)
    assert error.startswith(f"{po}:{polib.pofile(str(po))[0].linenum}: reST does not see")
    assert "escaped space" in error
    write_po(po, [(english, "（见下文。）\\ :ref:`第 1 课 <lesson-a>`\\ 使用 ``x``\\ （一个张量）。")], SIGNED)  # fmt: skip
    assert catalogs.check(["zh_CN"], True, tmp_path, tmp_path) == []


def test_a_doubled_backslash_is_refused_in_rest(tmp_path):
    """Two backslashes before a space are a backslash on the page and a
    space, not the escaped space that one backslash is."""
    base = tmp_path / "zh_CN" / "LC_MESSAGES"
    english = "(See below.) :ref:`Lesson 01 <lesson-a>`."
    po = write_po(
        base / "a.po", [(english, "（见下文。）\\\\ :ref:`第 1 课 <lesson-a>`。")], SIGNED
    )
    (error,) = catalogs.check(["zh_CN"], True, tmp_path, tmp_path)
    assert error.startswith(f"{po}:{polib.pofile(str(po))[0].linenum}: msgstr shows a backslash")
    write_po(po, [(english, "（见下文。）\\ :ref:`第 1 课 <lesson-a>`。")], SIGNED)
    assert catalogs.check(["zh_CN"], True, tmp_path, tmp_path) == []


def test_a_header_still_holding_a_template_placeholder_is_refused(tmp_path):
    """msgfmt --check names a header field left exactly as the template had it,
    not one only partly filled in, as all 26 catalogs' Language-Team was."""
    base = tmp_path / "zh_CN" / "LC_MESSAGES"
    entry = [("Plain prose.", "普通的文字。")]
    po = write_po(base / "a.po", entry, SIGNED.replace("zh", "简体中文 <LL@li.org>"))
    (error,) = catalogs.check(["zh_CN"], True, tmp_path, tmp_path)
    assert error.startswith(f"{po}: header Language-Team still says 'LL@li.org'")
    write_po(po, entry, SIGNED)
    assert catalogs.check(["zh_CN"], True, tmp_path, tmp_path) == []
    catalog = polib.pofile(str(po))
    catalog.metadata_is_fuzzy = True  # as the template leaves it
    catalog.save()
    (error,) = catalogs.check(["zh_CN"], True, tmp_path, tmp_path)
    assert error == f"{po}: the header is marked fuzzy; sign it and remove the flag"
