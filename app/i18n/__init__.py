"""Languages and translated words, for every edge that shows text to people (pages, CLI).

The engine (app/lab) returns codes and numbers; English source strings live at the edge
(app/ui, app/text, app/cli.py) marked with _() or N_(), are extracted by Babel into
app/i18n/locale/messages.pot, and are translated in locale/<lang>/LC_MESSAGES/messages.po.
The compiled .mo files are shipped next to them (python -m app.i18n.catalogs compile), so
installing the package is all a user needs.

A new language is: a catalog in locale/<lang>/, lessons in lessons/<lang>/ and quiz/bank.<lang>.yaml
keyed by the existing ids. No Python module lists languages; they are found on disk.

A language can also come as a pack outside the install: TRITON_LAB_LOCALES names folders (separated
by os.pathsep) each holding <lang>/LC_MESSAGES/messages.mo, <lang>/lessons/, <lang>/bank.yaml and
<lang>/glossary.yaml (term id -> word), so a translator tries a language without touching the tree.
"""
from __future__ import annotations

import gettext
import os
import string
from collections.abc import Callable
from functools import cache, lru_cache
from pathlib import Path

from app.i18n import formats
from app.i18n.marking import N_

__all__ = ["DOMAIN", "LOCALES_ENV", "LOCALE_DIR", "N_", "SOURCE_LANGUAGE", "Translate", "Words", "formats", "language_pack", "languages",
           "native_name", "parse_language", "words"]

LOCALE_DIR = Path(__file__).resolve().parent / "locale"
DOMAIN = "messages"
SOURCE_LANGUAGE = "en"  # the language of the msgids: needs no catalog
LOCALES_ENV = "TRITON_LAB_LOCALES"
# What figures and word functions take to say a string in the reader's language: a Words, or str for English.
Say = Callable[[str], str]

# What a figure or summary builder takes as `_`: a Words, or `str` itself for English as written.
Translate = Callable[[str], str]


def _catalogs(root: Path) -> dict[str, Path]:
    return {p.parent.parent.name: root for p in sorted(root.glob(f"*/LC_MESSAGES/{DOMAIN}.mo"))}


@lru_cache(maxsize=8)
def _found(packs: str) -> dict[str, Path]:
    """Language -> the folder holding its catalog; the install's own win over a pack's."""
    found: dict[str, Path] = {}
    for root in reversed([Path(p) for p in packs.split(os.pathsep) if p]):
        found.update(_catalogs(root))
    found.update(_catalogs(LOCALE_DIR))
    found.pop(SOURCE_LANGUAGE, None)
    return found


def _locale_dirs() -> dict[str, Path]:
    # Keyed by the variable's value, so a pack named after import (a test, a shell) is found.
    return _found(os.environ.get(LOCALES_ENV, ""))


def languages() -> tuple[str, ...]:
    """Languages this install can show: English plus every locale with a compiled catalog."""
    return (SOURCE_LANGUAGE, *sorted(_locale_dirs()))


def language_pack(lang: str) -> Path | None:
    """The folder of lang's pack (TRITON_LAB_LOCALES), or None for English and the install's own languages."""
    root = _locale_dirs().get(lang)
    return None if root is None or root == LOCALE_DIR else root / lang


def native_name(lang: str) -> str:
    """The language's name in itself ('中文', 'English'), so a learner finds theirs in any language."""
    from babel import Locale, UnknownLocaleError

    try:
        return Locale.parse(lang).get_display_name(lang) or lang
    except (ValueError, LookupError, UnknownLocaleError):  # a code CLDR lacks names itself
        return lang


def parse_language(value: object) -> str | None:
    """'zh', 'zh-CN', 'zh_Hans_CN' -> 'zh' when it is a language we have; otherwise None."""
    if not isinstance(value, str) or not value.strip():
        return None
    base = value.strip().replace("_", "-").split("-")[0].lower()
    return base if base in languages() else None


class Words:
    """One language's words: call it to translate a msgid; render() fills a template.

    Templates name each value's kind in the format spec, '{wait:seconds}', so a measured value
    is written by one function per kind (app/i18n/formats.py) in every sentence that shows it.
    """

    def __init__(self, lang: str, localedir: Path = LOCALE_DIR):
        self.lang = lang
        self._catalog = gettext.translation(DOMAIN, localedir, [lang], fallback=lang == SOURCE_LANGUAGE)

    def __call__(self, message: str) -> str:
        return self._catalog.gettext(message) if message else message

    def plural(self, singular: str, plural: str, n: int) -> str:
        return self._catalog.ngettext(singular, plural, n)

    def render(self, template: str, /, **values: object) -> str:
        """Translate template, then fill it: '{n:count} of {total:count}'."""
        return _KindFormatter(self).format(self(template), **values)


class _KindFormatter(string.Formatter):
    def __init__(self, words: Words):
        self.words = words

    def format_field(self, value: object, format_spec: str) -> str:
        kind = formats.KINDS.get(format_spec)
        if kind is not None:
            return kind(value, self.words)
        if format_spec.isidentifier():
            raise ValueError(f"unknown value kind {format_spec!r}: use one of {', '.join(formats.KINDS)}")
        return str(super().format_field(value, format_spec))


def words(lang: str = SOURCE_LANGUAGE) -> Words:
    """The Words of lang; a language without a catalog raises ValueError naming the ones there are."""
    if lang not in languages():
        raise ValueError(f"no language {lang!r}: choose one of {', '.join(languages())}")
    return _words(lang, _locale_dirs().get(lang, LOCALE_DIR))


@cache
def _words(lang: str, localedir: Path) -> Words:
    return Words(lang, localedir)


