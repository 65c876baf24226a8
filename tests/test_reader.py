"""The reader's page, in Debian's Chromium: both languages, light and dark, on
a laptop (1280 px) and a phone (390 px).

What a PyTorch reader looks for (which PyTorch ran the page, links to the
API, a graph at full size, the other language at the same place) and what
used to trip them (invisible or off-screen focus stops, white panels in dark
mode, tables cut off). The server, the browser and the tab that records what
went wrong are those of tests/test_browser.py.
"""

from __future__ import annotations

import io
import re
from importlib.metadata import version

import pytest
from conftest import LANGUAGES, LESSONS
from test_browser import (  # noqa: F401
    SCREENSHOTS,
    Reader,
    accessibility_problems,
    browser,
    lesson_url,
    server,
)

pytestmark = pytest.mark.build

WIDTHS = {"laptop": (1280, 900), "phone": (390, 844)}
SCHEMES = ["light", "dark"]
TORCH = version("torch")
DOCS = "https://docs.pytorch.org/docs/{}.{}/".format(*TORCH.split(".")[:2])
# A lesson with graphs, code, a table of contents and many focus stops.
LESSON = next(p for p in LESSONS if p.name.startswith("04_"))
# Pages whose every focus stop is walked with the Tab key.
WALKED = [f"lessons/{LESSON.stem}.html", "lessons/index.html", "summary.html", "search.html"]


@pytest.fixture
def tab(browser, request):  # noqa: F811
    """A fresh tab with the size and colour scheme the test asks for."""
    width, height = WIDTHS[request.node.callspec.params.get("width", "laptop")]
    scheme = request.node.callspec.params.get("scheme", "light")
    context = browser.new_context(
        viewport={"width": width, "height": height},
        is_mobile=width < 500,
        has_touch=width < 500,
        color_scheme=scheme,
    )
    page = context.new_page()
    reader = Reader(page)
    reader.missing = []
    # A static page is ready at "load"; "networkidle" waits another 500 ms.
    reader.open = lambda url: (page.goto(url, wait_until="load"), page)[1]
    page.on("response", lambda r: r.status >= 400 and reader.missing.append(f"{r.status} {r.url}"))
    yield reader
    if getattr(request.node, "failed_call", False):
        SCREENSHOTS.mkdir(parents=True, exist_ok=True)
        name = re.sub(r"[^\w.-]+", "_", request.node.name)
        try:
            page.screenshot(path=str(SCREENSHOTS / f"{name}.png"), full_page=True)
        except Exception:  # a page that is no HTML (an SVG opened full size)
            pass
    context.close()


def pages(site, lang):
    return [p.relative_to(site.html / lang).as_posix() for p in site.pages(lang)]


# -- What a reader looks for ------------------------------------------------------
@pytest.mark.parametrize("scheme", SCHEMES)
@pytest.mark.parametrize("width", WIDTHS)
@pytest.mark.parametrize("lang", LANGUAGES)
def test_a_lesson_says_which_pytorch_ran_it_and_links_the_api(server, tab, lang, width, scheme):  # noqa: F811
    page = tab.open(lesson_url(server, lang, LESSON))
    line = page.locator("article p.lesson-run")
    assert line.is_visible()
    assert f"PyTorch {TORCH}" in line.inner_text()
    prose = page.locator(f"article p a[href^='{DOCS}']")
    code = page.locator(f"article pre a[href^='{DOCS}']")
    assert prose.count() and code.count()
    assert prose.first.is_visible()
    assert (
        "gradcheck"
        in page.locator(
            f"article a[href^='{DOCS}generated/torch.autograd.gradcheck']"
        ).first.inner_text()
    )
    assert not tab.errors and not tab.missing, tab.errors + tab.missing


@pytest.mark.parametrize("lang", LANGUAGES)
def test_the_switcher_keeps_the_anchor_and_the_search(server, tab, lang):  # noqa: F811
    other = next(code for code in LANGUAGES if code != lang)
    page = tab.open(lesson_url(server, lang, LESSON))
    anchor = page.locator("article section[id] section[id]").first.get_attribute("id")
    page.goto(lesson_url(server, lang, LESSON) + f"#{anchor}", wait_until="networkidle")
    page.locator(f".language-switcher a[hreflang='{other.replace('_', '-')}']").first.click()
    page.wait_for_load_state("networkidle")
    assert page.url == lesson_url(server, other, LESSON) + f"#{anchor}"
    assert page.locator(f"[id='{anchor}']").count() == 1, "the other language has the anchor"

    page.goto(f"{server}/{lang}/search.html?q=gradcheck", wait_until="networkidle")
    page.locator(f".language-switcher a[hreflang='{other.replace('_', '-')}']").first.click()
    page.wait_for_load_state("networkidle")
    assert page.url == f"{server}/{other}/search.html?q=gradcheck"
    assert not tab.errors and not tab.missing, tab.errors + tab.missing


SHRUNK = """() => Array.from(document.querySelectorAll('img.autograd-graph'))
  .filter(i => i.checkVisibility())
  .map(i => [i.naturalWidth / i.getBoundingClientRect().width, i.getAttribute('src')])"""


@pytest.mark.parametrize("lang", LANGUAGES)
@pytest.mark.parametrize("width", ["phone"])
def test_a_phone_reader_opens_a_large_graph_full_size(server, tab, lang, width):  # noqa: F811
    """The graph a phone shrinks most is a link to its SVG, which opens at
    full size."""
    shrunk = []
    for lesson in LESSONS:
        page = tab.open(lesson_url(server, lang, lesson))
        shrunk += [(ratio, src, lesson) for ratio, src in page.evaluate(SHRUNK)]
    ratio, src, lesson = max(shrunk)
    assert ratio > 1.5, "no graph is shrunk on a phone: pick a larger one"
    page = tab.open(lesson_url(server, lang, lesson))
    image = page.locator(f"img.autograd-graph[src='{src}']")
    shown = image.bounding_box()["width"]
    link = page.locator(f"a.image-reference:has(img.autograd-graph[src='{src}'])")
    assert link.get_attribute("href").endswith(".svg")
    link.click()
    page.wait_for_load_state("networkidle")
    assert page.url.endswith(".svg")
    full = page.evaluate("document.documentElement.getBoundingClientRect().width")
    assert full > 1.5 * shown, (full, shown)
    assert not tab.missing, tab.missing


# -- What used to trip a reader -----------------------------------------------------
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
          visible: shown && opacity > 0.5, ring, path: el.outerHTML.slice(0, 60)};
}"""


@pytest.mark.parametrize("width", WIDTHS)
@pytest.mark.parametrize("lang", LANGUAGES)
def test_every_focus_stop_is_visible_and_on_screen(server, tab, lang, width):  # noqa: F811
    """Tab through each page: every element that takes focus is visible,
    on screen once focused, and shows a focus ring."""
    problems = []
    for rel in WALKED:
        page = tab.open(f"{server}/{lang}/{rel}")
        # Furo scrolls smoothly: a focused element is measured where the
        # scroll ends, not halfway there.
        page.add_style_tag(content="* { scroll-behavior: auto !important; }")
        seen = 0
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
                problems.append(f"{where}: focused while invisible")
            elif (
                stop["right"] <= 0
                or stop["left"] >= stop["vw"]
                or stop["bottom"] <= 0
                or stop["top"] >= stop["vh"]
            ):
                problems.append(
                    f"{where}: focused off screen at {stop['left']:.0f},{stop['top']:.0f}"
                )
            elif not stop["ring"]:
                problems.append(f"{where}: no focus ring")
        assert seen > 5, f"{rel}: the Tab key reached {seen} stops"
    assert not problems, "\n".join(problems[:30])


def light_share(png: bytes) -> float:
    """The share of near-white pixels in a screenshot."""
    from PIL import Image

    image = Image.open(io.BytesIO(png)).convert("L")
    histogram = image.histogram()
    return sum(histogram[230:]) / max(1, sum(histogram))


BRIGHT_BOXES = """() => Array.from(document.querySelectorAll('body *')).filter(e => {
  const r = e.getBoundingClientRect();
  if (r.width * r.height < 2500 || !e.checkVisibility({opacityProperty: true, visibilityProperty: true})) return false;
  const m = getComputedStyle(e).backgroundColor.match(/[\\d.]+/g);
  if (!m) return false;
  const [r_, g, b, a = 1] = m.map(Number);
  return a > 0.5 && (0.2126 * r_ + 0.7152 * g + 0.0722 * b) > 180;
}).map(e => e.tagName.toLowerCase() + '.' + String(e.className).split(' ')[0])"""
CUT_OFF = """() => [document.documentElement.scrollWidth - innerWidth,
  Array.from(document.querySelectorAll('.table-wrapper')).map(w => w.scrollWidth - w.clientWidth)]"""


@pytest.mark.parametrize("width", WIDTHS)
@pytest.mark.parametrize("lang", LANGUAGES)
def test_every_page_in_dark_mode(site, server, tab, lang, width):  # noqa: F811
    """Every page, dark: no box has a light background and no image (a graph,
    a card's thumbnail) is mostly white, and axe finds no serious
    accessibility violation (on a laptop); on a phone nothing scrolls sideways
    and every table fits; each page has a heading and a description in its
    language; every request is answered (the icon too)."""
    tab.page.emulate_media(color_scheme="dark")
    problems = []
    for rel in pages(site, lang):
        page = tab.open(f"{server}/{lang}/{rel}")
        problems += [f"{rel}: {box} has a light background" for box in page.evaluate(BRIGHT_BOXES)]
        if width == "laptop":  # the same images, drawn larger
            images = page.locator("article img")
            for i in range(images.count()):
                image = images.nth(i)
                box = image.bounding_box() if image.is_visible() else None
                if box and box["width"] * box["height"] >= 2500:
                    share = light_share(image.screenshot())
                    if share > 0.4:
                        problems.append(f"{rel}: {image.get_attribute('src')} is {share:.0%} white")
            problems += accessibility_problems(page, rel)
        else:
            overflow, tables = page.evaluate(CUT_OFF)
            if overflow > 1:
                problems.append(f"{rel}: the page scrolls sideways by {overflow}px")
            problems += [f"{rel}: a table is cut off by {cut}px" for cut in tables if cut > 1]
        if not page.locator("article h1").count():
            problems.append(f"{rel}: no h1")
        description = page.locator("meta[name='description']").get_attribute("content") or ""
        if len(description) < 20 or (
            lang != "en" and not re.search(r"[\u3400-\u9fff]", description)
        ):
            problems.append(f"{rel}: description {description!r}")
    problems += [f"unanswered: {missing}" for missing in tab.missing]
    assert not problems, "\n".join(problems[:30])


@pytest.mark.parametrize("lang", LANGUAGES)
def test_the_output_label_stays_on_one_line(server, tab, lang):  # noqa: F811
    """sphinx-gallery's label above printed output ("输出：") never wraps."""
    page = tab.open(lesson_url(server, lang, LESSON))
    style = "getComputedStyle(document.querySelector('.sphx-glr-script-out'), '::before')"
    assert page.evaluate(f"{style}.whiteSpace") == "nowrap"
