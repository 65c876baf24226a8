"""Bad input: one clear error naming the file or value, and nothing lost.

Each case breaks one thing in a fresh copy of the project, runs the command a
person would run, and checks the exit status, the message, and that nothing
under gallery/ or locale/ was modified.
"""

from __future__ import annotations

import os
import subprocess
import sys

import pytest
from conftest import LESSONS, ROOT, build_env, copy_project, make, snapshot

pytestmark = pytest.mark.build


@pytest.fixture
def project(site, tmp_path):
    """A copy of the project that already has the executed gallery."""
    return copy_project(tmp_path / "p", with_generated=site.root)


def untouched(root, before):
    return (
        snapshot(root / "gallery") == before["gallery"]
        and snapshot(root / "locale") == before["locale"]
    )


def state(root):
    return {"gallery": snapshot(root / "gallery"), "locale": snapshot(root / "locale")}


def errors(output: str) -> list[str]:
    return [line for line in output.splitlines() if line.startswith("error:")]


def stand_in(lesson, *body: str) -> list[str]:
    """Replace *lesson* by its title docstring and *body*: the build must still
    name the lesson and line, and a short stand-in keeps the test from running
    the whole lesson once more. Returns the lines written."""
    text = lesson.read_text()
    header = text[: text.index('"""', 4) + 3]
    lines = header.splitlines() + ["", *body]
    lesson.write_text("\n".join(lines) + "\n")
    return lines


def test_a_lesson_that_raises(project):
    lesson = project / "gallery" / LESSONS[0].name
    lines = stand_in(lesson, 'raise ValueError("a planted failure")')
    before = state(project)
    run = make(project, "html")
    assert run.returncode != 0
    (error,) = errors(run.output)
    assert f"gallery/{lesson.name}:{len(lines)}" in error
    assert "ValueError: a planted failure" in error
    assert f"python gallery/{lesson.name}" in run.output
    assert untouched(project, before)
    assert not (project / "_build" / "html" / "en" / "index.html").exists()


def test_a_lesson_that_warns(project):
    """A warning that a lesson does not catch would show on its page: one error
    names the lesson and the line, and says what to do."""
    lesson = project / "gallery" / LESSONS[0].name
    lines = stand_in(
        lesson, "import warnings", 'warnings.warn("a planted warning", UserWarning, stacklevel=1)'
    )
    before = state(project)
    run = make(project, "html")
    assert run.returncode != 0
    (error,) = errors(run.output)
    assert f"gallery/{lesson.name}:{len(lines)} warned UserWarning: a planted warning" in error
    assert "warnings.catch_warnings()" in run.output
    assert untouched(project, before)
    assert not (project / "_build" / "html" / "en" / "index.html").exists()


def test_a_po_file_with_a_syntax_error(project):
    po = project / "locale/zh_CN/LC_MESSAGES/index.po"
    text = po.read_text(encoding="utf-8")
    po.write_text(text.replace('msgstr "', 'msgstr "unterminated\n', 1), encoding="utf-8")
    before = state(project)
    run = make(project, "html-zh")
    assert run.returncode != 0
    (error,) = errors(run.output)
    assert "locale/zh_CN/LC_MESSAGES/index.po:5: end-of-line within string" in error
    assert "fix the file" in error
    assert untouched(project, before)
    assert not (project / "_build" / "html" / "zh_CN" / "index.html").exists()
    # make stat too names the file and line, rather than counting what it can.
    run = make(project, "stat")
    assert run.returncode != 0 and "locale/zh_CN/LC_MESSAGES/index.po:" in run.output
    assert "in all:" not in run.output


def test_a_msgstr_with_broken_rest(project):
    po = project / "locale/zh_CN/LC_MESSAGES/lessons" / f"{LESSONS[0].stem}.po"
    import polib

    catalog = polib.pofile(str(po))
    entry = next(e for e in catalog if "``" in e.msgstr)
    entry.msgstr = entry.msgstr.replace("``", "`", 1)
    catalog.save(str(po))
    entry = next(e for e in polib.pofile(str(po)) if e.msgid == entry.msgid)
    before = state(project)
    run = make(project, "html-zh")
    assert run.returncode != 0
    assert f"locale/zh_CN/LC_MESSAGES/lessons/{LESSONS[0].stem}.po:{entry.linenum}" in run.output
    assert "markup" in run.output or "reST" in run.output
    assert untouched(project, before)


def test_dot_missing(project):
    """No dot on PATH and a lesson to execute: say how to install it."""
    lesson = project / "gallery" / LESSONS[0].name
    lesson.write_text(lesson.read_text() + "\nprint('changed')\n")
    before = state(project)
    empty = project / "no-bin"
    empty.mkdir()
    result = subprocess.run(
        [sys.executable, "-m", "tools.gallery"],
        cwd=project,
        env=build_env(PATH=str(empty)),
        capture_output=True,
        text=True,
    )
    assert result.returncode != 0
    (error,) = errors(result.stderr)
    assert "dot" in error and "apt-get install graphviz" in error
    assert untouched(project, before)


def test_dot_missing_without_root_says_how_to_install(tmp_path):
    """tools/require: where it may not install, one line with the command."""
    env = dict(os.environ, PATH=str(tmp_path), REQUIRE_NO_INSTALL="1")
    result = subprocess.run(
        ["/bin/bash", str(ROOT / "tools" / "require"), "dot", "graphviz"],
        env=env,
        capture_output=True,
        text=True,
    )
    assert result.returncode != 0
    assert result.stderr.strip().splitlines() == [
        "error: missing system packages: graphviz. Install them with: sudo apt-get install graphviz"
    ]


@pytest.mark.parametrize("code", ["xx", "zh_XX_bad", "klingon"])
def test_an_unknown_language_code(project, code):
    before = state(project)
    run = make(project, f"LANGUAGES=en {code}", "html")
    assert run.returncode != 0
    (error,) = errors(run.output)
    assert repr(code) in error and "LANGUAGES" in error
    assert untouched(project, before)
    assert not (project / "_build" / "html").exists()


@pytest.mark.parametrize("ci", ["", "true"])
def test_a_missing_tool_is_skipped_with_its_install_command_or_fails_in_ci(ci, monkeypatch):
    """Outside CI, a test whose tool is missing is skipped, naming the command
    that installs it; in CI the same absence fails the test."""
    from conftest import require

    monkeypatch.setenv("CI", ci)
    expected = pytest.fail.Exception if ci else pytest.skip.Exception
    with pytest.raises(expected, match=r"Java is missing; install it with: sudo apt-get"):
        require(False, "Java", "sudo apt-get install default-jre-headless")
    require(True, "Java", "never shown")
