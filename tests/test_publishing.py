"""Publishing: the site at its address, found in both languages, under any folder.

The site is built a second time (the lessons are not run again) with
``SITE_URL=https://example.org/double-backward/``, as a fork named
double-backward is published on GitHub Pages, and served on 127.0.0.1 under
``/double-backward/`` only: a request outside that folder gets 404, as on
GitHub Pages. Under it, each kind of page is loaded once per language, and
what depends on where the site lives is tried there: the landing page's
redirect, the downloads, search, the language switcher. The sweeps over every
page run once, in tests/test_browser.py and tests/test_reader.py.
"""

from __future__ import annotations

import re
import urllib.request
import xml.etree.ElementTree as ET
from html.parser import HTMLParser
from pathlib import Path

import pytest
from conftest import (
    LANGUAGES,
    LESSONS,
    ROOT,
    Quiet,
    Reader,
    Site,
    build_env,
    copy_project,
    make,
    no_network,
    serve,
)
from test_browser import switch_language

from ext.pages import publishing

pytestmark = pytest.mark.build

SITE_URL = "https://example.org/double-backward/"
PREFIX = "/double-backward"
SITEMAP = "{http://www.sitemaps.org/schemas/sitemap/0.9}"
XHTML = "{http://www.w3.org/1999/xhtml}"
HREFLANG = {code: code.replace("_", "-") for code in LANGUAGES}


@pytest.fixture(scope="session")
def published(site, tmp_path_factory) -> Site:
    """The site built with its address, from a copy that has the executed lessons."""
    root = copy_project(tmp_path_factory.mktemp("published"), with_generated=site.root)
    run = make(root, "html", env=build_env(SITE_URL=SITE_URL))
    assert run.returncode == 0, run.output
    return Site(root, run.output)


def pages(site: Site, lang: str) -> list[str]:
    """Every page of *lang*, relative to the language's folder."""
    return [p.relative_to(site.html / lang).as_posix() for p in site.pages(lang)]


class Links(HTMLParser):
    """Every <link> of a page, and every address a page refers to."""

    def __init__(self):
        super().__init__()
        self.links: list[dict] = []
        self.refs: list[str] = []

    def handle_starttag(self, tag, attrs):
        attrs = dict(attrs)
        if tag == "link":
            self.links.append(attrs)
        for name in ("href", "src", "action"):
            if attrs.get(name):
                self.refs.append(attrs[name])


def links(page: Path) -> Links:
    parser = Links()
    parser.feed(page.read_text(encoding="utf-8"))
    return parser


def local_file(site: Site, url: str) -> Path:
    """The built file an absolute address of the site stands for."""
    assert url.startswith(SITE_URL), url
    return site.html / url[len(SITE_URL) :]


# -- Found in both languages ----------------------------------------------------
@pytest.mark.parametrize("lang", LANGUAGES)
def test_every_page_has_a_canonical_link_and_absolute_alternates(published, lang):
    for rel in pages(published, lang):
        found = links(published.html / lang / rel).links
        canonical = [link["href"] for link in found if link.get("rel") == "canonical"]
        assert canonical == [f"{SITE_URL}{lang}/{rel}"], rel
        alternates = {
            link["hreflang"]: link["href"] for link in found if link.get("rel") == "alternate"
        }
        assert alternates == {
            **{HREFLANG[code]: f"{SITE_URL}{code}/{rel}" for code in LANGUAGES},
            "x-default": f"{SITE_URL}{LANGUAGES[0]}/{rel}",
        }, rel
        assert all(local_file(published, url).is_file() for url in alternates.values()), rel


def test_the_landing_page_names_the_languages_by_address_and_redirects_relatively(published):
    page = published.html / "index.html"
    found = links(page).links
    assert [link["href"] for link in found if link.get("rel") == "canonical"] == [SITE_URL]
    alternates = {
        link["hreflang"]: link["href"] for link in found if link.get("rel") == "alternate"
    }
    assert alternates == {
        **{HREFLANG[code]: f"{SITE_URL}{code}/index.html" for code in LANGUAGES},
        "x-default": f"{SITE_URL}{LANGUAGES[0]}/index.html",
    }
    script = re.search(r"<script>(.*?)</script>", page.read_text(encoding="utf-8"), re.S)[1]
    assert 'location.replace(pick() + "/index.html"' in script
    assert "://" not in script


def test_the_sitemaps_list_every_page_in_both_languages(published):
    index = ET.parse(published.html / "sitemap.xml").getroot()
    assert index.tag == f"{SITEMAP}sitemapindex"
    listed = [loc.text for loc in index.iter(f"{SITEMAP}loc")]
    assert listed == [f"{SITE_URL}{code}/sitemap.xml" for code in LANGUAGES]
    unlisted = {"search.html", "genindex.html"}  # conf.py's sitemap_excludes
    for lang in LANGUAGES:
        urlset = ET.parse(local_file(published, f"{SITE_URL}{lang}/sitemap.xml")).getroot()
        urls = urlset.findall(f"{SITEMAP}url")
        locs = [url.find(f"{SITEMAP}loc").text for url in urls]
        expected = {f"{SITE_URL}{lang}/{rel}" for rel in pages(published, lang)} - {
            f"{SITE_URL}{lang}/{rel}" for rel in unlisted
        }
        assert sorted(locs) == sorted(expected)
        for url, loc in zip(urls, locs, strict=True):
            rel = loc[len(f"{SITE_URL}{lang}/") :]
            alternates = {
                link.get("hreflang"): link.get("href") for link in url.iter(f"{XHTML}link")
            }
            assert alternates == {HREFLANG[c]: f"{SITE_URL}{c}/{rel}" for c in LANGUAGES}, loc
            assert all(local_file(published, href).is_file() for href in alternates.values())


def test_every_address_a_page_refers_to_stays_inside_the_site(published):
    """No link begins with / : under /double-backward/ it would leave the site."""
    files = [published.html / "index.html"] + [
        published.html / lang / rel for lang in LANGUAGES for rel in pages(published, lang)
    ]
    outside = {
        f"{page.relative_to(published.html)}: {ref}"
        for page in files
        for ref in links(page).refs
        if ref.startswith("/")
    }
    assert not outside, sorted(outside)[:10]


def test_without_site_url_the_site_stays_local_and_the_build_says_nothing(site):
    assert not list(site.html.rglob("sitemap.xml"))
    for lang in LANGUAGES:
        for rel in pages(site, lang):
            found = links(site.html / lang / rel).links
            assert not [link for link in found if link.get("rel") == "canonical"], rel
            hrefs = [link["href"] for link in found if link.get("rel") == "alternate"]
            assert hrefs and not [href for href in hrefs if "://" in href], rel
    assert "sitemap" not in site.log.lower() and "canonical" not in site.log.lower()
    said = [line for line in site.log.splitlines() if not line.startswith(("gallery:", "built "))]
    assert not said, said


def test_a_notebook_links_the_other_pages_by_their_address(published):
    """With SITE_URL, a notebook's references to a lesson or page become links
    to their address (without it, tests/test_notebooks.py finds none)."""
    import json

    for lang in LANGUAGES:
        notebook = published.download(lang, LESSONS[0], ".ipynb")
        cells = json.loads(notebook.read_text(encoding="utf-8"))["cells"]
        text = "".join("".join(c["source"]) for c in cells if c["cell_type"] == "markdown")
        pages = re.findall(rf"\]\(({re.escape(SITE_URL)}[^)#]*)", text)
        assert any("/lessons/" in url for url in pages), (lang, pages)
        assert all(local_file(published, url).is_file() for url in pages), (lang, pages)


# -- Under a sub-path -------------------------------------------------------------
class UnderPrefix(Quiet):
    """Serves the site under PREFIX only, as GitHub Pages serves a project."""

    def translate_path(self, path):
        if path == PREFIX or path.startswith((PREFIX + "/", PREFIX + "?")):
            return super().translate_path(path[len(PREFIX) :] or "/")
        return str(Path(self.directory) / "outside-the-prefix" / "404")


@pytest.fixture(scope="module")
def server(published):
    """The published site, under PREFIX only (conftest.py's server serves the local one)."""
    for address in serve(published.html, UnderPrefix):
        yield address + PREFIX


def fetch(url: str) -> tuple[int, bytes]:
    try:
        with urllib.request.urlopen(url, timeout=30) as response:
            return response.status, response.read()
    except urllib.error.HTTPError as exc:
        return exc.code, b""


def test_the_server_serves_nothing_outside_the_prefix(server):
    outside = server[: -len(PREFIX)]
    assert fetch(f"{server}/en/index.html")[0] == 200
    assert fetch(f"{outside}/en/index.html")[0] == 404


def test_the_bare_folder_address_leads_to_a_language(server, browser):
    context = browser.new_context(locale="zh-CN")
    page = context.new_page()
    page.goto(server, wait_until="commit")  # .../double-backward, no slash
    page.wait_for_url(f"{server}/zh_CN/index.html", wait_until="commit")
    context.close()


@pytest.mark.parametrize("lang", LANGUAGES)
def test_each_kind_of_page_works_under_the_sub_path(server, browser, lang):
    """The home page, the lessons' index, a lesson, a hand-written page and
    the search page, each loaded once: their images, scripts and styles all
    load from inside the sub-path, nothing logs an error; the search finds
    the lessons, the lesson's downloads are there, and its language switcher
    leads to the other language's page."""
    context = browser.new_context()
    reader = Reader(context.new_page())
    lesson = f"lessons/{LESSONS[0].stem}.html"
    for rel in ["index.html", "lessons/index.html", "glossary.html",
                "search.html?q=gradient", lesson]:  # fmt: skip
        page = reader.open(f"{server}/{lang}/{rel}")
        broken = page.evaluate(
            "Array.from(document.images)"
            ".filter(i => !(i.complete && i.naturalWidth > 0)).map(i => i.src)"
        )
        assert not broken, (rel, broken)
        if rel.startswith("search.html"):
            page.locator("#search-results .search-summary").first.wait_for(timeout=20000)
            hrefs = page.locator("#search-results ul.search li a").evaluate_all(
                "els => els.map(e => e.href)"
            )
            assert any(h.startswith(f"{server}/{lang}/lessons/") for h in hrefs), hrefs
        assert not reader.troubles(), (rel, reader.troubles())
    hrefs = page.locator("a.download").evaluate_all("els => els.map(e => e.href)")
    assert {Path(h).suffix for h in hrefs} >= {".py", ".ipynb"}, hrefs
    for href in hrefs:
        assert href.startswith(f"{server}/{lang}/"), href
        status, body = fetch(href)
        assert status == 200 and body, href
    other = next(code for code in LANGUAGES if code != lang)
    assert switch_language(page, lang)["url"] == f"{server}/{other}/{lesson}"
    assert not reader.troubles()
    context.close()


# -- Units: ext/pages/publishing.py and the landing page -------------------------------
@pytest.mark.parametrize(
    ("value", "expected"),
    [
        ("https://example.org/double-backward/", "https://example.org/double-backward/"),
        ("https://example.org/double-backward", "https://example.org/double-backward/"),
        ("http://127.0.0.1:8000", "http://127.0.0.1:8000/"),
        ("https://docs.example.com/en/latest/", "https://docs.example.com/en/latest/"),
    ],
)
def test_a_site_url_ends_with_one_slash(value, expected):
    assert publishing.site_url(value) == expected


@pytest.mark.parametrize(
    ("value", "problem"),
    [
        ("example.org/double-backward/", "absolute http(s)"),
        ("ftp://example.org/", "absolute http(s)"),
        ("/double-backward/", "absolute http(s)"),
        ("https://example.org/?lang=en", "query"),
        ("https://example.org/#top", "#fragment"),
        ("https://me:secret@example.org/", "password"),
        ("https://example.org/a b/", "space"),
        ("https://example.org/\"'/", "quote"),
        ("https://example.org//x/", "//"),
        ("http://[::1", "absolute http(s)"),
    ],
)
def test_a_bad_site_url_is_refused_with_what_to_do(value, problem):
    with pytest.raises(publishing.SiteURLError) as raised:
        publishing.site_url(value)
    message = str(raised.value)
    assert message.startswith(f"SITE_URL={value!r}") and problem in message
    assert publishing.EXAMPLE in message


def test_the_site_root_is_html_baseurl_without_the_language_folder():
    def config(base, language="zh_CN"):
        return type("Config", (), {"html_baseurl": base, "language": language})()

    assert publishing.site_root(config("")) is None
    root = publishing.site_root(config("https://example.org/d/zh_CN/"))
    assert root == "https://example.org/d/"
    assert (
        publishing.page_url(root, "en", "lessons/index")
        == "https://example.org/d/en/lessons/index.html"
    )
    with pytest.raises(publishing.SiteURLError, match="SITE_URL"):
        publishing.site_root(config("https://example.org/d/"))


# -- Bad input ---------------------------------------------------------------------
def test_a_bad_site_url_stops_the_build_with_one_error(site, tmp_path):
    root = copy_project(tmp_path / "p", with_generated=site.root)
    run = make(root, "html", env=build_env(SITE_URL="example.org/double-backward"))
    assert run.returncode != 0
    (error,) = [line for line in run.output.splitlines() if line.startswith("error:")]
    assert "SITE_URL='example.org/double-backward'" in error and publishing.EXAMPLE in error
    assert not (root / "_build" / "html").exists()


# -- The hosting files, checked offline -------------------------------------------
WORKFLOW = Path(".github/workflows/site.yml")


def test_read_the_docs_installs_the_makefiles_build_packages():
    """Read the Docs builds without root, so .readthedocs.yaml must name the
    Debian packages itself: the same ones as the Makefile's BUILD_PACKAGES."""
    import yaml

    makefile = (ROOT / "Makefile").read_text()
    pairs = re.search(r"^BUILD_PACKAGES := (.+)$", makefile, re.M)[1].split()
    config = yaml.safe_load((ROOT / ".readthedocs.yaml").read_text())
    assert set(config["build"]["apt_packages"]) == set(pairs[1::2])


def test_the_workflow_and_readthedocs_config_pass_the_offline_checks(tmp_path):
    root = copy_project(tmp_path / "p")
    run = make(root, "check-deploy", prefix=no_network())
    assert run.returncode == 0, run.output


def test_an_action_pinned_by_its_tag_fails_the_checks(tmp_path):
    root = copy_project(tmp_path / "p")
    workflow = root / WORKFLOW
    text = workflow.read_text()
    pinned = re.search(r"uses: (actions/checkout)@([0-9a-f]{40})", text)
    workflow.write_text(text.replace(pinned[0], f"uses: {pinned[1]}@v6"))
    run = make(root, "check-deploy", prefix=no_network())
    assert run.returncode != 0
    assert "unpinned-uses" in run.output and str(WORKFLOW) in run.output
