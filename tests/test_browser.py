"""The site as a reader meets it: Debian's Chromium, driven by Playwright.

The built site is served on 127.0.0.1 (conftest.py's ``server`` and
``browser``). Every request that would leave it is recorded and refused, so a
test also proves the page needs no network.

Each page is loaded once per language and colour scheme that a check needs.
The light sweep below opens every page of a language on a laptop (1280 px)
and, while it has a page open, gathers what each test of this module asserts:
the page loads cleanly, its code has copy buttons, its links lead on; on the
home page it searches, on a lesson it switches language. tests/test_reader.py
sweeps the pages again in dark mode, on a laptop and on a phone. A page with a
problem is saved as a screenshot under _build/test-screenshots/.
"""

from __future__ import annotations

import html
import re
from dataclasses import dataclass, field
from urllib.parse import quote

import pytest
from conftest import LANGUAGES, LESSONS, ROOT, Reader

pytestmark = pytest.mark.build

# A lesson page with all it loads (issue 21: "at most 300 KB"), every lesson alike.
PAGE_BUDGET = 300 * 1024
SCREENSHOTS = ROOT / "_build" / "test-screenshots"
TORCH_DOCS = "https://docs.pytorch.org/docs/{}.{}/"
# A lesson with graphs, code, a table of contents and many focus stops.
LESSON = next(p for p in LESSONS if p.name.startswith("04_"))
# Pages whose every focus stop is walked with the Tab key.
WALKED = [f"lessons/{LESSON.stem}.html", "lessons/index.html", "summary.html", "search.html"]
# The error index's pages, whose printed messages the search must find.
ERROR_INDEXES = [p for p in LESSONS if p.name.startswith(("15_", "16_", "17_"))]
# What the search box finds: the first term is typed into the home page's box.
# Chinese phrases typed without spaces, which the index holds only as their
# words (ext/translation/search-splitter.js), each with the lesson it names.
PHRASES = {"自定义算子": "12_custom_ops", "梯度惩罚": "10_second_derivatives", "不报错": "19_"}
TERMS = {"en": ["gradgradcheck", "Hessian"], "zh_CN": ["梯度", "计算图", "反向传播", *PHRASES]}


@dataclass
class Visit:
    """What the sweep found on one page."""

    problems: list[str] = field(default_factory=list)
    facts: dict = field(default_factory=dict)


def sweep(browser, server, site, lang, visit, *, width=1280, height=900, scheme="light"):
    """Open every page of *lang* once, in one tab of that size and colour
    scheme, and call ``visit(reader, lang, rel, found)`` on each; return what each
    visit found, by page. A page with a problem is saved as a screenshot."""
    context = browser.new_context(
        viewport={"width": width, "height": height},
        is_mobile=width < 500,
        has_touch=width < 500,
        color_scheme=scheme,
    )
    reader = Reader(context.new_page())
    results = {}
    for page in site.pages(lang):
        rel = page.relative_to(site.html / lang).as_posix()
        found = results[rel] = Visit()
        reader.open(f"{server}/{lang}/{rel}")
        visit(reader, lang, rel, found)
        found.problems += [f"{rel}: {trouble}" for trouble in reader.troubles()]
        if found.problems:
            SCREENSHOTS.mkdir(parents=True, exist_ok=True)
            name = re.sub(r"[^\w.-]+", "_", f"{scheme}-{width}-{lang}-{rel}")
            reader.page.screenshot(path=str(SCREENSHOTS / f"{name}.png"), full_page=True)
    context.close()
    return results


def problems(results: dict[str, Visit]) -> str:
    return "\n".join(p for visit in results.values() for p in visit.problems)


# The axe rules that read colours; tests/test_reader.py runs only these in dark
# mode, where the others find what they find in light.
COLOUR_RULES = ["color-contrast", "link-in-text-block"]

# Code blocks hold thousands of highlighted tokens, and measuring the contrast
# of each is most of axe's time on a lesson. Two tokens of the same kind, in
# the same kind of block, have the same colours, size and weight, and so the
# same contrast: axe measures the first token of each kind on the page (and
# each kind of block whose own text is plain, such as printed output), and
# every other element, code blocks aside, in full.
CODE_SAMPLES = """() => {
  const seen = new Set();
  const mark = (el, ...kind) => {
    const s = getComputedStyle(el);
    const key = [...kind, s.color, s.backgroundColor, s.fontSize, s.fontWeight, s.opacity].join();
    if (!seen.has(key)) { seen.add(key); el.dataset.axeSample = ""; }
  };
  for (const pre of document.querySelectorAll("pre")) {
    const block = pre.closest("div[class*=highlight]")?.className;
    const own = Array.from(pre.childNodes).some((n) => n.nodeType === 3 && n.textContent.trim());
    if (own) mark(pre, "pre", block);
    for (const span of pre.querySelectorAll("span")) {
      if (span.textContent.trim()) mark(span, span.className, block, !!span.closest("a, .hll"));
    }
    for (const link of pre.querySelectorAll("a")) mark(link, "a", link.className, block);
  }
}"""


def accessibility_problems(page, rel: str, rules: list[str] | None = None) -> list[str]:
    """The serious and critical violations axe finds on the open page: of
    every rule, or of *rules* only. Only violations are collected (axe's
    ``resultTypes``); the rule "region" never runs (its impact is moderate
    at most, and on a long lesson it takes seconds); the colour rules measure
    code blocks by sample (CODE_SAMPLES)."""
    from axe_playwright_python.sync_playwright import Axe

    def violations(options, context=None):
        options = {"resultTypes": ["violations"], **options}
        return Axe().run(page, context=context, options=options).response["violations"]

    found = []
    if rules is None:
        off = dict.fromkeys(["region", *COLOUR_RULES], {"enabled": False})
        found += violations({"rules": off})
    page.evaluate(CODE_SAMPLES)
    sampled = {"include": [["body"], ["[data-axe-sample]"]], "exclude": [["pre"]]}
    found += violations({"runOnly": {"type": "rule", "values": rules or COLOUR_RULES}}, sampled)
    return [
        f"{rel}: {v['id']} ({v['impact']}) {[n['target'] for n in v['nodes']][:3]}"
        for v in found
        if v["impact"] in ("serious", "critical")
    ]


def weight_problems(reader: Reader, rel: str) -> list[str]:
    """A lesson page with all it loads weighs at most PAGE_BUDGET, and
    fetches each graph once, in one file (no light and dark copies)."""
    found = []
    weight = reader.weight()
    if weight > PAGE_BUDGET:
        found.append(f"{rel}: {weight / 1024:.0f} KB with all it loads, over {PAGE_BUDGET // 1024}")
    graphs = reader.page.evaluate(
        """() => performance.getEntriesByType("resource").map(e => e.name)
          .filter(u => u.includes("/_images/") && u.endsWith(".svg"))"""
    )
    variants = [re.sub(r"_dark(?=\.svg$)", "", u) for u in graphs]
    if len(set(variants)) != len(variants):
        found.append(f"{rel}: graphs fetched twice or in both schemes: {graphs}")
    return found


# Printed output blocks wider than their box (their first line).
WIDE_OUTPUT = """() => Array.from(document.querySelectorAll(
    '.sphx-glr-script-out .highlight, .sphx-glr-script-out pre'))
  .filter(e => e.scrollWidth > e.clientWidth)
  .map(e => e.textContent.trim().split('\\n')[0].slice(0, 70))"""


# What a lesson shows, read in one call to the page.
LESSON_FACTS = """(docs) => {
  const visible = (el) => !!el && el.checkVisibility() && el.getBoundingClientRect().width > 0;
  const run = document.querySelector("article p.lesson-run");
  const out = document.querySelector(".sphx-glr-script-out");
  const label = out && getComputedStyle(out, "::before");
  const api = (where) => document.querySelectorAll(`article ${where} a[href^="${docs}"]`);
  const gradcheck = document.querySelector(`article a[href^="${docs}generated/torch.autograd.gradcheck"]`);
  return {
    run: run ? run.innerText : null,
    runVisible: visible(run),
    apiInProse: api("p").length,
    apiInCode: api("pre").length,
    apiInProseVisible: visible(api("p")[0]),
    gradcheck: gradcheck ? gradcheck.innerText : "",
    codeBlocks: document.querySelectorAll("div.highlight-Python pre").length,
    copyButtons: document.querySelectorAll("button.copybtn").length,
    next: document.querySelector("a.next-page")?.href ?? null,
    outLabel: label ? label.content : null,
    outLabelWraps: label ? label.whiteSpace !== "nowrap" : null,
  };
}"""


def lesson_facts(page) -> dict:
    from importlib.metadata import version

    return page.evaluate(LESSON_FACTS, TORCH_DOCS.format(*version("torch").split(".")[:2]))


def run_line_problems(facts: dict) -> list[str]:
    """A lesson says which PyTorch ran it, and links PyTorch's API in its
    prose and code, all of it visible."""
    from importlib.metadata import version

    found = []
    if not (facts["runVisible"] and f"PyTorch {version('torch')}" in (facts["run"] or "")):
        found.append(f"no visible line naming PyTorch {version('torch')}: {facts['run']!r}")
    if not (facts["apiInProse"] and facts["apiInCode"] and facts["apiInProseVisible"]):
        found.append(f"API links: {facts['apiInProse']} in prose, {facts['apiInCode']} in code")
    if "gradcheck" not in facts["gradcheck"]:
        found.append(f"the link to gradcheck reads {facts['gradcheck']!r}")
    return found


# -- Keyboard ------------------------------------------------------------------
FOCUSED = """() => {
  document.getAnimations().forEach(a => a.finish());  // e.g. a copy button fading in
  const el = document.activeElement;
  if (!el || el === document.body || el === document.documentElement) return null;
  if (el.dataset.walked) return {again: true};  // the walk went round the page
  el.dataset.walked = "1";
  const r = el.getBoundingClientRect();
  const style = getComputedStyle(el);
  let opacity = 1, shown = true;
  for (let e = el; e; e = e.parentElement) {
    const s = getComputedStyle(e);
    opacity *= parseFloat(s.opacity);
    if (s.visibility === "hidden" || s.display === "none") shown = false;
  }
  const ring = (style.outlineStyle !== "none" && parseFloat(style.outlineWidth) > 0)
    || style.boxShadow !== "none";
  const name = el.tagName.toLowerCase() + (el.className ? "." + String(el.className).split(" ")[0] : "")
    + " " + (el.getAttribute("href") || el.getAttribute("aria-label") || el.textContent || "").trim().slice(0, 40);
  return {name, left: r.left, right: r.right, top: r.top, bottom: r.bottom,
          width: r.width, height: r.height, vw: innerWidth, vh: innerHeight,
          visible: shown && opacity > 0.5, ring};
}"""


def walk(page, rel: str) -> list[str]:
    """Tab through the open page: every element that takes focus must be
    visible, on screen once focused, and show a focus ring. (Run it last on
    a page: it moves the focus and the scroll.)"""
    # Furo scrolls smoothly: a focused element is measured where the scroll
    # ends, not halfway there.
    page.add_style_tag(content="* { scroll-behavior: auto !important; }")
    found, seen = [], 0
    for _ in range(1000):
        page.keyboard.press("Tab")
        stop = page.evaluate(FOCUSED)
        if stop is None:
            continue
        if stop.get("again"):
            break
        seen += 1
        where = f"{rel}: {stop['name']}"
        if not stop["visible"] or stop["width"] < 1 or stop["height"] < 1:
            found.append(f"{where}: focused while invisible")
        elif (
            stop["right"] <= 0
            or stop["left"] >= stop["vw"]
            or stop["bottom"] <= 0
            or stop["top"] >= stop["vh"]
        ):
            found.append(f"{where}: focused off screen at {stop['left']:.0f},{stop['top']:.0f}")
        elif not stop["ring"]:
            found.append(f"{where}: no focus ring")
    if seen <= 5:
        found.append(f"{rel}: the Tab key reached {seen} stops")
    return found


# -- Search --------------------------------------------------------------------
SEARCH = """async (query) => {
  // What the search page does with ?q=: Sphinx's public Search.performSearch.
  const out = document.getElementById("search-results");
  out.replaceChildren();
  Search.performSearch(query);
  const start = Date.now();
  while (!Search.status.innerText) {  // Sphinx says how many pages it found
    if (Date.now() - start > 20000) throw new Error(`no result for ${query}`);
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
  return Array.from(out.querySelectorAll("ul.search li a")).map((a) => a.getAttribute("href"));
}"""


def error_messages(site) -> dict[str, set[str]]:
    """The first line of every error the error index's pages printed, as the
    build's PyTorch wrote it (after the exception's name): the pages, by stem,
    that printed each."""
    found = {}
    for lesson in ERROR_INDEXES:
        page = (site.html / "en" / "lessons" / f"{lesson.stem}.html").read_text(encoding="utf-8")
        outputs = re.findall(
            r'class="sphx-glr-script-out[^"]*"><div class="highlight"><pre[^>]*>(.*?)</pre>',
            page,
            re.S,
        )
        for output in outputs:
            first = html.unescape(re.sub(r"<[^>]+>", "", output)).strip().split("\n")[0]
            m = re.match(r"\w+(?:Error|Warning): (.+)", first)
            if m:
                found.setdefault(m[1], set()).add(lesson.stem)
    return found


def search(page, queries: list[str]) -> dict[str, list[str]]:
    """From the open home page, as a reader: type the first query into the
    search box and press Enter; then, on the search page that opened, search
    for every other query. The links each search found, by query."""
    box = page.locator("form.sidebar-search-container input[name='q']")
    box.fill(queries[0])
    box.press("Enter")
    page.wait_for_url(re.compile(r"search\.html\?q="), wait_until="load")
    page.locator("#search-results .search-summary").first.wait_for(timeout=20000)
    found = {queries[0]: page.locator("#search-results ul.search li a").evaluate_all(
        "els => els.map(e => e.getAttribute('href'))"
    )}  # fmt: skip
    for query in queries[1:]:
        found[query] = page.evaluate(SEARCH, query)
    return found


def switch_language(page, lang: str) -> dict:
    """Click the language switcher of the open page: where it leads."""
    other = next(code for code in LANGUAGES if code != lang)
    page.locator(f".language-switcher a[hreflang='{other.replace('_', '-')}']").first.click()
    page.wait_for_load_state("load")
    return {"url": page.url, "lang": page.locator("html").get_attribute("lang")}


# -- The light sweep ---------------------------------------------------------------
@pytest.fixture(scope="module")
def light(browser, server, site):
    """Every page of a language, light, on a laptop, once (by language)."""
    done = {}

    def visit(reader, lang, rel, found):
        page = reader.page
        broken = page.evaluate(
            "Array.from(document.images)"
            ".filter(i => !(i.complete && i.naturalWidth > 0)).map(i => i.src)"
        )
        found.problems += [f"{rel}: broken image {src}" for src in broken]
        alts = page.evaluate(
            "Array.from(document.querySelectorAll('img.autograd-graph')).map(i => i.alt)"
        )
        found.problems += [f"{rel}: short alt text {a!r}" for a in alts if len(a) <= 20]
        found.problems += accessibility_problems(page, rel)
        if rel.startswith("lessons/") and rel != "lessons/index.html":
            found.facts.update(lesson_facts(page))
            found.problems += weight_problems(reader, rel)
            found.facts["wide outputs"] = page.evaluate(WIDE_OUTPUT)
        if rel in WALKED:
            found.facts["walk"] = walk(page, rel)
        if rel == "index.html":
            found.facts["search"] = search(page, TERMS[lang] + list(error_messages(site)))
            found.facts["search url"] = page.url
            found.facts["search switched"] = switch_language(page, lang)
        if rel == WALKED[0]:  # a lesson: switch language at a section's anchor
            anchor = page.locator("article section[id] section[id]").first.get_attribute("id")
            page.goto(f"{page.url.split('#')[0]}#{anchor}")  # no reload: the same page
            found.facts["anchor"] = anchor
            found.facts["switched"] = switch_language(page, lang)
            found.facts["anchor found"] = page.locator(f"[id='{anchor}']").count()

    def results(lang):
        if lang not in done:
            done[lang] = sweep(browser, server, site, lang, visit)
        return done[lang]

    return results


def lessons(results):
    return {rel: visit.facts for rel, visit in results.items() if "codeBlocks" in visit.facts}


@pytest.mark.parametrize("lang", LANGUAGES)
def test_every_page_loads_cleanly_offline(light, lang):
    """Every page, light: images decode and graphs have alt text, nothing
    logs an error, no request leaves the site and each is answered, axe finds
    no serious accessibility violation, and a lesson with all it loads weighs
    at most PAGE_BUDGET and fetches each graph once."""
    assert not problems(light(lang)), problems(light(lang))[:3000]


@pytest.mark.parametrize("lang", LANGUAGES)
def test_a_lesson_says_which_pytorch_ran_it_and_links_the_api(light, lang):
    found = run_line_problems(light(lang)[WALKED[0]].facts)
    assert not found, found


@pytest.mark.parametrize("lang", LANGUAGES)
def test_printed_output_wraps_instead_of_scrolling(light, lang):
    """At 1280 px no output block of any lesson scrolls sideways: the end of
    a line is often the point (lesson 13's expected tensor, lesson 01's
    float32 warning, the error index's messages). Code may scroll."""
    found = lessons(light(lang))
    assert len(found) == len(LESSONS)
    cut = [f"{rel}: {line}" for rel, facts in found.items() for line in facts["wide outputs"]]
    assert not cut, f"{len(cut)} output blocks scroll sideways:\n" + "\n".join(cut)


@pytest.mark.parametrize("lang", LANGUAGES)
def test_code_blocks_have_copy_buttons(light, lang):
    for rel, facts in lessons(light(lang)).items():
        assert 0 < facts["codeBlocks"] <= facts["copyButtons"], rel


@pytest.mark.parametrize(("lang", "copied"), [("en", "Copied!"), ("zh_CN", "已复制")])
def test_the_copy_button_says_it_copied_in_the_page_language(tab, server, lang, copied):
    """After a click the button's tooltip and its icon's title say so in the
    page's language: sphinx.po's words, not sphinx-copybutton's own Chinese
    (复制成功! with a half-width !)."""
    page = tab.open(f"{server}/{lang}/lessons/{LESSON.stem}.html")
    button = page.locator("button.copybtn").first
    button.scroll_into_view_if_needed()
    button.hover()
    button.click()
    page.wait_for_function("b => b.classList.contains('success')", arg=button.element_handle())
    assert button.get_attribute("data-tooltip") == copied
    assert button.locator("svg title").text_content() == copied
    assert not tab.troubles()


@pytest.mark.parametrize("lang", LANGUAGES)
def test_next_leads_through_the_lessons_in_order(light, server, lang):
    found = lessons(light(lang))
    for lesson, following in zip(LESSONS, LESSONS[1:], strict=False):
        assert found[f"lessons/{lesson.stem}.html"]["next"] == (
            f"{server}/{lang}/lessons/{following.stem}.html"
        )


@pytest.mark.parametrize("lang", LANGUAGES)
def test_the_output_label_speaks_the_page_language_on_one_line(light, lang):
    """sphinx-gallery's "Out:" label is CSS content, so gettext never sees
    it; in Chinese ("输出：") it never wraps."""
    for rel, facts in lessons(light(lang)).items():
        if lang == "en":
            assert facts["outLabel"] == '"Out:"', rel
        else:
            assert re.search(r"[\u3400-\u9fff]", facts["outLabel"]), (rel, facts["outLabel"])
        assert facts["outLabelWraps"] is False, rel


@pytest.mark.parametrize("lang", LANGUAGES)
def test_every_focus_stop_is_visible_and_on_screen(light, lang):
    """On a laptop (tests/test_reader.py walks them on a phone)."""
    found = [p for rel in WALKED for p in light(lang)[rel].facts["walk"]]
    assert not found, "\n".join(found[:30])


@pytest.mark.parametrize("lang", LANGUAGES)
def test_search_box_finds_the_lessons(light, lang):
    found = light(lang)["index.html"].facts["search"]
    for term in TERMS[lang]:
        assert any("lessons/" in href for href in found[term]), (term, found[term])


def test_a_chinese_phrase_finds_the_pages_of_its_words(light, site):
    """The search page splits a query only at spaces; the index split the
    pages with jieba, so a phrase is none of its words."""
    import json

    text = (site.html / "zh_CN" / "searchindex.js").read_text(encoding="utf-8")
    index = json.loads(text[text.index("(") + 1 : text.rindex(")")])
    found = light("zh_CN")["index.html"].facts["search"]
    for phrase, stem in PHRASES.items():
        assert phrase not in index["terms"] and phrase not in index["titleterms"], phrase
        assert any(stem in href for href in found[phrase]), (phrase, found[phrase])


@pytest.mark.parametrize("lang", LANGUAGES)
def test_a_pasted_error_message_finds_its_entry(light, site, lang):
    """Issue 11: paste what PyTorch printed into the search box, find the page
    of the error index that printed it."""
    messages = error_messages(site)
    assert len(messages) >= 12, messages
    for lesson in ERROR_INDEXES:  # each page of the index prints messages
        assert any(lesson.stem in stems for stems in messages.values()), lesson.stem
    found = light(lang)["index.html"].facts["search"]
    missed = [
        m for m, stems in messages.items() if not any(s in h for s in stems for h in found[m])
    ]
    assert not missed, missed


@pytest.mark.parametrize("lang", LANGUAGES)
def test_the_switcher_keeps_the_anchor_and_the_search(light, server, lang):
    other = next(code for code in LANGUAGES if code != lang)
    facts = light(lang)[WALKED[0]].facts
    assert facts["switched"] == {
        "url": f"{server}/{other}/lessons/{LESSON.stem}.html#{facts['anchor']}",
        "lang": other.replace("_", "-"),
    }
    assert facts["anchor found"] == 1, "the other language has the anchor"
    searched = light(lang)["index.html"].facts["search url"]
    assert searched.startswith(f"{server}/{lang}/search.html?q={quote(TERMS[lang][0])}&")
    assert light(lang)["index.html"].facts["search switched"] == {
        "url": searched.replace(f"/{lang}/", f"/{other}/"),
        "lang": other.replace("_", "-"),
    }


@pytest.mark.parametrize(
    ("language", "expected"), [("zh-CN", "zh_CN"), ("zh", "zh_CN"), ("en-US", "en"), ("fr", "en")]
)
def test_landing_page_sends_the_reader_to_their_language(server, browser, language, expected):
    context = browser.new_context(locale=language)
    page = context.new_page()
    page.goto(f"{server}/index.html", wait_until="commit")
    page.wait_for_url(f"{server}/{expected}/index.html", wait_until="commit")
    context.close()
