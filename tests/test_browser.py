"""The site as a reader meets it: Debian's Chromium, driven by Playwright.

The built site is served on 127.0.0.1. Every request that would leave it is
recorded and refused, so a test also proves the page needs no network. A
failing test saves a screenshot under _build/test-screenshots/.
"""

from __future__ import annotations

import functools
import http.server
import re
import threading
from pathlib import Path
from urllib.parse import quote, urlparse

import pytest
from conftest import LANGUAGES, LESSONS, ROOT, require

playwright = pytest.importorskip("playwright.sync_api")
CHROMIUM = "/usr/bin/chromium"
FLAGS = [
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--no-first-run",
    "--disable-sync",
]
PAGE_BUDGET = 500 * 1024
SCREENSHOTS = ROOT / "_build" / "test-screenshots"

pytestmark = pytest.mark.build


class Quiet(http.server.SimpleHTTPRequestHandler):
    def log_message(self, *args):
        pass


@pytest.fixture(scope="session")
def server(site):
    handler = functools.partial(Quiet, directory=str(site.html))
    httpd = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    thread = threading.Thread(target=httpd.serve_forever, daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{httpd.server_address[1]}"
    httpd.shutdown()


@pytest.fixture(scope="module")  # one at a time: test_publishing.py runs its own
def browser():
    require(Path(CHROMIUM).exists(), CHROMIUM, "sudo apt-get install chromium")
    with playwright.sync_playwright() as p:
        browser = p.chromium.launch(executable_path=CHROMIUM, args=FLAGS)
        yield browser
        browser.close()


class Reader:
    """One browser tab, with everything it loaded and everything that went wrong."""

    def __init__(self, page):
        self.page = page
        self.errors: list[str] = []
        self.outside: list[str] = []
        self.bytes: dict[str, int] = {}
        page.on("console", self._console)
        page.on("pageerror", lambda exc: self.errors.append(f"page error: {exc}"))
        page.on("response", self._response)
        page.route("**/*", self._route)

    def _console(self, msg):
        if msg.type == "error":
            self.errors.append(f"console: {msg.text}")

    def _route(self, route):
        host = urlparse(route.request.url).hostname
        if route.request.url.startswith(("data:", "blob:")) or host == "127.0.0.1":
            route.continue_()
        else:
            self.outside.append(route.request.url)
            route.abort()

    def _response(self, response):
        try:
            self.bytes[response.url] = len(response.body())
        except Exception:  # a redirect or an aborted request has no body
            self.bytes.setdefault(response.url, 0)

    def open(self, url: str):
        self.bytes.clear()
        self.page.goto(url, wait_until="networkidle")
        return self.page


@pytest.fixture
def reader(browser, request):
    context = browser.new_context(viewport={"width": 1280, "height": 900})
    page = context.new_page()
    tab = Reader(page)
    yield tab
    if getattr(request.node, "failed_call", False):
        SCREENSHOTS.mkdir(parents=True, exist_ok=True)
        name = re.sub(r"[^\w.-]+", "_", request.node.name)
        page.screenshot(path=str(SCREENSHOTS / f"{name}.png"), full_page=True)
    context.close()


def all_pages(site, lang):
    return [p.relative_to(site.html).as_posix() for p in site.pages(lang)]


def lesson_url(server, lang, lesson):
    return f"{server}/{lang}/lessons/{lesson.stem}.html"


# -- Language ------------------------------------------------------------------
def test_switcher_round_trip_on_a_lesson(server, reader):
    lesson = LESSONS[len(LESSONS) // 2]
    page = reader.open(lesson_url(server, "en", lesson))
    assert page.locator("html").get_attribute("lang") == "en"
    page.locator(".language-switcher a[hreflang='zh-CN']").first.click()
    page.wait_for_load_state("networkidle")
    assert page.url == lesson_url(server, "zh_CN", lesson)
    assert page.locator("html").get_attribute("lang") == "zh-CN"
    page.locator(".language-switcher a[hreflang='en']").first.click()
    page.wait_for_load_state("networkidle")
    assert page.url == lesson_url(server, "en", lesson)
    assert not reader.errors and not reader.outside


@pytest.mark.parametrize("lang", LANGUAGES)
def test_every_page_links_its_translations(site, lang):
    for rel in all_pages(site, lang):
        html = (site.html / rel).read_text(encoding="utf-8")
        alternates = re.findall(r'<link rel="alternate" hreflang="([^"]+)" href="([^"]+)"', html)
        langs = {code for code, _ in alternates}
        assert {c.replace("_", "-") for c in LANGUAGES} | {"x-default"} <= langs, rel
        for _, href in alternates:
            assert ((site.html / rel).parent / href).resolve().is_file(), (rel, href)


@pytest.mark.parametrize(
    ("language", "expected"), [("zh-CN", "zh_CN"), ("zh", "zh_CN"), ("en-US", "en"), ("fr", "en")]
)
def test_landing_page_sends_the_reader_to_their_language(server, browser, language, expected):
    context = browser.new_context(locale=language)
    page = context.new_page()
    page.goto(f"{server}/index.html", wait_until="networkidle")
    assert page.url == f"{server}/{expected}/index.html"
    context.close()


# -- Search --------------------------------------------------------------------
@pytest.mark.parametrize(
    ("lang", "term"),
    [
        ("en", "gradgradcheck"),
        ("en", "Hessian"),
        ("zh_CN", "梯度"),
        ("zh_CN", "计算图"),
        ("zh_CN", "反向传播"),
    ],
)
def test_search_box_finds_the_lessons(server, reader, lang, term):
    page = reader.open(f"{server}/{lang}/index.html")
    box = page.locator("form.sidebar-search-container input[name='q']")
    box.fill(term)
    box.press("Enter")
    page.wait_for_url(re.compile(r"search\.html"))
    results = page.locator("#search-results ul.search li a")
    results.first.wait_for(timeout=20000)
    hrefs = results.evaluate_all("els => els.map(e => e.getAttribute('href'))")
    assert any("lessons/" in h for h in hrefs), hrefs
    assert not reader.errors and not reader.outside


def error_messages(site) -> list[str]:
    """The first line of every error the error index printed, as the build's
    PyTorch wrote it (after the exception's name)."""
    import html

    page = (site.html / "en" / "lessons" / "15_error_index.html").read_text(encoding="utf-8")
    outputs = re.findall(
        r'class="sphx-glr-script-out[^"]*"><div class="highlight"><pre[^>]*>(.*?)</pre>', page, re.S
    )
    found = []
    for output in outputs:
        first = html.unescape(re.sub(r"<[^>]+>", "", output)).strip().split("\n")[0]
        m = re.match(r"\w+(?:Error|Warning): (.+)", first)
        if m:
            found.append(m[1])
    return found


@pytest.mark.parametrize("lang", LANGUAGES)
def test_a_pasted_error_message_finds_its_entry(site, server, reader, lang):
    """Issue 11: paste what PyTorch printed into the search box, find the index."""
    messages = error_messages(site)
    assert len(messages) >= 12, messages
    missed = []
    for message in messages:
        page = reader.open(f"{server}/{lang}/search.html?q={quote(message)}")
        page.locator("#search-results .search-summary, #search-results p").first.wait_for(
            timeout=20000
        )
        hrefs = page.locator("#search-results ul.search li a").evaluate_all(
            "els => els.map(e => e.getAttribute('href'))"
        )
        if not any("15_error_index" in h for h in hrefs):
            missed.append(message)
    assert not missed, missed


# -- Every page ------------------------------------------------------------------
def accessibility_problems(page, rel: str) -> list[str]:
    """The serious and critical violations axe finds on the open page."""
    from axe_playwright_python.sync_playwright import Axe

    return [
        f"{rel}: {v['id']} ({v['impact']}) {[n['target'] for n in v['nodes']][:3]}"
        for v in Axe().run(page).response["violations"]
        if v["impact"] in ("serious", "critical")
    ]


@pytest.mark.parametrize("lang", LANGUAGES)
def test_every_page_loads_cleanly_offline(site, server, reader, lang):
    """Every page, light, once: images decode and graphs have alt text,
    nothing logs an error, no request leaves the site, axe finds no serious
    accessibility violation, and a lesson with all it loads weighs at most
    PAGE_BUDGET. (The dark sweep is tests/test_reader.py's.)"""
    problems = []
    for rel in all_pages(site, lang):
        page = reader.open(f"{server}/{rel}")
        broken = page.evaluate(
            "Array.from(document.images)"
            ".filter(i => !(i.complete && i.naturalWidth > 0)).map(i => i.src)"
        )
        problems += [f"{rel}: broken image {src}" for src in broken]
        alts = page.evaluate(
            "Array.from(document.querySelectorAll('img.autograd-graph')).map(i => i.alt)"
        )
        problems += [f"{rel}: short alt text {a!r}" for a in alts if len(a) <= 20]
        problems += [f"{rel}: {error}" for error in reader.errors]
        problems += [f"{rel}: request outside the site {url}" for url in reader.outside]
        problems += accessibility_problems(page, rel)
        reader.errors.clear()  # the next page's, from here on
        reader.outside.clear()
        if "/lessons/" in rel and not rel.endswith("/index.html"):
            weight = sum(reader.bytes.values())
            if weight > PAGE_BUDGET:
                problems.append(f"{rel}: {weight} bytes, over {PAGE_BUDGET}")
    assert not problems, "\n".join(problems[:30])


def test_phone_width_has_no_horizontal_scroll(server, browser):
    context = browser.new_context(viewport={"width": 390, "height": 844}, is_mobile=True)
    page = context.new_page()
    for lesson in LESSONS[:3]:
        page.goto(lesson_url(server, "zh_CN", lesson), wait_until="networkidle")
        overflow = page.evaluate("document.documentElement.scrollWidth - window.innerWidth")
        assert overflow <= 1, (lesson.stem, overflow)
    context.close()


def test_code_blocks_have_copy_buttons(server, reader):
    page = reader.open(lesson_url(server, "en", LESSONS[0]))
    blocks = page.locator("div.highlight-Python pre").count()
    buttons = page.locator("button.copybtn").count()
    assert blocks > 0 and buttons >= blocks


def test_prev_next_lead_through_the_lessons_in_order(server, reader):
    page = reader.open(lesson_url(server, "en", LESSONS[0]))
    for lesson in LESSONS[1:]:
        page.locator("a.next-page").first.click()
        page.wait_for_load_state("networkidle")
        assert page.url == lesson_url(server, "en", lesson)


def test_output_label_speaks_the_page_language(server, reader):
    """sphinx-gallery's "Out:" label is CSS content, so gettext never sees it."""
    label = "getComputedStyle(document.querySelector('.sphx-glr-script-out'), '::before').content"
    en = reader.open(lesson_url(server, "en", LESSONS[0])).evaluate(label)
    zh = reader.open(lesson_url(server, "zh_CN", LESSONS[0])).evaluate(label)
    assert en == '"Out:"'
    assert re.search(r"[\u3400-\u9fff]", zh), zh
