"""Languages and translated words, for every edge that shows text to people (pages, CLI).

The engine (app/lab) returns codes and numbers; English source strings live at the edge
(app/ui, app/text, app/cli.py) marked with _() or N_(), are extracted by Babel into
app/i18n/locale/messages.pot, and are translated in locale/<lang>/LC_MESSAGES/messages.po.
The compiled .mo files are shipped next to them (python -m app.i18n.catalogs compile), so
installing the package is all a user needs.

A new language is: a catalog in locale/<lang>/, lessons in lessons/<lang>/ and quiz/bank.<lang>.yaml
keyed by the existing ids. No Python module lists languages; they are found on disk.
"""
from __future__ import annotations

import gettext
import string
from functools import cache, lru_cache
from pathlib import Path
from typing import Any

from app.i18n import formats
from app.i18n.marking import N_

__all__ = ["DOMAIN", "LOCALE_DIR", "N_", "SOURCE_LANGUAGE", "Words", "formats", "languages", "native_name", "parse_language", "words"]

LOCALE_DIR = Path(__file__).resolve().parent / "locale"
DOMAIN = "messages"
SOURCE_LANGUAGE = "en"  # the language of the msgids: needs no catalog


@lru_cache(maxsize=1)
def languages() -> tuple[str, ...]:
    """Languages this install can show: English plus every locale with a compiled catalog."""
    found = sorted(p.parent.parent.name for p in LOCALE_DIR.glob(f"*/LC_MESSAGES/{DOMAIN}.mo"))
    return (SOURCE_LANGUAGE, *[lang for lang in found if lang != SOURCE_LANGUAGE])


def native_name(lang: str) -> str:
    """The language's name in itself ('中文', 'English'), so a learner finds theirs in any language."""
    from babel import Locale

    try:
        return Locale.parse(lang).get_display_name(lang) or lang
    except (ValueError, LookupError):
        return lang


def parse_language(value: Any) -> str | None:
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

    def __init__(self, lang: str):
        self.lang = lang
        self._catalog = gettext.translation(DOMAIN, LOCALE_DIR, [lang], fallback=lang == SOURCE_LANGUAGE)

    def __call__(self, message: str) -> str:
        return self._catalog.gettext(message) if message else message

    def plural(self, singular: str, plural: str, n: int) -> str:
        return self._catalog.ngettext(singular, plural, n)

    def render(self, template: str, /, **values: Any) -> str:
        """Translate template, then fill it: '{n:count} of {total:count}'."""
        return _KindFormatter(self).format(self(template), **values)


class _KindFormatter(string.Formatter):
    def __init__(self, words: Words):
        self.words = words

    def format_field(self, value: Any, format_spec: str) -> str:
        kind = formats.KINDS.get(format_spec)
        if kind is not None:
            return kind(value, self.words)
        if format_spec.isidentifier():
            raise ValueError(f"unknown value kind {format_spec!r}: use one of {', '.join(formats.KINDS)}")
        return super().format_field(value, format_spec)


@cache
def words(lang: str = SOURCE_LANGUAGE) -> Words:
    """The Words of lang; a language without a catalog raises ValueError naming the ones there are."""
    if lang not in languages():
        raise ValueError(f"no language {lang!r}: choose one of {', '.join(languages())}")
    return Words(lang)


