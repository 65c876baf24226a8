"""The rough edges a reader met in the first minutes (issue 21, section 3), in
Debian's Chromium: a formula cut off with no sign that it scrolls, graphs and
cards in the other colour scheme, a graph too small to read on a phone, and
code whose links looked like plain text (and plain names like links). The
sweeps of tests/test_browser.py and tests/test_reader.py check the printed
output that scrolled sideways and each lesson page's weight.

The server, the browser and the tab (at the test's width and colour scheme)
are conftest's. The colour scheme is the system's (Playwright's
color_scheme), or Furo's toggle when a test clicks it, or the system's again
with JavaScript off.
"""

from __future__ import annotations

import io
import re

import pytest
from conftest import LANGUAGES, LESSONS, lesson_url

from ext.lessons.graphs import DARK, LIGHT

pytestmark = pytest.mark.build

FORMULA_LESSON = next(p for p in LESSONS if p.name.startswith("04_"))  # cosh(x)²
LINKED_LESSON = FORMULA_LESSON  # its code calls gradcheck and torch.autograd.grad
SCHEMES = ["light", "dark"]


def graph_lessons() -> list:
    """The lessons whose card shows their first graph."""
    return [
        p
        for p in LESSONS
        if "make_dot(" in (text := p.read_text(encoding="utf-8"))
        and "sphinx_gallery_thumbnail_path" not in text
    ]


# -- A formula wider than a phone ------------------------------------------------------
def edge_shades(png: bytes) -> tuple[float, float, float]:
    """The mean grey of the left edge, the middle and the right edge."""
    from PIL import Image, ImageStat

    image = Image.open(io.BytesIO(png)).convert("L")
    w, h = image.size

    def mean(x0, x1):
        return ImageStat.Stat(image.crop((x0, 0, x1, h))).mean[0]

    return mean(0, 4), mean(w // 2 - 2, w // 2 + 2), mean(w - 4, w)


@pytest.mark.parametrize("scheme", SCHEMES)
@pytest.mark.parametrize("width", ["phone"])
@pytest.mark.parametrize("lang", LANGUAGES)
def test_a_formula_wider_than_a_phone_shows_that_it_scrolls(server, tab, lang, width, scheme):
    """Lesson 04's display formula, cut after "cosh(x)²" at 390 px, shows a
    shadow at the edge it scrolls towards, and takes the keyboard's focus.
    The formula itself is hidden while measuring: what is left is what the
    box draws to say that more is there."""
    page = tab.open(lesson_url(server, lang, FORMULA_LESSON))
    page.add_style_tag(content=".math-wrapper math { visibility: hidden; }")
    boxes = page.locator(".math-wrapper")
    wide = [
        boxes.nth(i)
        for i in range(boxes.count())
        if boxes.nth(i).evaluate("e => e.scrollWidth > e.clientWidth + 1")
    ]
    assert wide, "no formula is wider than a phone: pick another lesson"
    for box in wide:
        assert box.get_attribute("tabindex") == "0"
        box.scroll_into_view_if_needed()
        left, middle, right = edge_shades(box.screenshot())
        assert abs(right - middle) > 8, f"no sign at the right edge ({right:.0f} vs {middle:.0f})"
        assert abs(left - middle) < 2, "a sign at the left edge before any scrolling"
        box.evaluate("e => { e.scrollLeft = e.scrollWidth; }")
        left, middle, right = edge_shades(box.screenshot())
        assert abs(left - middle) > 8, "scrolled to its end, no sign of the start"
        assert abs(right - middle) < 2, "scrolled to its end, still a sign of more"


# -- Graphs and cards in the page's colour scheme -------------------------------------
def rgb(colour: str) -> tuple[int, int, int]:
    return tuple(int(colour[i : i + 2], 16) for i in (1, 3, 5))


def palette_of(png: bytes) -> str | None:
    """The palette a picture of a graph is drawn in, told by the fills of
    its backward nodes and leaves (ext/lessons/graphs.py); None for a
    picture without them."""
    from PIL import Image

    image = Image.open(io.BytesIO(png)).convert("RGB")
    counts = image.getcolors(image.width * image.height)

    def pixels(palette) -> int:
        fills = [rgb(palette["node"]), rgb(palette["leaf"])]
        return sum(
            n
            for n, c in counts
            if any(max(abs(a - b) for a, b in zip(c, f, strict=True)) <= 3 for f in fills)
        )

    # A graph's filled nodes cover hundreds of pixels even on a card (222 at
    # the least, measured); the anti-aliased grey edges of a drawn card
    # picture pass through those fills too, but in 20 pixels at the most.
    light, dark = pixels(LIGHT), pixels(DARK)
    if max(light, dark) < 100:
        return None
    return "light" if light > 10 * dark else "dark" if dark > 10 * light else "both"


# (the system's scheme, what the reader does, the scheme the page shows)
SCHEME_CASES = [
    ("light", "nothing", "light"),
    ("dark", "nothing", "dark"),
    ("light", "toggle", "dark"),
    ("dark", "toggle", "light"),
    ("dark", "no JavaScript", "dark"),
]


@pytest.mark.parametrize(("system", "action", "shown"), SCHEME_CASES)
def test_graphs_and_cards_follow_the_page_scheme(server, browser, system, action, shown):
    """Every graph of a lesson and every card of the lessons' index is drawn
    in the scheme the page shows: the system's, or the one Furo's toggle
    chose, and without JavaScript the system's; one SVG file per graph is
    fetched. (The dark drawing's arrows and labels are light: on a dark card
    they no longer vanish.)"""
    context = browser.new_context(
        viewport={"width": 1280, "height": 900},
        color_scheme=system,
        java_script_enabled=action != "no JavaScript",
    )
    page = context.new_page()
    fetched: list[str] = []
    page.on("response", lambda r: fetched.append(r.url))
    problems = []
    cards = graph_lessons()
    assert cards, "no lesson's card shows a graph"
    for rel, selector, expected in (
        (f"lessons/{cards[0].stem}.html", "article img.autograd-graph", 1),
        ("lessons/index.html", ".sphx-glr-thumbcontainer img", len(cards)),
    ):
        fetched.clear()
        page.goto(f"{server}/en/{rel}", wait_until="load")
        if action == "toggle" and "index" not in rel:  # the next page keeps the choice
            page.locator("button.theme-toggle:visible").first.click()
        images = page.locator(f"{selector}:visible")
        palettes = []
        for i in range(images.count()):
            image = images.nth(i)
            image.scroll_into_view_if_needed()
            palettes.append(palette_of(image.screenshot()))
        drawn = [p for p in palettes if p is not None]
        if drawn != [shown] * expected:
            problems.append(f"{rel}: {shown} expected, the graphs are drawn {drawn}")
        svgs = [u for u in fetched if "/_images/" in u]
        if len(svgs) != len(set(svgs)) or any("_dark" in u for u in svgs):
            problems.append(f"{rel}: fetched {svgs}")
    context.close()
    assert not problems, "\n".join(problems)


def drawn_in(image) -> str | None:
    """The palette of *image* once it is painted (a new image in a dialog
    may take a frame or two)."""
    for _ in range(20):
        if palette := palette_of(image.screenshot()):
            return palette
        image.page.wait_for_timeout(100)
    return None


def widest_graph(site):
    """The lesson whose graph is widest, and that graph's file name."""
    widths = {
        svg.name: float(re.search(rb'<svg[^>]*\swidth="([\d.]+)pt"', svg.read_bytes())[1])
        for svg in (site.html / "en" / "_images").glob("sphx_glr_*_[0-9][0-9][0-9].svg")
    }
    name = max(widths, key=widths.get)
    return next(p for p in LESSONS if name.startswith(f"sphx_glr_{p.stem}_")), name


@pytest.mark.parametrize("width", ["phone", "laptop"])
@pytest.mark.parametrize("lang", LANGUAGES)
def test_a_graph_opens_large_zoomable_in_the_page_scheme(site, server, tab, lang, width):
    """Light system, dark page (Furo's toggle): the widest graph, opened from
    the keyboard, fills the viewer at least at its full size (more than half
    again what a phone shows), drawn dark; + and - zoom it; Escape closes the
    viewer and gives the focus back. Without JavaScript the same link opens
    the SVG file."""
    lesson, name = widest_graph(site)
    page = tab.open(lesson_url(server, lang, lesson))
    page.locator("button.theme-toggle:visible").first.click()
    link = page.locator(f"article a.image-reference[href*='/{name[:-4]}']:visible")
    assert link.get_attribute("href").endswith(".svg"), "without JavaScript, the SVG file"
    image = link.locator("img.autograd-graph")
    shown = image.bounding_box()["width"]
    natural = image.evaluate("i => i.naturalWidth")

    link.focus()
    page.keyboard.press("Enter")
    page.wait_for_load_state()
    if not page.locator("dialog#graph-viewer").count():
        pytest.fail(f"no viewer on the page: the link opened {page.url}")
    viewer = page.locator("dialog#graph-viewer[open]")
    viewer.wait_for()
    assert page.url == lesson_url(server, lang, lesson), "the page stays open"
    large = viewer.locator("img")
    large.evaluate("i => i.decode()")
    opened = large.bounding_box()["width"]
    assert opened >= natural - 1, (opened, natural)
    if width == "phone":
        assert opened > 1.5 * shown, (opened, shown)
    assert drawn_in(large) == "dark"

    viewer.locator("button[data-zoom='1.25']").click()
    zoomed_in = large.bounding_box()["width"]
    page.keyboard.press("-")
    page.keyboard.press("-")
    zoomed_out = large.bounding_box()["width"]
    assert zoomed_in > 1.2 * opened and zoomed_out < zoomed_in / 1.5, (
        opened,
        zoomed_in,
        zoomed_out,
    )

    page.keyboard.press("Escape")
    assert page.locator("dialog#graph-viewer[open]").count() == 0
    assert link.evaluate("a => a === document.activeElement"), "the focus is back on the graph"
    assert not tab.errors and not tab.missing, tab.errors + tab.missing


# -- Links in code ------------------------------------------------------------------
CODE_LOOKS = """() => {
  const channels = c => c.match(/[\\d.]+/g).map(Number);
  const luminance = ([r, g, b]) => [r, g, b].map(v => {
    v /= 255; return v <= 0.03928 ? v / 12.92 : ((v + 0.055) / 1.055) ** 2.4;
  }).reduce((sum, v, i) => sum + v * [0.2126, 0.7152, 0.0722][i], 0);
  const contrast = (fg, bg) => {
    const [r, g, b, a = 1] = channels(fg), back = channels(bg);
    const seen = [r, g, b].map((v, i) => a * v + (1 - a) * back[i]);
    const [hi, lo] = [luminance(seen), luminance(back)].sort((x, y) => y - x);
    return (hi + 0.05) / (lo + 0.05);
  };
  const blocks = Array.from(document.querySelectorAll('article div.highlight pre'));
  const links = blocks.flatMap(pre => Array.from(pre.querySelectorAll('a[href]')));
  const plain = blocks.flatMap(pre => [pre, ...pre.querySelectorAll('*')])
    .filter(e => !e.closest('a'));
  return {
    links: links.map(a => {
      const style = getComputedStyle(a);
      const background = getComputedStyle(a.closest('.highlight')).backgroundColor;
      return [a.textContent, style.textDecorationLine,
              contrast(style.textDecorationColor, background)];
    }),
    underlined: plain.filter(e => getComputedStyle(e).textDecorationLine !== 'none')
      .map(e => e.textContent.trim().slice(0, 40)),
  };
}"""


@pytest.mark.parametrize("scheme", SCHEMES)
@pytest.mark.parametrize("lang", LANGUAGES)
def test_in_code_a_link_looks_like_a_link_and_only_a_link(server, tab, lang, scheme):
    """In both schemes, a name in code that links to PyTorch's documentation
    is underlined in a colour that stands out from the code's background
    (3:1, as WCAG asks of what tells things apart), and no other name is
    underlined (the dark style underlined every module and class name)."""
    page = tab.open(lesson_url(server, lang, LINKED_LESSON))
    looks = page.evaluate(CODE_LOOKS)
    assert looks["links"], "no link in the lesson's code"
    faint = [
        f"{name} ({line}, {ratio:.1f}:1)"
        for name, line, ratio in looks["links"]
        if "underline" not in line or ratio < 3
    ]
    assert not faint, f"links that do not look like links: {faint}"
    assert not looks["underlined"], f"underlined, and no link: {looks['underlined']}"
