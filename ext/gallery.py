"""Execute the lessons once; let every language build read the result.

sphinx-gallery executes scripts and writes reST into the source tree. If each
language build ran it, the lessons would execute once per language, and two
builds running side by side would race on the same generated folder. So:

* ``python -m ext.gallery`` (``make gallery``) is the only process that runs
  sphinx-gallery's generation. It executes the lessons whose source changed,
  reports a failing lesson as one error naming the script and line, and marks
  what it completed, so that an interrupted run is redone on the next one.
* Every Sphinx build (html in each language, gettext) loads this extension with
  ``lessons_execute`` left False: sphinx-gallery's directives and styles are
  there, but its generation is switched off and the generated reST is read as
  an ordinary, read-only source.

The gallery index cards are raw HTML in sphinx-gallery's output, which gettext
cannot see. :func:`translatable_cards` rewrites them into a ``lesson-card``
directive whose title and tooltip are ordinary, translatable paragraphs.
"""

from __future__ import annotations

import argparse
import gc
import hashlib
import html
import io
import json
import os
import re
import sys
import zipfile
from pathlib import Path

from docutils import nodes
from docutils.parsers.rst import Directive, directives

ROOT = Path(__file__).resolve().parent.parent
COMPLETE = ".complete.json"
HEADER = "README.rst"


# --------------------------------------------------------------------------
# Sphinx side: every build


def disable_generation(app, config) -> None:
    """Turn sphinx-gallery's generation off unless this is the execution run."""
    conf = dict(config.sphinx_gallery_conf)
    if config.lessons_execute:
        return
    conf["examples_dirs"] = []
    conf["gallery_dirs"] = []
    config.sphinx_gallery_conf = conf


_CARD = re.compile(
    r"""
    \.\.\ raw::\ html\n\n
    \s*<div\ class="sphx-glr-thumbcontainer"\ (?:data-sgtags='[^']*'\ )?tooltip="(?P<tooltip>[^"]*)">\n\n
    \.\.\ only::\ html\n\n
    \s*\.\.\ image::\ (?P<thumb>\S+)\n
    \s*:alt:[^\n]*\n\n
    \s*:doc:`(?P<doc>[^`]+)`\n\n
    \.\.\ raw::\ html\n\n
    \s*<div\ class="sphx-glr-thumbnail-title">(?P<title>[^<]*)</div>\n
    \s*</div>\n
    """,
    re.VERBOSE,
)


def translatable_cards(text: str) -> str:
    """Rewrite sphinx-gallery's raw-HTML cards as ``lesson-card`` directives."""

    def card(m: re.Match) -> str:
        tooltip = html.unescape(m["tooltip"]).strip()
        title = html.unescape(m["title"]).strip()
        return (
            f".. lesson-card:: {m['doc']}\n"
            f"   :thumbnail: {m['thumb']}\n\n"
            f"   {title}\n\n"
            f"   {tooltip}\n"
        )

    return _CARD.sub(card, text)


def on_source_read(app, docname: str, source: list[str]) -> None:
    if "sphx-glr-thumbcontainer" in source[0]:
        source[0] = translatable_cards(source[0])


class lesson_card(nodes.General, nodes.Element):
    """A gallery card: thumbnail, link, title and tooltip."""


class lesson_card_title(nodes.paragraph):
    """The card's visible title (a paragraph, so gettext extracts it)."""


class lesson_card_tooltip(nodes.paragraph):
    """The card's tooltip text, written into the card's ``tooltip`` attribute."""


class LessonCard(Directive):
    """``.. lesson-card:: /lessons/name`` with a title and a tooltip paragraph."""

    required_arguments = 1
    has_content = True
    option_spec = {"thumbnail": directives.unchanged_required}

    def run(self):
        from sphinx.addnodes import pending_xref

        parsed = nodes.Element()
        self.state.nested_parse(self.content, self.content_offset, parsed)
        paragraphs = [n for n in parsed.children if isinstance(n, nodes.paragraph)]
        if len(paragraphs) != 2:
            raise self.error("lesson-card needs a title paragraph and a tooltip paragraph")
        parts = []
        for cls, paragraph in zip(
            (lesson_card_title, lesson_card_tooltip), paragraphs, strict=True
        ):
            part = cls(paragraph.rawsource, "", *paragraph.children)
            part.source, part.line = paragraph.source, paragraph.line
            parts.append(part)
        image = nodes.image(uri=directives.uri(self.options["thumbnail"]), alt="")
        ref = pending_xref(
            "",
            nodes.inline("", "", classes=["xref", "std", "std-doc"]),
            refdomain="std",
            reftype="doc",
            reftarget=self.arguments[0],
            refexplicit=False,
            refwarn=True,
            refdoc=self.state.document.settings.env.docname,
        )
        return [lesson_card("", image, nodes.paragraph("", "", ref), *parts)]


def visit_lesson_card_html(self, node: lesson_card) -> None:
    tooltip = next(node.findall(lesson_card_tooltip)).astext()
    self.body.append(
        f'<div class="sphx-glr-thumbcontainer" tooltip="{html.escape(tooltip, quote=True)}">\n'
    )


def depart_lesson_card_html(self, node: lesson_card) -> None:
    self.body.append("</div>\n")


def visit_card_title_html(self, node: lesson_card_title) -> None:
    self.body.append('<div class="sphx-glr-thumbnail-title">')


def depart_card_title_html(self, node: lesson_card_title) -> None:
    self.body.append("</div>\n")


def visit_skip(self, node) -> None:
    raise nodes.SkipNode


_NOT_HTML = {b: (visit_skip, None) for b in ("latex", "text", "man", "texinfo")}


def setup(app):
    app.add_config_value("lessons_execute", False, "", types=[bool])
    # Before sphinx-gallery reads its configuration (priority 10).
    app.connect("config-inited", disable_generation, priority=5)
    app.connect("source-read", on_source_read)
    app.add_node(lesson_card, html=(visit_lesson_card_html, depart_lesson_card_html), **_NOT_HTML)
    app.add_node(lesson_card_title, html=(visit_card_title_html, depart_card_title_html))
    app.add_node(lesson_card_tooltip, html=(visit_skip, None))
    app.add_directive("lesson-card", LessonCard)
    return {"parallel_read_safe": True, "parallel_write_safe": True}


# --------------------------------------------------------------------------
# The execution run: python -m ext.gallery


def _md5(path: Path) -> str:
    """The checksum sphinx-gallery stores for a lesson (text mode, any newline)."""
    text = path.read_text(encoding="utf-8", errors="surrogateescape")
    return hashlib.md5(text.encode("utf-8", errors="surrogateescape")).hexdigest()


def lessons_in(gallery_dir: Path) -> list[Path]:
    return sorted(gallery_dir.glob("[0-9][0-9]_*.py"))


def stale_lessons(gallery_dir: Path, out_dir: Path) -> list[str]:
    """The lessons that the next run will execute: no current checksum."""
    stale = []
    for source in lessons_in(gallery_dir):
        md5_file = out_dir / (source.name + ".md5")
        if not md5_file.exists() or md5_file.read_text().strip() != _md5(source):
            stale.append(source.name)
    return stale


def forget_incomplete(out_dir: Path) -> None:
    """Make a lesson whose last run did not complete run again.

    sphinx-gallery skips a lesson whose checksum file matches its source, but
    writes that file before the page, thumbnail and notebook. A checksum not
    recorded in the completion list therefore belongs to an interrupted run.
    """
    done = _read_complete(out_dir).get("lessons", {})
    for md5_file in out_dir.glob("*.py.md5"):
        if done.get(md5_file.name) != md5_file.read_text().strip():
            md5_file.unlink()


def _read_complete(out_dir: Path) -> dict:
    try:
        return json.loads((out_dir / COMPLETE).read_text())
    except (OSError, ValueError):
        return {}


def record_complete(out_dir: Path, gallery_dir: Path) -> None:
    """Record every lesson whose generated page matches its current source,
    and the gallery header the index was made from."""
    done = {}
    for md5_file in sorted(out_dir.glob("*.py.md5")):
        source = md5_file.with_suffix("")
        if source.exists() and _md5(source) == md5_file.read_text().strip():
            done[md5_file.name] = md5_file.read_text().strip()
    record = {"header": _md5(gallery_dir / HEADER), "lessons": done}
    _write_if_changed(out_dir / COMPLETE, json.dumps(record, indent=1, sort_keys=True) + "\n")


def up_to_date(gallery_dir: Path, out_dir: Path) -> bool:
    """True when a run would change nothing: every lesson and the header are
    as they were at the last completed run (so Sphinx need not even start)."""
    done = _read_complete(out_dir)
    lessons = lessons_in(gallery_dir)
    return (
        (out_dir / "index.rst").exists()
        and done.get("header") == _md5(gallery_dir / HEADER)
        and set(done.get("lessons", {})) == {f"{p.name}.md5" for p in lessons}
        and not stale_lessons(gallery_dir, out_dir)
        and all(done["lessons"][f"{p.name}.md5"] == _md5(p) for p in lessons)
    )


def _write_if_changed(path: Path, text: str) -> None:
    if path.exists() and path.read_text() == text:
        return
    tmp = path.with_suffix(path.suffix + ".tmp")
    tmp.write_text(text)
    os.replace(tmp, path)


def normalize_zips(out_dir: Path, epoch: int) -> None:
    """Give the per-lesson zip downloads fixed timestamps, so builds agree."""
    stamp = _zip_time(epoch)
    for path in sorted(out_dir.glob("*.zip")):
        buf = io.BytesIO()
        with zipfile.ZipFile(path) as src, zipfile.ZipFile(buf, "w", zipfile.ZIP_DEFLATED) as dst:
            for name in sorted(src.namelist()):
                info = zipfile.ZipInfo(name, date_time=stamp)
                info.compress_type = zipfile.ZIP_DEFLATED
                info.external_attr = 0o644 << 16
                dst.writestr(info, src.read(name))
        data = buf.getvalue()
        if path.read_bytes() != data:
            path.write_bytes(data)


def _zip_time(epoch: int) -> tuple[int, int, int, int, int, int]:
    import time

    t = time.gmtime(max(epoch, 315532800))  # zip cannot go before 1980
    return (t.tm_year, t.tm_mon, t.tm_mday, t.tm_hour, t.tm_min, t.tm_sec)


def describe_failure(src_file: str, formatted: str) -> str:
    """One error for a lesson that raised: script, line, exception."""
    rel = os.path.relpath(src_file, ROOT)
    lines = re.findall(rf'File "{re.escape(src_file)}", line (\d+)', formatted)
    where = f"{rel}:{lines[-1]}" if lines else rel
    last = formatted.strip().splitlines()[-1]
    body = "\n".join("    " + ln for ln in formatted.strip().splitlines())
    return f"error: lesson {where} raised {last}\n{body}\nReproduce it with: python {rel}"


def run(plot: bool = True, srcdir: Path = ROOT / "docs", builddir: Path = ROOT / "_build") -> int:
    """Generate the gallery (executing stale lessons if *plot*). Returns an exit code."""
    out_dir = srcdir / "lessons"
    gallery_dir = ROOT / "gallery"
    # Code objects feed sphinx-gallery's API links and backreferences, which
    # this site does not use (no intersphinx); left in place, every build
    # would spend a second linking names to nothing.
    for codeobj in out_dir.glob("*.codeobj.json"):
        codeobj.unlink()
    if plot and up_to_date(gallery_dir, out_dir):
        count = len(lessons_in(gallery_dir))
        print(f"gallery: executed 0 lesson(s) ; reused {count}")
        return 0
    # Nothing above this line imports Sphinx: a run with nothing to do is quick.
    from sphinx.application import Sphinx
    from sphinx.errors import SphinxError
    from sphinx.util.docutils import docutils_namespace, patch_docutils

    from ext.graphs import DotMissingError, require_dot

    if out_dir.exists():
        forget_incomplete(out_dir)
    if plot and stale_lessons(gallery_dir, out_dir):
        try:
            require_dot()
        except DotMissingError as exc:
            print(f"error: {exc}", file=sys.stderr)
            return 1
        # torch is imported once for the whole batch. sphinx-gallery runs a
        # full garbage collection before each lesson; freezing what exists
        # now (torch's own objects) keeps each of those from walking them all.
        import torch  # noqa: F401
        import torchviz  # noqa: F401

        gc.freeze()
    warnings = io.StringIO()
    try:
        with patch_docutils(ROOT), docutils_namespace():
            app = Sphinx(
                srcdir=srcdir,
                confdir=ROOT,
                outdir=builddir / "gallery",
                doctreedir=builddir / "gallery" / ".doctrees",
                buildername="dummy",
                confoverrides={"lessons_execute": True, "plot_gallery": str(plot)},
                status=None,
                warning=warnings,
                freshenv=True,
            )
    except SphinxError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 1
    conf = app.config.sphinx_gallery_conf
    failing = conf["failing_examples"]
    if failing:
        for src_file, formatted in sorted(failing.items()):
            print(describe_failure(src_file, formatted), file=sys.stderr)
        return 1
    if warnings.getvalue().strip():
        print(warnings.getvalue(), file=sys.stderr, end="")
        print("error: the gallery produced warnings (see above)", file=sys.stderr)
        return 1
    epoch = int(os.environ.get("SOURCE_DATE_EPOCH", "0"))
    normalize_zips(out_dir, epoch)
    for codeobj in out_dir.glob("*.codeobj.json"):
        codeobj.unlink()
    record_complete(out_dir, gallery_dir)
    executed = sorted(Path(p).name for p in conf["passing_examples"])
    reused = len(conf["stale_examples"])
    print(f"gallery: executed {len(executed)} lesson(s) {' '.join(executed)}; reused {reused}")
    return 0


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--no-plot", action="store_true", help="execute nothing")
    args = parser.parse_args(argv)
    return run(plot=not args.no_plot)


if __name__ == "__main__":
    sys.exit(main())
