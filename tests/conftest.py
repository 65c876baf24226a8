"""Shared fixtures: a copy of the project, built once per test session; the
run of each lesson's notebook; the built site served to Chromium.

Tests never build inside the working tree. Each build happens in a temporary
copy of the project's files (what git tracks, plus new files not ignored),
using the project's own virtual environment, the way sphinx-gallery's
tinybuild does it. A lesson executes twice in a session: in the site's build,
and as its downloaded notebook (which tests/test_notebooks.py and
tests/test_functions.py both read).
"""

from __future__ import annotations

import functools
import http.server
import os
import re
import shutil
import subprocess
import sys
import threading
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path
from urllib.parse import urlparse

import pytest

from ext import ROOT
from tools import workspace

VENV = Path(sys.prefix)
TESTS = Path(__file__).resolve().parent
LESSONS = sorted(ROOT.glob("gallery/[0-9][0-9]_*.py"))
# The site's languages, from the one line that lists them (the Makefile's).
LANGUAGES = re.search(r"^LANGUAGES := (.+)$", (ROOT / "Makefile").read_text(), re.M)[1].split()


def copy_project(dest: Path, with_generated: Path | None = None) -> Path:
    """Copy the project's sources to *dest*; optionally the executed gallery too."""
    workspace.copy_project(dest)
    if with_generated is not None:
        shutil.copytree(with_generated / "docs" / "lessons", dest / "docs" / "lessons")
    return dest


def build_env(**extra: str) -> dict[str, str]:
    env = dict(os.environ)
    env.pop("MAKEFLAGS", None)
    env.setdefault("SOURCE_DATE_EPOCH", _epoch())
    env.update(extra)
    return env


def _epoch() -> str:
    out = subprocess.run(
        ["git", "log", "-1", "--format=%ct"], cwd=ROOT, capture_output=True, text=True
    ).stdout.strip()
    return out or "315532800"


def require(available: bool, what: str, install: str) -> None:
    """Stop a test that needs a tool this machine lacks. In CI (``CI=true``)
    the tool must be there, and its absence fails the test; elsewhere the test
    is skipped, with the command that installs the tool."""
    if available:
        return
    message = f"{what} is missing; install it with: {install}"
    if os.environ.get("CI", "").lower() in ("1", "true", "yes"):
        pytest.fail(message)
    pytest.skip(message)


@functools.cache
def unshare_permitted() -> bool:
    """Whether this machine lets a command run with no network (``unshare -n``,
    which needs root)."""
    return bool(
        shutil.which("unshare")
        and not subprocess.run(["unshare", "-n", "true"], capture_output=True).returncode
    )


NO_NETWORK = ("`unshare -n` (run without network; needs root)", "sudo make test")


def no_network() -> list[str]:
    """The prefix that runs a command with no network, or a skip (a fail in
    CI) where it is not permitted."""
    require(unshare_permitted(), *NO_NETWORK)
    return ["unshare", "-n"]


@dataclass
class Run:
    returncode: int
    output: str


def make(project: Path, *targets: str, env: dict | None = None, prefix: list[str] = ()) -> Run:
    """Run make in *project* with this interpreter's venv; stdout+stderr combined."""
    result = subprocess.run(
        [*prefix, "make", "--no-print-directory", *targets, f"VENV={VENV}"],
        cwd=project,
        env=env or build_env(),
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
    )
    return Run(result.returncode, result.stdout)


def snapshot(folder: Path) -> dict[str, bytes]:
    """Every file under *folder*, by relative path, with its bytes."""
    return {
        p.relative_to(folder).as_posix(): p.read_bytes()
        for p in sorted(folder.rglob("*"))
        if p.is_file()
    }


@dataclass
class Site:
    root: Path
    log: str
    offline: bool = False  # built with no network at all

    @property
    def html(self) -> Path:
        return self.root / "_build" / "html"

    def pages(self, lang: str) -> list[Path]:
        base = self.html / lang
        return sorted(p for p in base.rglob("*.html") if "_static" not in p.parts)

    def download(self, lang: str, lesson: Path, suffix: str) -> Path:
        """The file a lesson's page offers for download (.py, .ipynb, .zip)."""
        folder = self.html / lang / "lessons"
        page = (folder / f"{lesson.stem}.html").read_text(encoding="utf-8")
        m = re.search(rf'href="([^"]*{lesson.stem}{suffix})"', page)
        assert m, f"{lang}/{lesson.stem}: no {suffix} download"
        return folder / m[1]


@pytest.fixture(scope="session")
def site(tmp_path_factory) -> Site:
    """The whole site, built once from a clean copy with `make html`, with no
    network where this machine permits it (tests/test_build.py asserts it)."""
    root = copy_project(tmp_path_factory.mktemp("site"))
    offline = unshare_permitted()
    run = make(root, "html", prefix=["unshare", "-n"] if offline else [])
    assert run.returncode == 0, run.output
    return Site(root, run.output, offline)


@dataclass
class NotebookRun:
    """A lesson's notebook after a reader's run, and what tests/test_functions.py
    then found, in the same kernel, of the Functions the lesson defined."""

    cells: list  # the notebook's code cells, with their outputs
    functions: dict  # tests/test_functions.py's report()
    error: str | None = None  # why the reader's run stopped, if it did


# Run in the kernel after the lesson's last cell, on what the reader's run
# defined: the checks of tests/test_functions.py.
CHECK_FUNCTIONS = """\
import sys
sys.path[:0] = [{root!r}, {tests!r}]
from IPython.display import display
from test_functions import report
display({{"application/json": report(globals(), {stem!r})}}, raw=True)
"""


def without_dot(folder: Path) -> dict[str, str]:
    """An environment whose PATH holds this Python and a shell, and nothing
    else: no Graphviz ``dot``, as on a reader's machine with only PyTorch.
    (The notebook's ``%pip install`` cell runs through ``sh``, which every
    reader has.)"""
    bin_dir = folder / "bin"
    bin_dir.mkdir()
    for name in ("python", "python3"):
        (bin_dir / name).symlink_to(sys.executable)
    (bin_dir / "sh").symlink_to(shutil.which("sh"))
    assert shutil.which("dot", path=str(bin_dir)) is None
    return dict(os.environ, PATH=str(bin_dir))


# Two lessons that draw graphs run their notebook without Graphviz's dot, one
# in each of the first two languages, instead of the usual English run with it
# (issue 21: a reader runs every notebook with or without Graphviz). The other
# graph lessons keep dot, so both paths run and no lesson runs a third time.
GRAPH_LESSONS = [p for p in LESSONS if "make_dot(" in p.read_text(encoding="utf-8")]
NO_DOT_RUNS = dict(zip(GRAPH_LESSONS[:2], reversed(LANGUAGES[:2]), strict=False))


def run_notebook(notebook: Path, stem: str, env: dict | None = None) -> NotebookRun:
    """Run *notebook* top to bottom, in a fresh Jupyter kernel (nbclient and
    ipykernel, as Jupyter runs it), from its folder, in *env* if given; then,
    in the same kernel, the checks of tests/test_functions.py on lesson
    *stem*'s Functions."""
    import nbformat
    from nbclient import NotebookClient
    from nbclient.exceptions import CellExecutionError

    nb = nbformat.read(notebook, as_version=4)
    check = nbformat.v4.new_code_cell(
        CHECK_FUNCTIONS.format(root=str(ROOT), tests=str(TESTS), stem=stem)
    )
    nb.cells.append(check)
    client = NotebookClient(
        nb,
        timeout=600,
        kernel_name="python3",
        resources={"metadata": {"path": str(notebook.parent)}},
        shutdown_kernel="immediate",  # once it has run: a kernel with torch exits slowly
    )
    error = None
    # The kernel's own log (not the cells' output) goes to a file: the
    # notebook runs beside other tests, whose output it would interleave.
    with open(notebook.parent.with_suffix(".kernel.log"), "w") as log:
        try:
            client.execute(stdout=log, stderr=log, **({} if env is None else {"env": env}))
        except CellExecutionError as exc:  # names the cell that failed, and why
            error = str(exc)
        except Exception as exc:  # the kernel died: its log says why
            error = f"{exc!r}; the kernel's log: {log.name}"
    nb.cells.remove(check)
    found = [o.data["application/json"] for o in check.outputs if "data" in o]
    if any(o.output_type == "error" for o in check.outputs):
        found, error = [{"error": error}], None  # the lesson ran; the checks did not
    code = [cell for cell in nb.cells if cell.cell_type == "code"]
    return NotebookRun(code, found[0] if found else {}, error)


class NotebookRuns:
    """The runs of the lessons' downloaded notebooks (English, but for
    NO_DOT_RUNS), each from a folder that holds nothing but that notebook,
    one kernel at a time in a thread beside the tests: started by
    :meth:`start`, waited for by calling."""

    def __init__(self, site: Site, tmp_path_factory):
        self.site, self.tmp = site, tmp_path_factory
        self.pool = ThreadPoolExecutor(max_workers=1)
        self.runs: dict[Path, Future] = {}

    def start(self, lessons: list[Path]) -> None:
        for lesson in lessons:
            if lesson not in self.runs:
                folder = self.tmp.mktemp(lesson.stem)
                lang = NO_DOT_RUNS.get(lesson, LANGUAGES[0])
                notebook = shutil.copy(self.site.download(lang, lesson, ".ipynb"), folder)
                env = None
                if lesson in NO_DOT_RUNS:
                    env = without_dot(self.tmp.mktemp(f"{lesson.stem}-nodot"))
                self.runs[lesson] = self.pool.submit(run_notebook, Path(notebook), lesson.stem, env)

    def __call__(self, lesson: Path) -> NotebookRun:
        self.start([lesson])
        return self.runs[lesson].result()


@pytest.fixture(scope="session")
def notebook_run(site, tmp_path_factory):
    """How a test gets a lesson's notebook run (tests/test_notebooks.py) and
    the checks of its Functions (tests/test_functions.py). Each lesson runs
    once here, once in the site's build, and nowhere else."""
    runs = NotebookRuns(site, tmp_path_factory)
    yield runs
    runs.pool.shutdown(cancel_futures=True)


@pytest.fixture(scope="session", autouse=True)
def notebooks_early(request):
    """Start the notebooks that the collected tests need as soon as the
    session starts: a kernel then runs while the other tests wait on a build
    or on the browser, and the machine's second core is not left idle."""
    needed = set()
    for item in request.session.items:
        if "notebook_run" in item.fixturenames:
            params = item.callspec.params.values() if hasattr(item, "callspec") else ()
            stems = {v.stem for v in params if isinstance(v, Path)}
            stems |= {v[0] for v in params if isinstance(v, tuple)}  # (lesson, Function)
            needed |= stems or {p.stem for p in LESSONS}
    if needed:
        request.getfixturevalue("notebook_run").start([p for p in LESSONS if p.stem in needed])


class Quiet(http.server.SimpleHTTPRequestHandler):
    def log_message(self, *args):
        pass


class Server(http.server.ThreadingHTTPServer):
    def handle_error(self, request, client_address):
        """A browser that leaves a page drops what it was still fetching (a
        search's summaries of the pages it found): nothing to report."""
        if not isinstance(sys.exc_info()[1], ConnectionError):
            super().handle_error(request, client_address)


def serve(folder: Path, handler=Quiet):
    """Serve *folder* on 127.0.0.1 until the generator is closed; yield its address."""
    httpd = Server(("127.0.0.1", 0), functools.partial(handler, directory=str(folder)))
    thread = threading.Thread(target=httpd.serve_forever, daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{httpd.server_address[1]}"
    httpd.shutdown()


@pytest.fixture(scope="session")
def server(site):
    """The built site on 127.0.0.1 (tests/test_publishing.py serves its own)."""
    yield from serve(site.html)


CHROMIUM = "/usr/bin/chromium"
CHROMIUM_FLAGS = [
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--no-first-run",
    "--disable-sync",
]


@pytest.fixture(scope="session")
def browser():
    """Debian's Chromium, driven by Playwright (tests/test_browser.py)."""
    require(Path(CHROMIUM).exists(), CHROMIUM, "sudo apt-get install chromium")
    from playwright.sync_api import sync_playwright

    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_FLAGS)
        yield browser
        browser.close()


class Reader:
    """One browser tab, with everything it loaded and everything that went wrong."""

    def __init__(self, page):
        self.page = page
        self.errors: list[str] = []
        self.outside: list[str] = []
        self.missing: list[str] = []
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
        if response.status >= 400:
            self.missing.append(f"{response.status} {response.url}")

    def open(self, url: str):
        """Load *url*: a static page is ready at "load", with every image decoded."""
        self.page.goto(url, wait_until="load")
        return self.page

    def weight(self) -> int:
        """The bytes of the open page and of all it loaded (the browser's
        Resource Timing; no cache, since every request is routed)."""
        return self.page.evaluate(
            """() => performance.getEntriesByType("navigation")
              .concat(performance.getEntriesByType("resource"))
              .reduce((sum, entry) => sum + entry.encodedBodySize, 0)"""
        )

    def troubles(self) -> list[str]:
        """What went wrong since the last call: errors, requests that left
        the site or were not answered."""
        found = [*self.errors, *(f"request outside the site {u}" for u in self.outside)]
        found += [f"unanswered: {m}" for m in self.missing]
        self.errors.clear()
        self.outside.clear()
        self.missing.clear()
        return found


def lesson_url(server: str, lang: str, lesson: Path) -> str:
    return f"{server}/{lang}/lessons/{lesson.stem}.html"


# The sizes a test's tab can take (a test asks with its parameter "width",
# or by having "phone" in its name); a laptop otherwise.
WIDTHS = {"laptop": (1280, 900), "phone": (390, 844)}


@pytest.fixture
def tab(browser, request):
    """A fresh tab (a Reader): a laptop, or a phone for a test that asks for
    one, in the colour scheme of the test's parameter "scheme" (light otherwise)."""
    params = getattr(request.node, "callspec", None)
    params = params.params if params else {}
    width = params.get("width", "phone" if "phone" in request.node.name else "laptop")
    w, h = WIDTHS[width]
    context = browser.new_context(
        viewport={"width": w, "height": h},
        is_mobile=width == "phone",
        has_touch=width == "phone",
        color_scheme=params.get("scheme", "light"),
    )
    yield Reader(context.new_page())
    context.close()


@pytest.hookimpl(wrapper=True)
def pytest_runtest_makereport(item, call):
    """Mark a test whose body failed, so fixtures can keep evidence (screenshots)."""
    report = yield
    if report.when == "call" and report.failed:
        item.failed_call = True
    return report
