"""Catalogs a translator can trust, and the links between languages.

Translators edit ``locale/<lang>/LC_MESSAGES/**.po`` and nothing else. This
module checks those files before a build reads them, keeps them in step with
the sources, and reports progress:

* As a Sphinx extension, a build in a translated language first checks the
  language code and every catalog of that language (syntax, and reST markup
  that the translation must keep), then mirrors the catalogs into
  ``_build/locale``, where Sphinx compiles them. Nothing is ever written under
  ``locale/`` by a build.
* As a command, ``python -m ext.i18n`` offers ``languages`` (check codes),
  ``update-po`` (merge new templates into the catalogs, keeping every
  translation, old ones as fuzzy suggestions), ``stat``, ``check`` and
  ``landing`` (the page that sends a reader to their language).
"""

from __future__ import annotations

import argparse
import bisect
import filecmp
import os
import re
import shutil
import subprocess
import sys
import tempfile
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
SOURCE_LANGUAGE = "en"
LOCALE = ROOT / "locale"
NAMES = {"en": "English", "zh_CN": "简体中文"}


class CatalogError(Exception):
    """A problem in a catalog or a language code, with what to do about it."""


# --------------------------------------------------------------------------
# Language codes


def check_language(code: str, locale_dir: Path = LOCALE, need_catalogs: bool = True) -> None:
    """Raise :class:`CatalogError` unless *code* is a language we can build."""
    from babel import Locale, UnknownLocaleError

    try:
        Locale.parse(code)
    except (UnknownLocaleError, ValueError):
        raise CatalogError(
            f"unknown language code {code!r} in LANGUAGES: use a code such as "
            "en, zh_CN or ja (see the translators' guide)"
        ) from None
    if code == SOURCE_LANGUAGE or not need_catalogs:
        return
    if not list((locale_dir / code / "LC_MESSAGES").rglob("*.po")):
        raise CatalogError(
            f"language {code!r} has no catalogs in {_rel(locale_dir / code)}: "
            "run `make update-po` to create them"
        )


def display_name(code: str) -> str:
    from babel import Locale

    return NAMES.get(code) or Locale.parse(code).get_display_name(code) or code


# --------------------------------------------------------------------------
# Catalog checks


@dataclass(frozen=True)
class Problem:
    path: Path
    line: int
    message: str

    def __str__(self) -> str:
        return f"{_rel(self.path)}:{self.line}: {self.message}"


def msgfmt(path: Path, out: str = os.devnull) -> subprocess.CompletedProcess:
    """GNU msgfmt's verdict on *path*; the compiled catalog goes to *out*."""
    program = shutil.which("msgfmt")
    if program is None:
        raise CatalogError(
            "GNU gettext's `msgfmt` is missing; install it with: sudo apt-get install gettext"
        )
    return subprocess.run([program, "-o", out, str(path)], capture_output=True, text=True)


def load(path: Path, verdict: subprocess.CompletedProcess | None = None):
    """Parse a catalog strictly, or raise :class:`CatalogError` naming the line.

    GNU msgfmt is the reference parser (polib and Babel accept some broken
    files, such as an unterminated string), so the syntax check is its;
    *verdict* is its result when the caller has already run it.
    """
    import polib

    result = verdict or msgfmt(path)
    if result.returncode:
        lines = result.stderr.strip().splitlines()
        found = (re.match(rf"^{re.escape(str(path))}:(\d+):\s*(.*)$", ln) for ln in lines)
        m = next((m for m in found if m), None)
        line, detail = (m[1], m[2]) if m else ("?", lines[0])
        raise CatalogError(
            f"{_rel(path)}:{line}: syntax error ({detail}); fix the file and rebuild"
        )
    return polib.pofile(str(path), wrapwidth=79)


# Inline markup that a translation must carry over unchanged. For a role or a
# link with an explicit title, only the target must survive: the title is text.
_RST_TOKENS = re.compile(
    r"(?P<role>:[\w.+-]+(?::[\w.+-]+)*:`(?P<rc>[^`]+)`)"
    r"|(?P<literal>``[^`]+``)"
    r"|(?P<link>`(?P<lc>[^`]+)`__?)"
    r"|(?P<subst>\|[^|\s][^|]*\|)"
)
_MD_TOKENS = re.compile(
    r"(?P<role>\{[\w.+-]+(?::[\w.+-]+)*\}`(?P<rc>[^`]+)`)"
    r"|(?P<literal>(?P<ticks>`+)(?!`).+?(?<!`)(?P=ticks)(?!`))"
    r"|(?P<link>\]\((?P<lc>[^)]+)\))"
)


def markup_tokens(text: str, syntax: str = "rst") -> list[str]:
    """The inline markup in *text* that a translation must keep, normalised."""
    pattern = _MD_TOKENS if syntax == "md" else _RST_TOKENS
    tokens = []
    for m in pattern.finditer(text):
        token = m.group(0)
        if m["role"]:
            target = re.search(r"<([^<>]+)>$", m["rc"])
            if target and not token.startswith((":math:", "{math}")):
                token = token.split("`")[0] + "<" + target[1] + ">"
        elif m["link"] and syntax == "rst":
            target = re.search(r"<([^<>]+)>$", m["lc"])
            token = "<" + target[1] + ">" if target else token
        elif m["link"]:
            token = "(" + m["lc"] + ")"
        tokens.append(token)
    return sorted(tokens)


# One line of text that reST and MyST both read as a plain paragraph.
PLAIN = re.compile(
    r"""
    (?![\s\-*+#>|(.!?,;'"%/=~^])        # no block can start here
    (?![0-9A-Za-z]{1,5}[.)](\s|$))      # nor an enumerated list: 1. a) iv.
    [^\n\t*`_|\[\]\\<>:@#=&$~^{}+]+     # no inline markup anywhere
    (?<!\s)                             # and no trailing space
    """,
    re.VERBOSE,
)


def is_plain(text: str) -> bool:
    return PLAIN.fullmatch(text) is not None


def rst_problems(text: str) -> list[str]:
    """docutils' complaints about *text* as inline reST (roles are accepted)."""
    return rst_problems_many([text])[0]


def rst_problems_many(texts: list[str]) -> list[list[str]]:
    """docutils' complaints about each of *texts*, parsed as one document.

    One parse for a whole catalog instead of one per message: the texts are
    separated by blank lines, so each is a block of its own and inline markup
    cannot leak from one to the next. (No other separator: an empty comment
    between them, say, costs docutils a nested parser each, a third of the
    time.)
    """
    from docutils import nodes, utils
    from docutils.core import publish_doctree
    from docutils.parsers.rst import roles

    def any_role(name, rawtext, text, lineno, inliner, options=None, content=None):
        return [nodes.literal(rawtext, utils.unescape(text))], []

    chunks, starts, line = [], [], 1
    for text in texts:
        chunk = text.strip("\n")
        if chunk.endswith("::"):  # as Sphinx does: give it its literal block
            chunk += "\n\n   dummy literal"
        starts.append(line)
        chunks.append(chunk + "\n\n")
        line += chunk.count("\n") + 2
    # docutils keeps roles in a process-wide registry, which a running Sphinx
    # shares: register the stand-ins only for this parse.
    saved = dict(roles._roles)
    try:
        for name in set(re.findall(r":([\w.+-]+(?::[\w.+-]+)*):`", "".join(texts))):
            roles.register_local_role(name, any_role)
        doctree = publish_doctree(
            "".join(chunks),
            settings_overrides={"report_level": 5, "halt_level": 5, "warning_stream": False},
        )
    finally:
        roles._roles.clear()
        roles._roles.update(saved)
    found: list[list[str]] = [[] for _ in texts]
    for msg in doctree.findall(nodes.system_message):
        if msg["level"] >= 2:
            where = bisect.bisect_right(starts, msg.get("line") or 1) - 1
            found[max(where, 0)].append(" ".join(msg.astext().split()))
    return found


def source_syntax(domain: str, srcdir: Path) -> str:
    """'md' for a MyST page, else 'rst' (hand-written or generated reST)."""
    return "md" if (srcdir / f"{domain}.md").exists() else "rst"


def check_catalog(
    path: Path, domain: str, srcdir: Path, verdict: subprocess.CompletedProcess | None = None
) -> list[Problem]:
    """Every problem in one catalog: syntax first, then markup in each msgstr."""
    catalog = load(path, verdict)
    syntax = source_syntax(domain, srcdir)
    problems = []
    to_parse = []
    for entry in catalog.translated_entries():
        want = markup_tokens(entry.msgid, syntax)
        got = markup_tokens(entry.msgstr, syntax)
        if want != got:
            lost = sorted(set(want) - set(got)) or want
            problems.append(
                Problem(
                    path,
                    entry.linenum,
                    "msgstr does not keep the markup of its msgid "
                    f"({', '.join(lost)}); copy roles, literals and link targets unchanged",
                )
            )
        elif syntax == "rst" and not is_plain(entry.msgstr):  # plain text parses cleanly
            to_parse.append(entry)
    complaints = rst_problems_many([e.msgstr for e in to_parse]) if to_parse else []
    for entry, found in zip(to_parse, complaints, strict=True):
        for complaint in found:
            problems.append(Problem(path, entry.linenum, f"broken reST in msgstr: {complaint}"))
    return sorted(problems, key=lambda p: p.line)


# --------------------------------------------------------------------------
# Chinese style: the glossary and the rules of docs/translating.md

GLOSSARY = ROOT / "docs" / "glossary.md"
CJK = "[\u3400-\u9fff]"
# Known mistranslations, each with the right word.
FORBIDDEN = {
    "渐变": "gradient is 梯度",
    "坡度": "gradient is 梯度",
    "自动分级": "autograd is 自动微分",
    "转发": "forward is 前向",
    "后向传播": "backward pass is 反向传播",
}


def read_glossary(path: Path = GLOSSARY) -> dict[str, str]:
    """The glossary table of *path*: English term -> Chinese translation."""
    terms = {}
    for line in path.read_text(encoding="utf-8").splitlines():
        cells = [c.strip() for c in line.strip().strip("|").split("|")]
        if len(cells) >= 2 and cells[0] and not set(cells[0]) <= set("-: "):
            if cells[0] != "Term" and cells[1]:
                terms[cells[0]] = cells[1]
    return terms


def _without_markup(text: str, syntax: str, placeholder: str) -> str:
    pattern = _MD_TOKENS if syntax == "md" else _RST_TOKENS
    return pattern.sub(placeholder, text)


def zh_style_problems(msgid: str, msgstr: str, syntax: str, glossary: dict[str, str]) -> list[str]:
    """What a Chinese msgstr does against the rules of the translators' guide."""
    problems = []
    for bad, right in FORBIDDEN.items():
        if bad in msgstr and bad not in msgid:  # a page may quote the mistake itself
            problems.append(f"uses {bad}: {right}")
    english = _without_markup(msgid, syntax, " ")
    for term in sorted(glossary, key=len, reverse=True):
        # A term inside a dotted name (torch.autograd) is code, not prose.
        found = re.compile(rf"(?<![\w.]){re.escape(term)}(?:s|es)?(?!\w|\.\w)", re.IGNORECASE)
        if found.search(english):
            english = found.sub(" ", english)
            if glossary[term] not in msgstr:
                problems.append(f"'{term}' is translated as '{glossary[term]}' (see the glossary)")
    text = _without_markup(msgstr, syntax, "X")
    if not re.search(CJK, text):
        return problems
    if re.search(rf"{CJK}\s*[,;:!?]|[,;:!?]\s*{CJK}|{CJK}\s*\(|\)\s*{CJK}|{CJK}\.(\s|$)", text):
        problems.append("use full-width punctuation (，。：；！？（）) in Chinese sentences")
    if re.search(rf"{CJK}[A-Za-z0-9]|[A-Za-z0-9]{CJK}", text):
        problems.append("put one space between Chinese and Latin text, numbers or code")
    if re.search(r"[A-Za-z0-9] +[，。：；！？、）]|[，。：；！？、（] +[A-Za-z0-9]", text):
        problems.append("no space between full-width punctuation and Latin text")
    return problems


STYLE = {"zh_CN": zh_style_problems}


def style_problems(lang: str, srcdir: Path, locale_dir: Path = LOCALE) -> list[Problem]:
    """The language's own rules (for zh_CN: glossary, punctuation, spacing)."""
    rule = STYLE.get(lang)
    if rule is None:
        return []
    glossary = read_glossary()
    problems = []
    for domain, path in catalogs(lang, locale_dir).items():
        syntax = source_syntax(domain, srcdir)
        # The glossary page lists the English terms themselves.
        terms = {} if domain == GLOSSARY.stem else glossary
        for entry in load(path).translated_entries():
            for message in rule(entry.msgid, entry.msgstr, syntax, terms):
                problems.append(Problem(path, entry.linenum, message))
    return problems


def catalogs(lang: str, locale_dir: Path = LOCALE) -> dict[str, Path]:
    """Map each catalog domain (a docname) of *lang* to its .po file."""
    base = locale_dir / lang / "LC_MESSAGES"
    return {p.relative_to(base).with_suffix("").as_posix(): p for p in sorted(base.rglob("*.po"))}


CHECKED = ROOT / "_build" / "locale" / ".checked.json"


def check_language_catalogs(lang: str, srcdir: Path, locale_dir: Path = LOCALE) -> list[Problem]:
    """Syntax and markup problems in *lang*'s catalogs.

    A catalog that passed is remembered by its content (and by this module's
    own source), so an unchanged catalog is not parsed again by the next build.
    """
    import hashlib
    import json

    cache = CHECKED if locale_dir == LOCALE else None
    checker = hashlib.sha256(Path(__file__).read_bytes()).hexdigest()
    try:
        known = json.loads(cache.read_text()) if cache else {}
    except (OSError, ValueError):
        known = {}
    passed = known.get("files", {}) if known.get("checker") == checker else {}
    todo = {}
    for domain, path in catalogs(lang, locale_dir).items():
        digest = hashlib.sha256(path.read_bytes()).hexdigest()
        key = str(path.relative_to(locale_dir))
        if passed.get(key) != digest:
            todo[domain] = (path, key, digest)
    # msgfmt runs as a process per catalog: start them all at once.
    with ThreadPoolExecutor(max_workers=8) as pool:
        verdicts = list(pool.map(msgfmt, [path for path, _, _ in todo.values()]))
    problems = []
    for (domain, (path, key, digest)), verdict in zip(todo.items(), verdicts, strict=True):
        found = check_catalog(path, domain, srcdir, verdict)
        problems += found
        if not found:
            passed[key] = digest
    if cache:
        cache.parent.mkdir(parents=True, exist_ok=True)
        tmp = cache.with_suffix(f".{os.getpid()}.tmp")
        tmp.write_text(json.dumps({"checker": checker, "files": passed}, sort_keys=True, indent=1))
        os.replace(tmp, cache)
    return problems


def mirror(lang: str, target: Path, locale_dir: Path = LOCALE) -> None:
    """Copy *lang*'s catalogs into *target*, touching only those that changed."""
    base = locale_dir / lang / "LC_MESSAGES"
    dest_base = target / lang / "LC_MESSAGES"
    wanted = set()
    for path in sorted(base.rglob("*.po")):
        dest = dest_base / path.relative_to(base)
        wanted.add(dest)
        if dest.exists() and filecmp.cmp(path, dest, shallow=False):
            continue
        dest.parent.mkdir(parents=True, exist_ok=True)
        shutil.copy2(path, dest)
    for stale in dest_base.rglob("*.[mp]o") if dest_base.exists() else []:
        if stale.with_suffix(".po") not in wanted:
            stale.unlink()


BUILD_LOCALE = ROOT / "_build" / "locale"  # conf.py's locale_dirs


def compile_catalogs(lang: str, target: Path = BUILD_LOCALE, locale_dir: Path = LOCALE) -> None:
    """Mirror *lang*'s checked catalogs and compile each changed one with msgfmt.

    Sphinx compiles a catalog whose .mo is older than its .po, in its main
    process before it reads a page; done here, by the check that runs beside
    Sphinx's start-up (ext/build.py), that time is off the build's path. GNU
    msgfmt and Babel (Sphinx's compiler) leave out the same entries
    (untranslated, fuzzy, obsolete); tests/test_fast_paths.py compares them.
    """
    mirror(lang, target, locale_dir)
    stale = []
    for po in sorted((target / lang / "LC_MESSAGES").rglob("*.po")):
        mo = po.with_suffix(".mo")
        if not mo.exists() or mo.stat().st_mtime_ns < po.stat().st_mtime_ns:
            stale.append((po, mo))

    def compile_one(paths: tuple[Path, Path]) -> None:
        po, mo = paths
        tmp = mo.with_name(f"{mo.name}.{os.getpid()}.tmp")
        msgfmt(po, str(tmp)).check_returncode()
        os.replace(tmp, mo)

    with ThreadPoolExecutor(max_workers=8) as pool:
        list(pool.map(compile_one, stale))


# --------------------------------------------------------------------------
# Sphinx side


def on_config_inited(app, config) -> None:
    from sphinx.errors import ConfigError

    lang = config.language
    if lang == SOURCE_LANGUAGE:
        return
    try:
        check_language(lang)
        problems = check_language_catalogs(lang, Path(app.srcdir))
    except CatalogError as exc:
        raise ConfigError(str(exc)) from None
    if problems:
        raise ConfigError(
            "the catalogs have problems; nothing was built:\n"
            + "\n".join(f"  {p}" for p in problems)
        )
    mirror(lang, (Path(app.srcdir) / config.locale_dirs[0]).resolve())


def glossary_words(path: Path = GLOSSARY) -> list[str]:
    """The Chinese words of the glossary (translations and the words in notes)."""
    words = set()
    for line in path.read_text(encoding="utf-8").splitlines():
        cells = line.strip().strip("|").split("|")
        if len(cells) >= 3:
            words.update(re.findall(rf"{CJK}{{2,}}", cells[1] + " " + cells[2]))
    return sorted(words)


def site_languages(config) -> list[str]:
    """The languages this site is built in: -D site_languages, else locale/."""
    if config.site_languages:
        return list(config.site_languages)
    found = sorted(p.parent.name for p in LOCALE.glob("*/LC_MESSAGES"))
    return [SOURCE_LANGUAGE, *[code for code in found if code != SOURCE_LANGUAGE]]


def hreflang(code: str) -> str:
    return code.replace("_", "-")


LANGUAGE_LABEL = {"en": "Language", "zh_CN": "语言"}


def language_links(pagename: str, current: str, langs: list[str]) -> list[dict]:
    """Links to *pagename* in every language, relative to that page."""
    up = "../" * (pagename.count("/") + 1)
    return [
        {
            "code": code,
            "hreflang": hreflang(code),
            "name": display_name(code),
            "url": f"{up}{code}/{pagename}.html",
            "current": code == current,
        }
        for code in langs
    ]


def on_html_page_context(app, pagename, templatename, context, doctree) -> None:
    links = language_links(pagename, app.config.language, site_languages(app.config))
    context["language_links"] = links
    context["language_label"] = LANGUAGE_LABEL.get(app.config.language, "Language")
    alternates = "".join(
        f'<link rel="alternate" hreflang="{link["hreflang"]}" href="{link["url"]}">\n'
        for link in links
    )
    default = links[0]["url"]
    alternates += f'<link rel="alternate" hreflang="x-default" href="{default}">\n'
    context["metatags"] = context.get("metatags", "") + alternates


def setup(app):
    app.add_config_value("site_languages", [], "html", types=[list])
    app.connect("config-inited", on_config_inited)
    app.connect("html-page-context", on_html_page_context)
    return {"parallel_read_safe": True, "parallel_write_safe": True}


# --------------------------------------------------------------------------
# update-po


def _without_creation_date(text: str) -> str:
    return re.sub(r'^"POT-Creation-Date: .*\\n"\n', "", text, flags=re.M)


def _new_catalog(pot: Path, lang: str, out: Path) -> None:
    import polib
    from babel import Locale
    from babel.messages.plurals import get_plural

    catalog = polib.pofile(str(pot), wrapwidth=79)
    catalog.header = (
        f"{display_name(lang)} ({lang}) translation of this page.\n"
        "Edit the msgstr lines only; see the translators' guide."
    )
    catalog.metadata_is_fuzzy = False
    plural = get_plural(Locale.parse(lang))
    catalog.metadata.update(
        {
            "Language": lang,
            "Language-Team": f"{display_name(lang)} <LL@li.org>",
            "Plural-Forms": f"nplurals={plural.num_plurals}; plural={plural.plural_expr};",
        }
    )
    catalog.save(str(out))


def powrap(paths: list[Path], check: bool = False) -> subprocess.CompletedProcess:
    cmd = [sys.executable, "-m", "powrap", "--quiet"] + (["--check"] if check else [])
    return subprocess.run(cmd + [str(p) for p in paths], capture_output=True, text=True)


def update_po(pot_dir: Path, langs: list[str], locale_dir: Path = LOCALE) -> dict[str, int]:
    """Merge the templates in *pot_dir* into each language's catalogs.

    Translations are never dropped: a message whose English changed keeps its
    old translation as a fuzzy suggestion with the previous msgid (``#|``), and
    a message that left the sources stays in the file as obsolete (``#~``).
    A catalog whose messages did not change is left untouched, byte for byte.
    """
    counts = {"created": 0, "updated": 0, "unchanged": 0}
    pots = sorted(pot_dir.rglob("*.pot"))
    if not pots:
        raise CatalogError(f"no templates in {_rel(pot_dir)}: run `make gettext` first")
    with tempfile.TemporaryDirectory() as tmp:
        for lang in langs:
            check_language(lang, locale_dir, need_catalogs=False)
            for pot in pots:
                rel = pot.relative_to(pot_dir).with_suffix(".po")
                po = locale_dir / lang / "LC_MESSAGES" / rel
                out = Path(tmp) / lang / rel
                out.parent.mkdir(parents=True, exist_ok=True)
                if po.exists():
                    load(po)  # refuse to merge into a broken file
                    subprocess.run(
                        [
                            "msgmerge",
                            "--quiet",
                            "--previous",
                            f"--lang={lang}",
                            "-o",
                            str(out),
                            str(po),
                            str(pot),
                        ],
                        check=True,
                    )
                else:
                    _new_catalog(pot, lang, out)
                result = powrap([out])
                if result.returncode:
                    raise CatalogError(f"powrap failed on {rel}: {result.stderr}")
                new = out.read_text(encoding="utf-8")
                if po.exists():
                    old = po.read_text(encoding="utf-8")
                    if _without_creation_date(old) == _without_creation_date(new):
                        counts["unchanged"] += 1
                        continue
                    counts["updated"] += 1
                    print(f"updated {_rel(po)}")
                else:
                    counts["created"] += 1
                    print(f"created {_rel(po)}")
                po.parent.mkdir(parents=True, exist_ok=True)
                shutil.copyfile(out, po)
            known = {p.relative_to(pot_dir).with_suffix("").as_posix() for p in pots}
            for domain, path in catalogs(lang, locale_dir).items():
                if domain not in known:
                    print(f"kept {_rel(path)}: its page is gone; delete it by hand if unwanted")
    return counts


# --------------------------------------------------------------------------
# stat and check


def stat(langs: list[str], locale_dir: Path = LOCALE) -> list[dict]:
    rows = []
    for lang in langs:
        for domain, path in catalogs(lang, locale_dir).items():
            catalog = load(path)
            translated = len(catalog.translated_entries())
            fuzzy = len(catalog.fuzzy_entries())
            untranslated = len(catalog.untranslated_entries())
            total = translated + fuzzy + untranslated
            rows.append(
                {
                    "language": lang,
                    "catalog": domain,
                    "translated": translated,
                    "fuzzy": fuzzy,
                    "untranslated": untranslated,
                    "percent": 100.0 * translated / total if total else 100.0,
                }
            )
    return rows


def print_stat(rows: list[dict]) -> None:
    width = max([len(r["catalog"]) for r in rows] + [7])
    print(f"{'lang':6} {'catalog':{width}}  {'done':>6}  {'transl.':>7} {'fuzzy':>5} {'untr.':>5}")
    for r in rows:
        print(
            f"{r['language']:6} {r['catalog']:{width}}  {r['percent']:5.1f}%"
            f"  {r['translated']:7} {r['fuzzy']:5} {r['untranslated']:5}"
        )
    for lang in sorted({r["language"] for r in rows}):
        mine = [r for r in rows if r["language"] == lang]
        done = sum(r["translated"] for r in mine)
        total = sum(r["translated"] + r["fuzzy"] + r["untranslated"] for r in mine)
        fuzzy = sum(r["fuzzy"] for r in mine)
        pct = 100.0 * done / total if total else 100.0
        print(f"{lang}: {pct:.1f} % translated, {fuzzy} fuzzy, {total - done - fuzzy} untranslated")


def check(langs: list[str], srcdir: Path = ROOT / "docs", locale_dir: Path = LOCALE) -> list[str]:
    """Every problem in the catalogs of *langs*, as lines naming file and line."""
    errors: list[str] = []
    for lang in langs:
        try:
            check_language(lang, locale_dir)
        except CatalogError as exc:
            errors.append(str(exc))
            continue
        paths = list(catalogs(lang, locale_dir).values())
        for path in paths:
            result = subprocess.run(
                ["msgfmt", "--check", "-o", os.devnull, str(path)],
                capture_output=True,
                text=True,
            )
            if result.returncode:
                errors.append(result.stderr.strip())
        try:
            errors += [str(p) for p in check_language_catalogs(lang, srcdir, locale_dir)]
        except CatalogError as exc:
            errors.append(str(exc))
            continue
        errors += [str(p) for p in style_problems(lang, srcdir, locale_dir)]
        for row in stat([lang], locale_dir):
            if row["fuzzy"] or row["untranslated"]:
                errors.append(
                    f"{_rel(locale_dir / lang / 'LC_MESSAGES' / row['catalog'])}.po: "
                    f"{row['untranslated']} untranslated and {row['fuzzy']} fuzzy "
                    "entries; translate them and remove the fuzzy flags"
                )
        wrapped = powrap(paths, check=True)
        if wrapped.returncode:
            errors.append(
                "not wrapped by powrap: "
                + " ".join(wrapped.stdout.split())
                + " (run `make wrap` to fix)"
            )
    return errors


# --------------------------------------------------------------------------
# The landing page


def landing_page(langs: list[str]) -> str:
    """The root index.html: the reader's language if we have it, else English."""
    import html
    import json

    links = "\n".join(
        f'      <li><a href="{c}/index.html" hreflang="{c.replace("_", "-")}" '
        f'lang="{c.replace("_", "-")}">{html.escape(display_name(c))}</a></li>'
        for c in langs
    )
    alternates = "\n".join(
        f'  <link rel="alternate" hreflang="{c.replace("_", "-")}" href="{c}/index.html">'
        for c in langs
    )
    codes = json.dumps(langs)
    return f"""<!DOCTYPE html>
<html lang="en">
<head>
  <meta charset="utf-8">
  <meta name="viewport" content="width=device-width, initial-scale=1">
  <title>Double backward in PyTorch · 二阶反向传播</title>
{alternates}
  <link rel="alternate" hreflang="x-default" href="{langs[0]}/index.html">
  <script>
  (function () {{
    var codes = {codes};
    var wanted = navigator.languages || [navigator.language || ""];
    function pick() {{
      for (var i = 0; i < wanted.length; i++) {{
        var w = String(wanted[i]).toLowerCase().replace("_", "-");
        for (var j = 0; j < codes.length; j++) {{
          var c = codes[j].toLowerCase().replace("_", "-");
          if (w === c) return codes[j];
        }}
        for (var k = 0; k < codes.length; k++) {{
          if (w.split("-")[0] === codes[k].toLowerCase().split("_")[0]) return codes[k];
        }}
      }}
      return codes[0];
    }}
    location.replace(pick() + "/index.html" + location.hash);
  }})();
  </script>
  <style>
    body {{ font-family: system-ui, sans-serif; max-width: 36rem; margin: 4rem auto; padding: 0 1rem; }}
    a {{ font-size: 1.25rem; }}
  </style>
</head>
<body>
  <main>
    <h1>Double backward in PyTorch</h1>
    <p>Choose a language · 选择语言:</p>
    <ul>
{links}
    </ul>
  </main>
</body>
</html>
"""


# --------------------------------------------------------------------------


def _rel(path: Path) -> str:
    try:
        return str(Path(path).resolve().relative_to(ROOT))
    except ValueError:
        return str(path)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m ext.i18n", description=__doc__.splitlines()[0])
    sub = parser.add_subparsers(dest="cmd", required=True)
    p = sub.add_parser("languages", help="check language codes")
    p.add_argument("langs", nargs="+")
    p = sub.add_parser(
        "validate", help="check what a build needs (syntax, markup), then compile the catalogs"
    )
    p.add_argument("langs", nargs="+")
    p = sub.add_parser("update-po", help="merge templates into catalogs")
    p.add_argument("--pot", type=Path, default=ROOT / "_build" / "gettext")
    p.add_argument("langs", nargs="+")
    p = sub.add_parser("stat", help="translation progress per catalog")
    p.add_argument("langs", nargs="+")
    p = sub.add_parser("check", help="syntax, markup, completeness and wrapping")
    p.add_argument("langs", nargs="+")
    p = sub.add_parser("landing", help="write the language landing page")
    p.add_argument("--out", type=Path, required=True)
    p.add_argument("langs", nargs="+")
    args = parser.parse_args(argv)
    try:
        if args.cmd == "languages":
            for code in args.langs:
                check_language(code, need_catalogs=False)
        elif args.cmd == "validate":
            problems = []
            for lang in args.langs:
                check_language(lang)
                problems += check_language_catalogs(lang, ROOT / "docs")
            for problem in problems:
                print(f"error: {problem}", file=sys.stderr)
            if problems:
                return 1
            for lang in args.langs:
                compile_catalogs(lang)
        elif args.cmd == "update-po":
            counts = update_po(args.pot, args.langs)
            print(", ".join(f"{v} {k}" for k, v in counts.items()))
        elif args.cmd == "stat":
            print_stat(stat(args.langs))
        elif args.cmd == "check":
            errors = check(args.langs)
            for line in errors:
                print(f"error: {line}", file=sys.stderr)
            return 1 if errors else 0
        elif args.cmd == "landing":
            args.out.parent.mkdir(parents=True, exist_ok=True)
            args.out.write_text(landing_page(args.langs), encoding="utf-8")
    except CatalogError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
