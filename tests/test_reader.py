"""The reader's page in dark mode, in Debian's Chromium: both languages, on a
laptop (1280 px) and on a phone (390 px).

What used to trip a reader: white panels and white images in dark mode,
colours that lose their contrast, pages and tables cut off on a phone, focus
stops that vanish. (A graph too small to read on a phone opens large in the
page's viewer: tests/test_edges.py.) Each page is loaded once per
language and width, dark; the light sweep, the server and the tab are
tests/test_browser.py's.
"""

from __future__ import annotations

import io

import pytest
from conftest import LANGUAGES, WIDTHS
from test_browser import (
    COLOUR_RULES,
    WALKED,
    accessibility_problems,
    lesson_facts,
    problems,
    run_line_problems,
    sweep,
    walk,
    weight_problems,
)

pytestmark = pytest.mark.build


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


@pytest.fixture(scope="module")
def dark(browser, server, site):
    """Every page of a language, dark, once per width (by language and width)."""
    done = {}

    def visit(reader, lang, rel, found, width):
        page = reader.page
        found.problems += [
            f"{rel}: {box} has a light background" for box in page.evaluate(BRIGHT_BOXES)
        ]
        lesson = rel.startswith("lessons/") and rel != "lessons/index.html"
        if width == "laptop":  # the same images, drawn larger
            images = page.locator("article img")
            for i in range(images.count()):
                image = images.nth(i)
                box = image.bounding_box() if image.is_visible() else None
                if box and box["width"] * box["height"] >= 2500:
                    share = light_share(image.screenshot())
                    if share > 0.4:
                        found.problems.append(
                            f"{rel}: {image.get_attribute('src')} is {share:.0%} white"
                        )
            found.problems += accessibility_problems(page, rel, COLOUR_RULES)
            if lesson:
                found.problems += weight_problems(reader, rel)
        else:
            overflow, tables = page.evaluate(CUT_OFF)
            if overflow > 1:
                found.problems.append(f"{rel}: the page scrolls sideways by {overflow}px")
            found.problems += [f"{rel}: a table is cut off by {cut}px" for cut in tables if cut > 1]
            if rel in WALKED:
                found.facts["walk"] = walk(page, rel)
        if rel == WALKED[0]:
            found.facts.update(lesson_facts(page))

    def results(lang, width):
        if (lang, width) not in done:
            w, h = WIDTHS[width]
            done[lang, width] = sweep(
                browser,
                server,
                site,
                lang,
                lambda *args: visit(*args, width),
                width=w,
                height=h,
                scheme="dark",
            )
        return done[lang, width]

    return results


@pytest.mark.parametrize("width", WIDTHS)
@pytest.mark.parametrize("lang", LANGUAGES)
def test_every_page_in_dark_mode(dark, lang, width):
    """Every page, dark: no box has a light background; on a laptop no image
    (a graph, a card's thumbnail) is mostly white and axe finds no serious
    contrast violation and a lesson stays light (as in tests/test_browser.py's
    light sweep); on a phone nothing scrolls sideways and every table
    fits; every request is answered (the icon too), and nothing logs an error."""
    assert not problems(dark(lang, width)), problems(dark(lang, width))[:3000]


@pytest.mark.parametrize("width", WIDTHS)
@pytest.mark.parametrize("lang", LANGUAGES)
def test_a_lesson_says_which_pytorch_ran_it_and_links_the_api(dark, lang, width):
    found = run_line_problems(dark(lang, width)[WALKED[0]].facts)
    assert not found, found


@pytest.mark.parametrize("lang", LANGUAGES)
def test_every_focus_stop_is_visible_and_on_screen_on_a_phone(dark, lang):
    found = [p for rel in WALKED for p in dark(lang, "phone")[rel].facts["walk"]]
    assert not found, "\n".join(found[:30])
