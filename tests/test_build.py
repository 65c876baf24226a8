"""What `make html` produces: both languages, graphs, clean output."""

from __future__ import annotations

import json
import re
import subprocess
import sys
from html.parser import HTMLParser
from pathlib import Path

import pytest
from conftest import (
    LANGUAGES,
    LESSONS,
    NO_NETWORK,
    copy_project,
    make,
    no_network,
    require,
    snapshot,
)

from ext.translation import code_comments
from ext.translation.code_comments import messages

pytestmark = pytest.mark.build

CJK = re.compile(r"[\u3400-\u9fff]")


def rel_pages(site, lang):
    return {p.relative_to(site.html / lang).as_posix() for p in site.pages(lang)}


def test_both_languages_have_the_same_pages(site):
    en, zh = rel_pages(site, "en"), rel_pages(site, "zh_CN")
    assert en == zh
    for lesson in LESSONS:
        assert f"lessons/{lesson.stem}.html" in en


def test_landing_page_links_every_language_and_picks_one(site):
    text = (site.html / "index.html").read_text(encoding="utf-8")
    for lang in LANGUAGES:
        assert f'href="{lang}/index.html"' in text
        assert (site.html / lang / "index.html").exists()
    assert "navigator.languages" in text and "location.replace" in text


class Images(HTMLParser):
    def __init__(self):
        super().__init__()
        self.images: list[dict] = []

    def handle_starttag(self, tag, attrs):
        if tag == "img":
            self.images.append(dict(attrs))


def images(page: Path) -> list[dict]:
    parser = Images()
    parser.feed(page.read_text(encoding="utf-8"))
    return parser.images


@pytest.mark.parametrize("lang", LANGUAGES)
def test_every_graph_is_an_svg_file_with_alt_text(site, lang):
    referenced = {
        (page.parent / img["src"]).resolve() for page in site.pages(lang) for img in images(page)
    }
    for lesson in LESSONS:
        page = site.html / lang / "lessons" / f"{lesson.stem}.html"
        graphs = [i for i in images(page) if "autograd-graph" in i.get("class", "")]
        if "make_dot(" in lesson.read_text():
            assert graphs, f"{page.name} draws a graph but shows none"
        for img in graphs:
            assert img["src"].endswith(".svg")
            svg = (page.parent / img["src"]).resolve()
            assert svg.is_file(), img["src"]
            assert svg.read_bytes().lstrip().startswith(b"<?xml")
            assert len(img.get("alt", "")) > 20, f"{page.name}: graph without alt text"
    on_disk = {p.resolve() for p in (site.html / lang / "_images").glob("sphx_glr_*.svg")}
    assert on_disk == referenced, "an SVG is built but not shown, or the reverse"


def test_graph_svgs_have_no_memory_addresses(site):
    for svg in (site.html / "en" / "_images").glob("*.svg"):
        text = svg.read_text(encoding="utf-8")
        assert not re.search(r"<title>\d{6,}</title>", text), svg.name
        assert "<!--" not in text


@pytest.mark.parametrize("lang", LANGUAGES)
def test_no_reprs_no_timings(site, lang):
    for page in site.pages(lang):
        text = page.read_text(encoding="utf-8")
        assert "object at 0x" not in text, page
        assert "graphviz.graphs" not in text, page
        assert "Total running time" not in text, page
        assert "sphx-glr-timing" not in text, page
        assert "sg_execution_times" not in text, page
    assert not list((site.html / lang).rglob("sg_execution_times*"))


class Prose(HTMLParser):
    """The prose of the article: paragraphs and headings, without code or math."""

    SKIP = {"pre", "code", "math", "script", "style", "kbd", "tt"}
    BLOCKS = {"p", "h1", "h2", "h3", "h4", "li"}

    def __init__(self):
        super().__init__()
        self.in_article = 0
        self.skip = 0
        self.current: list[str] | None = None
        self.blocks: list[str] = []

    def handle_starttag(self, tag, attrs):
        if tag == "article":
            self.in_article += 1
        if tag in self.SKIP:
            self.skip += 1
        if self.in_article and tag in self.BLOCKS and self.current is None:
            self.current = []

    def handle_endtag(self, tag):
        if tag in self.SKIP:
            self.skip -= 1
        if tag == "article":
            self.in_article -= 1
        if tag in self.BLOCKS and self.current is not None:
            self.blocks.append(" ".join("".join(self.current).split()))
            self.current = None

    def handle_data(self, data):
        if self.current is not None and not self.skip:
            self.current.append(data)


def prose(page: Path) -> list[str]:
    parser = Prose()
    parser.feed(page.read_text(encoding="utf-8"))
    return [b for b in parser.blocks if b]


def test_chinese_pages_are_written_in_chinese(site):
    for page in site.pages("zh_CN"):
        blocks = prose(page)
        # The index and the search page may have no prose, but what they
        # have (the search page's message without JavaScript) is Chinese.
        assert blocks or page.name in {"genindex.html", "search.html"}, page
        for block in blocks:
            words = re.findall(r"\b[A-Za-z]{3,}\b", block)
            if len(words) >= 4:
                assert CJK.search(block), f"{page.name}: untranslated: {block!r}"


FULL_WIDTH = "，。：；！？、（）“”‘’《》「」【】"
LINK_START, LINK_END = "\x01", "\x02"


class LinkedProse(HTMLParser):
    """The text of the article, block by block, with each link's start and
    end marked; code blocks and formulas left out (a link's code is its text)."""

    SKIP = {"pre", "script", "style", "math"}
    BLOCKS = {"p", "h1", "h2", "h3", "h4", "h5", "h6", "li", "dt", "dd", "td", "th", "div"}

    def __init__(self):
        super().__init__()
        self.in_article = self.skip = 0
        self.current: list[str] = []
        self.blocks: list[str] = []

    def flush(self):
        if "".join(self.current).strip():
            self.blocks.append("".join(self.current))
        self.current = []

    def handle_starttag(self, tag, attrs):
        self.in_article += tag == "article"
        self.skip += tag in self.SKIP
        if tag in self.BLOCKS:
            self.flush()
        if tag == "a" and self.in_article and not self.skip:
            self.current.append(LINK_START)

    def handle_endtag(self, tag):
        if tag == "a" and self.in_article and not self.skip:
            self.current.append(LINK_END)
        self.skip -= tag in self.SKIP
        if tag in self.BLOCKS:
            self.flush()
        self.in_article -= tag == "article"

    def handle_data(self, data):
        if self.in_article and not self.skip:
            self.current.append(data)


# A link whose text starts (ends) with Chinese, after (before) a space that
# follows (precedes) Chinese text or full-width punctuation.
SPACE_BEFORE_LINK = re.compile(
    rf"[\u3400-\u9fff{FULL_WIDTH}]\s+{LINK_START}[^{LINK_END}\S]*[\u3400-\u9fff]"
)
SPACE_AFTER_LINK = re.compile(rf"[\u3400-\u9fff]{LINK_END}\s+[\u3400-\u9fff{FULL_WIDTH}]")


def spaces_beside_chinese_links(html: str) -> list[str]:
    """Each space between a link whose text is Chinese at that end and the
    Chinese text or full-width punctuation beside it, in its surrounding text
    (the link in [ ])."""
    parser = LinkedProse()
    parser.feed(html)
    found = []
    for block in parser.blocks:
        for pattern in (SPACE_BEFORE_LINK, SPACE_AFTER_LINK):
            for m in pattern.finditer(block):
                around = block[max(m.start() - 15, 0) : m.end() + 15]
                around = around.replace(LINK_START, "[").replace(LINK_END, "]")
                found.append(" ".join(around.split()))
    return found


def test_a_space_beside_a_chinese_link_is_found():
    """The finder of the test below, on a planted space (and on a Latin
    link, whose space is the spacing rule)."""
    html = (
        '<article><p>讲解见 <a href="a.html"><span>第 1 课</span></a>。'
        '<a href="#end">跳到末尾</a> 下载。用 <a href="g.html"><code>gradcheck</code></a> 检验。'
        '<a href="b.html">模式四</a>。</p><pre>见 <a href="c.html">第 2 课</a></pre></article>'
    )
    before, after = spaces_beside_chinese_links(html)
    assert "见 [第 1 课]" in before and "[跳到末尾] 下" in after


def test_no_space_between_a_chinese_link_and_the_chinese_beside_it(site):
    """A link is a word of its Chinese sentence: the half-width space goes
    between Chinese and Latin only (docs/translating.md, "Links"). Links
    whose text a translation does not give (sphinx-gallery's, a section's
    title) are checked here, where the page shows them."""
    found = [
        f"{page.relative_to(site.html)}: {around}"
        for page in site.pages("zh_CN")
        for around in spaces_beside_chinese_links(page.read_text(encoding="utf-8"))
    ]
    assert not found, f"{len(found)} spaces beside links:\n" + "\n".join(found)


class PageText(HTMLParser):
    """All the text of a page a reader can see outside code, formulas and
    scripts, with the attributes that show as text (a card's tooltip)."""

    SKIP = {"pre", "code", "kbd", "tt", "math", "script", "style", "textarea"}
    SHOWN = {"title", "alt", "data-tooltip", "aria-label", "placeholder"}

    def __init__(self):
        super().__init__()
        self.skip = 0
        self.text: list[str] = []

    def handle_starttag(self, tag, attrs):
        self.skip += tag in self.SKIP
        self.text += ["\n", *(value for key, value in attrs if key in self.SHOWN and value), "\n"]

    def handle_endtag(self, tag):
        self.skip -= tag in self.SKIP

    def handle_data(self, data):
        if not self.skip:
            self.text.append(data)


# What reST leaves when a translation's markup did not parse, or where reST
# syntax reached a page it is not: an escaped space, a role, a literal, a
# directive or label, a substitution.
REST_LEFT = re.compile(
    r"\\ |:[a-z]+(?::[a-z]+)*:`|``|(?<![.\w])\.\. (?:[\w-]+::|_[\w-]+:|\|)|\|[a-z][\w-]*\|"
)


def rest_left(html: str) -> list[tuple[str, str]]:
    """Each piece of reST left in the text of *html*, with its surrounding text."""
    parser = PageText()
    parser.feed(html)
    text = "".join(parser.text)
    return [
        (m[0], " ".join(text[max(m.start() - 20, 0) : m.end() + 20].split()))
        for m in REST_LEFT.finditer(text)
    ]


def test_rest_left_on_a_page_is_found():
    """The finder of the test below, on planted markup: not in code, and
    not an abbreviation's dots."""
    html = (
        "<p>英文中用\\ <strong>强调</strong>\\ 的地方，见 :ref:`第 1 课`。</p>"
        "<p>.. note:: x</p><div data-tooltip='用 ``x`` 表示'></div>"
        "<pre>a = b \\ c</pre><p><code>``x``\\ （</code> 与 e.g.. ok, |version|</p>"
    )
    found = [token for token, _ in rest_left(html)]
    assert found == ["\\ ", "\\ ", ":ref:`", ".. note::", "``", "``", "|version|"], found


@pytest.mark.parametrize("lang", LANGUAGES)
def test_no_page_shows_rest_or_an_escaped_space(site, lang):
    """No backslash of an escaped space (reST's \\ , which MyST does not
    have) and no raw role, literal, directive or substitution shows in the
    text of a page: outside code, it is markup that did not work."""
    found = [
        f"{page.relative_to(site.html)}: {token!r} in {around}"
        for page in site.pages(lang)
        for token, around in rest_left(page.read_text(encoding="utf-8"))
    ]
    assert not found, "\n".join(found)


def test_the_code_on_chinese_pages_has_no_english_comment(site):
    """Comments and docstrings are translated; a tool's comment is not prose."""
    english = []
    for page in site.pages("zh_CN"):
        text = page.read_text(encoding="utf-8")
        python = re.findall(
            r'<div class="highlight-(?:python|default)\b.*?<pre[^>]*>(.*?)</pre>',
            text,
            flags=re.S | re.I,
        )
        for comment in re.findall(r'<span class="(?:c1|sd)">(.*?)</span>', "".join(python)):
            if len(re.findall(r"\b[A-Za-z]{3,}\b", comment)) >= 2 and not CJK.search(comment):
                english.append(f"{page.name}: {comment}")
    assert not english, "\n".join(english)


def test_chinese_api_links_say_where_they_lead_in_chinese_punctuation(site):
    """intersphinx's tooltip comes from sphinx.po (ext/translation/theme_labels.py):
    Sphinx's own Chinese for it has half-width brackets."""
    titles = {
        title
        for page in site.pages("zh_CN")
        for title in re.findall(
            r'<a class="reference external" href="https://docs\.pytorch\.org[^"]*" title="([^"]*)"',
            page.read_text(encoding="utf-8"),
        )
    }
    where = {t for t in titles if "PyTorch" in t}  # the others name the API they link
    assert where and all(t.startswith("（位于 PyTorch") and t.endswith("）") for t in where), where


@pytest.mark.parametrize(("lang", "attr"), [("en", "en"), ("zh_CN", "zh-CN")])
def test_lang_attribute(site, lang, attr):
    for page in site.pages(lang):
        head = page.read_text(encoding="utf-8")[:400]
        assert re.search(rf'<html[^>]*\blang="{attr}"', head), page


def test_chinese_cards_are_translated(site):
    index = (site.html / "zh_CN" / "lessons" / "index.html").read_text(encoding="utf-8")
    tooltips = re.findall(r'class="sphx-glr-thumbcontainer" data-tooltip="([^"]*)"', index)
    titles = re.findall(r'<div class="sphx-glr-thumbnail-title">([^<]*)</div>', index)
    assert len(tooltips) == len(titles) == len(LESSONS)
    for text in tooltips + titles:
        assert CJK.search(text), text


def test_the_cards_of_the_installed_sphinx_gallery_are_rewritten(site):
    """ext/lessons/cards.py knows the card markup of the installed sphinx-gallery: when
    this fails, sphinx-gallery changed its cards (see ext/lessons/cards.py)."""
    from ext.lessons.cards import translatable_cards

    index = (site.root / "docs" / "lessons" / "index.rst").read_text(encoding="utf-8")
    assert index.count("sphx-glr-thumbcontainer") == len(LESSONS)
    rewritten = translatable_cards(index)
    assert "sphx-glr-thumbcontainer" not in rewritten
    assert rewritten.count(".. lesson-card::") == len(LESSONS)


def test_no_page_shows_a_warning_or_a_path_of_the_build_machine(site):
    """A lesson's output is what a reader would see running it: no warning,
    and nothing of where the site was built."""
    local = [str(site.root), str(Path(sys.prefix)), "/tmp/", "site-packages"]
    for lang in LANGUAGES:
        for page in site.pages(lang):
            text = page.read_text(encoding="utf-8")
            # How Python prints a warning it was not told to catch: a lesson
            # may print one it caught on purpose, in its own words.
            assert not re.search(r"\.py:\d+: \w*Warning: ", text), page
            for path in local:
                assert path not in text, (page, path)


def test_the_gallery_ran_once_for_both_languages(site):
    assert site.log.count("gallery: executed") == 1
    m = re.search(r"gallery: executed (\d+) lesson", site.log)
    assert m and int(m[1]) == len(LESSONS)


def test_the_site_was_built_with_no_network(site):
    """The site fixture's `make html` (lessons and both languages) ran under
    `unshare -n`: building needs no network at all."""
    require(site.offline, *NO_NETWORK)


def test_the_language_builds_execute_nothing_and_give_the_same_bytes(site, tmp_path):
    """Built again from the executed lessons, with one lesson left stale (its
    checksum no longer matches, as after an edit) and the lesson run skipped
    (`make -o gallery`), each language's build executes nothing (the stale
    lesson is not run) and gives the site's bytes: the build is reproducible
    (tests/test_notebooks.py asserts that the lessons print the same each run)."""
    root = copy_project(tmp_path / "again", with_generated=site.root)
    (root / "docs" / "lessons" / f"{LESSONS[0].name}.md5").write_text("stale\n")
    before = snapshot(root / "docs" / "lessons")
    targets = [f"html-{lang}" for lang in LANGUAGES] + ["landing"]
    run = make(root, "-o", "gallery", *targets, prefix=no_network() if site.offline else [])
    assert run.returncode == 0, run.output
    assert "gallery:" not in run.output
    assert snapshot(root / "docs" / "lessons") == before
    first, second = snapshot(site.html), snapshot(root / "_build" / "html")
    assert first.keys() == second.keys()
    # .buildinfo hashes the configuration: no path of the checkout may be in it.
    for lang in LANGUAGES:
        assert first[f"{lang}/.buildinfo"] == second[f"{lang}/.buildinfo"]
    differ = [name for name in first if first[name] != second[name]]
    assert not differ, f"differ between two clean builds: {differ[:10]}"


# What replaces a lesson where only the lesson run's bookkeeping is tested.
ONE_LINE_LESSON = '"""\nA lesson\n========\n\nCut to one line.\n"""\n\nprint("edited")\n'


def test_the_run_executes_an_edited_lesson_and_an_interrupted_one_and_no_other(site, tmp_path):
    """An edited lesson runs again, and so does one whose checksum was written
    but whose run did not complete (the process died before recording it);
    no other. Both are cut to one line first: what is tested is which lessons
    the run picks, not their code."""
    from tools import gallery

    root = copy_project(tmp_path / "p", with_generated=site.root)
    edited, interrupted = LESSONS[-1].name, LESSONS[-2].name
    for name in (edited, interrupted):
        (root / "gallery" / name).write_text(ONE_LINE_LESSON)
    # As if the process had died after sphinx-gallery wrote the checksum of
    # the interrupted one's new source, before the run recorded it.
    md5 = root / "docs" / "lessons" / f"{interrupted}.md5"
    md5.write_text(gallery._md5(root / "gallery" / interrupted))
    run = make(root, "gallery")
    assert run.returncode == 0, run.output
    names = " ".join(sorted([edited, interrupted]))
    assert f"executed 2 lesson(s) {names}; reused {len(LESSONS) - 2}" in run.output


@pytest.mark.parametrize("lang", LANGUAGES)
def test_every_lesson_offers_its_script_and_notebook(site, lang):
    for lesson in LESSONS:
        page = (site.html / lang / "lessons" / f"{lesson.stem}.html").read_text(encoding="utf-8")
        for suffix in (".py", ".ipynb"):
            m = re.search(
                rf'class="reference download internal"[^>]*href="([^"]*{lesson.stem}{suffix})"',
                page,
            )
            assert m, f"{lang}/{lesson.stem}: no {suffix} download link"
            assert (site.html / lang / "lessons" / m[1]).is_file()


class Chrome(HTMLParser):
    """Text and labels outside the article: what the theme writes."""

    def __init__(self):
        super().__init__()
        self.depth = 0
        self.skip = 0
        self.found: list[str] = []

    def handle_starttag(self, tag, attrs):
        self.depth += tag == "article"
        self.skip += tag in ("script", "style", "code")
        if not self.depth:
            for key, value in attrs:
                if key in ("aria-label", "title", "placeholder") and value:
                    self.found.append(value)

    def handle_endtag(self, tag):
        self.depth -= tag == "article"
        self.skip -= tag in ("script", "style", "code")

    def handle_data(self, data):
        if not self.depth and not self.skip and data.strip():
            self.found.append(data.strip())


def test_the_theme_speaks_chinese_on_chinese_pages(site):
    """No English label of the theme or of Sphinx is left around a zh page."""
    names = {"English", "Furo", "Sphinx", "@pradyunsg"}  # names, not words
    for page in site.pages("zh_CN"):
        parser = Chrome()
        parser.feed(page.read_text(encoding="utf-8"))
        english = [
            text
            for text in parser.found
            if re.search(r"[A-Za-z]{3}", text) and not CJK.search(text) and text not in names
        ]
        assert not english, f"{page.name}: {english}"


def downloads(site, lang, lesson, suffix):
    return site.download(lang, lesson, suffix).read_text(encoding="utf-8")


def without_messages(code):
    """*code* with the text of every comment and docstring taken out."""
    return code_comments.translate(code, lambda text: "")


def translated_messages(lesson):
    import polib

    from ext.translation.languages import LOCALE

    po = polib.pofile(str(LOCALE / "zh_CN" / "LC_MESSAGES" / "lessons" / f"{lesson.stem}.po"))
    return {e.msgid for e in po.translated_entries() if e.msgstr != e.msgid}


@pytest.mark.parametrize("lesson", LESSONS, ids=[p.stem for p in LESSONS])
def test_chinese_downloads_carry_chinese_prose_and_the_same_code(site, lesson):

    from sphinx_gallery.py_source_parser import split_code_and_text_blocks

    blocks = {}
    for lang in LANGUAGES:
        path = site.root / f"{lang}.py"
        path.write_text(downloads(site, lang, lesson, ".py"), encoding="utf-8")
        blocks[lang] = split_code_and_text_blocks(path)[1]
    en, zh = blocks["en"], blocks["zh_CN"]
    assert [b.type for b in en] == [b.type for b in zh]
    en_code = [b.content for b in en if b.type == "code"]
    zh_code = [b.content for b in zh if b.type == "code"]
    # The same code; only the texts of comments and docstrings may differ,
    # and none of them is left in English when the catalog translates it.
    assert [without_messages(code) for code in en_code] == [
        without_messages(code) for code in zh_code
    ]
    translated = translated_messages(lesson)
    english = [m for code in zh_code for m in messages(code) if m in translated]
    assert not english, english
    assert any(CJK.search(m) for code in zh_code for m in messages(code)) == bool(
        {m for code in en_code for m in messages(code)} & translated
    )
    assert all(CJK.search(b.content) for b in zh if b.type == "text")

    cells = {
        lang: json.loads(downloads(site, lang, lesson, ".ipynb"))["cells"] for lang in LANGUAGES
    }
    code = {
        lang: ["".join(c["source"]) for c in cells[lang] if c["cell_type"] == "code"]
        for lang in cells
    }
    assert [without_messages(c) for c in code["en"]] == [without_messages(c) for c in code["zh_CN"]]
    prose = ["".join(c["source"]) for c in cells["zh_CN"] if c["cell_type"] == "markdown"]
    assert prose and all(CJK.search(text) for text in prose[1:])


def test_a_chinese_solution_download_has_chinese_comments_and_the_same_code(site):
    from ext.lessons.exercises import solution_file

    checked = 0
    for lesson in LESSONS:
        solution = solution_file(f"lessons/{lesson.stem}")
        if solution is None:
            continue
        english = solution.read_text(encoding="utf-8")
        page = (site.html / "zh_CN" / "lessons" / f"{lesson.stem}.html").read_text(encoding="utf-8")
        (href,) = set(re.findall(rf'href="([^"]*/{solution.name})"', page))
        chinese = (site.html / "zh_CN" / "lessons" / href).read_text(encoding="utf-8")
        assert without_messages(chinese) == without_messages(english)
        translated = translated_messages(lesson)
        assert not [m for m in messages(chinese) if m in translated], solution.name
        assert any(CJK.search(m) for m in messages(chinese)), solution.name
        checked += 1
    assert checked == 5


@pytest.mark.parametrize("lang", LANGUAGES)
def test_every_lesson_names_the_pytorch_that_executed_it_and_when(site, lang):
    """From the build itself: the running torch, and SOURCE_DATE_EPOCH."""
    import time
    from importlib.metadata import version

    from conftest import build_env

    day = time.strftime("%Y-%m-%d", time.gmtime(int(build_env()["SOURCE_DATE_EPOCH"])))
    for lesson in LESSONS:
        page = (site.html / lang / "lessons" / f"{lesson.stem}.html").read_text(encoding="utf-8")
        lines = re.findall(r'<p class="lesson-run">([^<]*)</p>', page)
        assert len(lines) == 1, lesson.stem
        assert f"PyTorch {version('torch')} " in lines[0] and day in lines[0], lines[0]
        assert bool(CJK.search(lines[0])) == (lang != "en"), lines[0]


@pytest.mark.parametrize("lang", LANGUAGES)
def test_lessons_link_pytorchs_api_in_their_code_and_prose(site, lang):
    """Offline, from the local inventory: the code of every lesson, and the
    prose wherever the source names the API with a role."""
    from importlib.metadata import version

    docs = "https://docs.pytorch.org/docs/{}.{}/".format(*version("torch").split(".")[:2])
    for lesson in LESSONS:
        page = (site.html / lang / "lessons" / f"{lesson.stem}.html").read_text(encoding="utf-8")
        code = "".join(re.findall(r"<pre.*?</pre>", page, flags=re.S))
        links = page.count(f'href="{docs}')
        in_code = code.count(f'href="{docs}')
        assert in_code, f"{lesson.stem}: no link in the code"
        if re.search(r":(?:func|class|meth|exc|mod):`", lesson.read_text(encoding="utf-8")):
            assert links > in_code, f"{lesson.stem}: no link in the prose"
    for page in ("index", "summary"):
        text = (site.html / lang / f"{page}.html").read_text(encoding="utf-8")
        assert f'href="{docs}generated/torch.autograd.gradcheck.gradgradcheck.html' in text, page


def test_the_nu_html_checker_finds_no_error(site):
    """Every page of both languages, and the landing page, is valid HTML for
    the Nu HTML Checker (vnu.jar from the npm registry; `make test` installs it)."""
    import shutil

    from conftest import ROOT

    jar = ROOT / "node_modules" / "vnu-jar" / "build" / "dist" / "vnu.jar"
    require(bool(shutil.which("java")), "Java", "sudo apt-get install default-jre-headless")
    require(jar.exists(), "the Nu HTML Checker (vnu.jar)", "make test (npm ci)")
    pages = [str(site.html / "index.html")] + [
        str(p) for lang in LANGUAGES for p in site.pages(lang)
    ]
    result = subprocess.run(
        ["java", "-jar", str(jar), "--errors-only", "--format", "json", *pages],
        capture_output=True,
        text=True,
    )
    messages = json.loads(result.stderr or "{}").get("messages", [])
    errors = [
        f"{m.get('url', '').rsplit('/html/', 1)[-1]}:{m.get('lastLine')}: {m.get('message')}"
        for m in messages
        if m.get("type") == "error"
    ]
    assert not errors, "\n".join(errors[:20])
    assert result.returncode == 0, result.stderr[-2000:]
