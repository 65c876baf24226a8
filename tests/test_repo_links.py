"""The links to the repository (ext/pages/repository.py): run it, read it, report it.

Without REPO_URL (the session's ``site``), no page shows any of them. With it,
the site is built once more, from a copy that has the executed lessons (none
runs again) and a git history of its own: every file committed on one day,
then one lesson and one hand-written page on a later day, so that each page's
date is known. Every lesson page of both languages must then offer its
notebook in Colab, its script, a filled-in new issue and its date; every other
page its source and the issue. The workflow must publish the notebooks where
the Colab links open them; and a copy without git history builds, undated.
"""

from __future__ import annotations

import re
import subprocess
import time
from html.parser import HTMLParser
from pathlib import Path
from urllib.parse import parse_qs, urlsplit

import pytest
import yaml
from conftest import LANGUAGES, LESSONS, ROOT, Site, build_env, copy_project, make
from test_build import CJK, Chrome

from ext.lessons.provenance import recorded_run
from ext.pages import repository

REPO = "https://github.com/example/double-backward"
SITE_URL = "https://example.org/double-backward/"
COLAB = "https://colab.research.google.com/github/example/double-backward/blob/"
FIRST, LATER = 1767268800, 1772366400  # 2026-01-01 and 2026-03-01, at noon UTC
CHANGED = (f"gallery/{LESSONS[0].name}", "docs/glossary.md")  # committed LATER
WORDS = {
    "en": ("Open in Colab", "View the source", "Edit this page", "Report a problem with this page"),
    "zh_CN": ("在 Colab 中打开", "查看源代码", "编辑此页", "报告此页的问题"),
}


def day(epoch: int) -> str:
    return time.strftime("%Y-%m-%d", time.gmtime(epoch))


def commit(root: Path, paths: list[str], epoch: int) -> None:
    """Commit *paths* in *root* on the day of *epoch*."""
    env = build_env()
    for who in ("AUTHOR", "COMMITTER"):
        env |= {f"GIT_{who}_NAME": "Test", f"GIT_{who}_EMAIL": "test@example.org"}
        env[f"GIT_{who}_DATE"] = f"@{epoch} +0000"
    subprocess.run(["git", "add", "--all", "--", *paths], cwd=root, check=True)
    command = ["git", "-c", "commit.gpgsign=false", "commit", "-q", "-m", "test"]
    subprocess.run(command, cwd=root, env=env, check=True)


@pytest.fixture(scope="module")
def linked(site, tmp_path_factory) -> Site:
    """The site built with REPO_URL and SITE_URL, and its notebooks gathered."""
    root = copy_project(tmp_path_factory.mktemp("linked"), with_generated=site.root)
    subprocess.run(["git", "init", "-q"], cwd=root, check=True)
    commit(root, [".", *(f":!{p}" for p in CHANGED)], FIRST)
    commit(root, list(CHANGED), LATER)
    run = make(root, "html", "notebooks", env=build_env(REPO_URL=REPO, SITE_URL=SITE_URL))
    assert run.returncode == 0, run.output
    assert "executed 0 lesson(s)" in run.output
    return Site(root, run.output)


class Links(HTMLParser):
    """The page's line of links: [(href or None, text)], the date first if any."""

    def __init__(self):
        super().__init__()
        self.inside = False
        self.found: list[list] = []
        self.footer_date = ""
        self.in_footer_date = False

    def handle_starttag(self, tag, attrs):
        attrs = dict(attrs)
        if tag == "p" and attrs.get("class") == "page-links":
            assert not self.found, "two lines of links"
            self.inside = True
        elif self.inside and tag in ("a", "span"):
            self.found.append([attrs.get("href"), ""])
        self.in_footer_date |= tag == "div" and attrs.get("class") == "last-updated"

    def handle_endtag(self, tag):
        self.inside &= tag != "p"
        self.in_footer_date &= tag != "div"

    def handle_data(self, data):
        if self.inside and self.found:
            self.found[-1][1] += data.strip()
        if self.in_footer_date:
            self.footer_date += data.strip()


def links_of(page: Path) -> Links:
    parser = Links()
    parser.feed(page.read_text(encoding="utf-8"))
    return parser


def issue(href: str) -> tuple[str, str]:
    """The title and body a new-issue link fills in."""
    url = urlsplit(href)
    assert f"{url.scheme}://{url.netloc}{url.path}" == f"{REPO}/issues/new", href
    query = parse_qs(url.query, strict_parsing=True)
    return query["title"][0], query["body"][0]


# -- Without REPO_URL: nothing --------------------------------------------------------
@pytest.mark.build
def test_without_repo_url_no_page_links_to_the_repository(site):
    marks = ("page-links", "last-updated", "modified_time")  # no links block, and no date
    links = ("colab.research", "/issues/new", "/blob/main/", "/edit/main/")
    for lang in LANGUAGES:
        for page in site.pages(lang):
            text = page.read_text(encoding="utf-8")
            # Only links count: a lesson's printed output may quote a URL, as
            # PyTorch's "Please file an issue ... /issues/new" does in lesson 18.
            hrefs = " ".join(re.findall(r'href="([^"]*)"', text))
            found = [m for m in marks if m in text] + [m for m in links if m in hrefs]
            assert not found, f"{lang}/{page.name}: {found}"


# -- With REPO_URL: every page --------------------------------------------------------
@pytest.mark.build
@pytest.mark.parametrize("lang", LANGUAGES)
def test_every_lesson_offers_colab_its_source_an_issue_and_its_date(linked, lang):
    colab, source, _, report = WORDS[lang]
    for lesson in LESSONS:
        page = linked.html / lang / "lessons" / f"{lesson.stem}.html"
        text = page.read_text(encoding="utf-8")
        assert re.search(
            r'<p class="lesson-run">[^<]*</p>\s*(?:<p class="lesson-needs">.*?</p>\s*)?<p class="page-links">',
            text,
        ), f"{lesson.stem}: the links are not under the run line"
        found = links_of(page)
        (_, date), (to_colab, c), (to_source, s), (to_issue, r) = found.found
        assert (c, s, r) == (colab, source, report)
        expected = day(LATER if f"gallery/{lesson.name}" in CHANGED else FIRST)
        assert expected in date and found.footer_date == date, (lesson.stem, date)
        assert bool(CJK.search(date)) == (lang != "en"), date

        assert to_colab == f"{COLAB}notebooks/{lang}/{lesson.stem}.ipynb"
        assert to_source == f"{REPO}/blob/main/gallery/{lesson.name}"
        title, body = issue(to_issue)
        address = f"{SITE_URL}{lang}/lessons/{lesson.stem}.html"
        torch = recorded_run(linked.root / "docs" / "lessons", lesson.name)["torch"]
        assert f"Page: {address}\n" in body and f"Language: {lang}\n" in body
        assert f"PyTorch: {torch} " in body and lesson.stem in title


@pytest.mark.build
@pytest.mark.parametrize("lang", LANGUAGES)
def test_every_other_page_offers_its_source_and_an_issue(linked, lang):
    _, source, edit, report = WORDS[lang]
    pages = sorted(ROOT.glob("docs/*.md"))
    assert pages
    for path in [*pages, ROOT / "gallery" / "README.rst"]:
        docname = "lessons/index" if path.parent.name == "gallery" else path.stem
        page = linked.html / lang / f"{docname}.html"
        found = links_of(page)
        (to_file, label), (to_issue, r) = found.found
        rel = path.relative_to(ROOT).as_posix()
        if rel.startswith("docs/"):
            assert (to_file, label) == (f"{REPO}/edit/main/{rel}", edit)
        else:  # generated by sphinx-gallery from its file in gallery/
            assert (to_file, label) == (f"{REPO}/blob/main/{rel}", source)
        assert r == report
        title, body = issue(to_issue)
        assert f"Page: {SITE_URL}{lang}/{docname}.html\n" in body and docname in title
        assert "PyTorch" not in body  # executed nothing
        # The date, at the foot of the page (Furo's place), as git has it.
        expected = day(LATER if rel in CHANGED else FIRST)
        assert expected in found.footer_date, (docname, found.footer_date)


@pytest.mark.build
def test_the_chinese_pages_say_it_all_in_chinese(linked):
    for page in linked.pages("zh_CN"):
        parser = Chrome()
        parser.feed(page.read_text(encoding="utf-8"))
        english = [t for t in parser.found if re.search(r"[A-Za-z]{3}", t) and not CJK.search(t)]
        assert not [t for t in english if t not in {"English", "Furo", "Sphinx", "@pradyunsg"}]


# -- The notebooks: where the workflow publishes them ------------------------------------
WORKFLOW = ROOT / ".github" / "workflows" / "site.yml"


def steps(job: dict, uses: str = "", run: str = "") -> list[dict]:
    return [
        s
        for s in job["steps"]
        if (uses and s.get("uses", "").startswith(uses + "@")) or (run and s.get("run") == run)
    ]


@pytest.mark.build
def test_the_workflow_publishes_the_notebooks_where_colab_opens_them(linked):
    """The main branch's build has REPO_URL and its history; `make notebooks`
    gathers what the Colab links name, and the next job pushes exactly that
    folder to the branch they open."""
    jobs = yaml.safe_load(WORKFLOW.read_text())["jobs"]
    build = jobs["build"]
    (checkout,) = steps(build, uses="actions/checkout")
    assert checkout["with"]["fetch-depth"] == 0  # the pages' dates need the history
    (html,) = steps(build, run="make html")
    assert html["env"]["REPO_URL"] == "${{ github.server_url }}/${{ github.repository }}"
    (gather,) = steps(build, run="make notebooks")
    (upload,) = steps(build, uses="actions/upload-artifact")
    assert build["steps"].index(gather) < build["steps"].index(upload)
    assert upload["with"]["path"] == "_build/notebooks"

    publish = jobs["notebooks"]
    assert publish["needs"] == "build"
    (download,) = steps(publish, uses="actions/download-artifact")
    assert download["with"]["name"] == upload["with"]["name"]
    assert publish["permissions"] == {"contents": "write"}
    (push,) = [s for s in publish["steps"] if "git push" in s.get("run", "")]
    assert push["working-directory"] == download["with"]["path"]
    branch = push["run"].split()[-1]

    gathered = linked.root / "_build" / "notebooks"
    assert len(list(gathered.rglob("*.ipynb"))) == len(LESSONS) * len(LANGUAGES)
    for lang in LANGUAGES:
        for lesson in LESSONS:
            page = linked.html / lang / "lessons" / f"{lesson.stem}.html"
            to_colab = links_of(page).found[1][0]
            assert to_colab.startswith(f"{COLAB}{branch}/"), to_colab
            notebook = gathered / to_colab.removeprefix(f"{COLAB}{branch}/")
            (download,) = (linked.html / lang).glob(f"_downloads/*/{lesson.stem}.ipynb")
            assert notebook.read_bytes() == download.read_bytes(), notebook


# -- Without git history; bad input ------------------------------------------------------
@pytest.mark.build
def test_a_copy_without_git_history_builds_its_links_without_dates(site, tmp_path):
    root = copy_project(tmp_path / "p", with_generated=site.root)
    run = make(root, "html-en", env=build_env(REPO_URL=REPO))
    assert run.returncode == 0, run.output
    html = root / "_build" / "html" / "en"
    lesson = links_of(html / "lessons" / f"{LESSONS[0].stem}.html")
    assert [label for _, label in lesson.found] == [WORDS["en"][i] for i in (0, 1, 3)]
    assert not lesson.footer_date
    title, body = issue(lesson.found[-1][0])
    assert f"Page: lessons/{LESSONS[0].stem}\n" in body  # no SITE_URL: the page's name


@pytest.mark.build
def test_a_bad_repo_url_stops_the_build_with_one_error(tmp_path):
    root = copy_project(tmp_path / "p")
    run = make(
        root, "html", env=build_env(REPO_URL="https://github.com/example/double-backward.git")
    )
    assert run.returncode != 0
    (error,) = [line for line in run.output.splitlines() if line.startswith("error:")]
    assert "REPO_URL='https://github.com/example/double-backward.git'" in error
    assert repository.EXAMPLE in error
    assert not (root / "_build" / "html").exists()


# -- Unit tests ---------------------------------------------------------------------------
@pytest.mark.parametrize(
    "value", ["https://github.com/example/double-backward", "https://github.com/Ex-1/d.b_2/"]
)
def test_a_repo_url_is_a_github_repository(value):
    assert repository.repo_url(value) == value.rstrip("/")


@pytest.mark.parametrize(
    "value",
    [
        "github.com/example/double-backward",
        "http://github.com/example/double-backward",
        "https://gitlab.com/example/double-backward",
        "https://github.com/example",
        "https://github.com/example/double-backward.git",
        "https://github.com/example/double-backward/tree/main",
        "https://github.com/example/double backward",
        "https://github.com/example/..",
    ],
)
def test_a_bad_repo_url_is_refused_with_what_to_do(value):
    with pytest.raises(repository.RepoURLError) as raised:
        repository.repo_url(value)
    assert str(raised.value).startswith(f"REPO_URL={value!r} ")
    assert repository.EXAMPLE in str(raised.value)


def test_the_issue_link_is_url_encoded_and_decodes_to_the_page():
    page = "https://example.org/d/zh_CN/lessons/01_a.html?x=1&y=2#top"
    href = repository.report_url(REPO, "lessons/01_a", page, "zh_CN", "2.13.0+cpu")
    assert " " not in href and "\n" not in href and href.count("&") == 1
    title, body = issue(href)
    assert title == "Problem with lessons/01_a (zh_CN)"
    assert body.splitlines()[:3] == [
        f"Page: {page}",
        "Language: zh_CN",
        "PyTorch: 2.13.0+cpu (the version that executed the page)",
    ]
    _, body = issue(repository.report_url(REPO, "index", "index", "en"))
    assert "PyTorch" not in body
    assert (
        repository.colab_url(REPO, "notebooks", "en", "01_a") == f"{COLAB}notebooks/en/01_a.ipynb"
    )
