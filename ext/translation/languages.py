"""The site's languages: which codes we can build, and their names.

The Makefile lists the languages once (``LANGUAGES``) and checks them before
anything is built (``python -m tools.site check``). An unknown code stops the build with one error naming it. The first language
is the source language; every other one needs its catalogs in
``locale/<code>/LC_MESSAGES/``.
"""

from __future__ import annotations

from pathlib import Path

from ext import ROOT

SOURCE_LANGUAGE = "en"
LOCALE = ROOT / "locale"
NAMES = {"en": "English", "zh_CN": "简体中文"}


class LanguageError(Exception):
    """A language we cannot build, with what to do about it."""


def check_language(code: str, locale_dir: Path = LOCALE, need_catalogs: bool = True) -> None:
    """Raise :class:`LanguageError` unless *code* is a language we can build."""
    from babel import Locale, UnknownLocaleError

    try:
        Locale.parse(code)
    except (UnknownLocaleError, ValueError):
        raise LanguageError(
            f"unknown language code {code!r} in LANGUAGES: use a code such as "
            "en, zh_CN or ja (see the translators' guide)"
        ) from None
    if code == SOURCE_LANGUAGE or not need_catalogs:
        return
    if not list((locale_dir / code / "LC_MESSAGES").rglob("*.po")):
        raise LanguageError(
            f"language {code!r} has no catalogs in {rel(locale_dir / code)}: "
            "run `make update-po` to create them"
        )


def display_name(code: str) -> str:
    """The language's name in itself: 简体中文, English, 日本語."""
    from babel import Locale

    return NAMES.get(code) or Locale.parse(code).get_display_name(code) or code


def hreflang(code: str) -> str:
    """The code as HTML writes it: zh_CN -> zh-CN."""
    return code.replace("_", "-")


def rel(path: Path) -> str:
    """*path* relative to the project, for messages."""
    try:
        return str(Path(path).resolve().relative_to(ROOT))
    except ValueError:
        return str(path)
