"""One function per kind of measured value, so every sentence writes a number the same way.

Templates ask for a kind in their format spec ('{wait:ms}'); numbers are localised by Babel.
"""
from __future__ import annotations

import math
from collections.abc import Callable
from functools import cache
from typing import Any

from babel import Locale, UnknownLocaleError
from babel.numbers import format_decimal, format_percent

from app.i18n.marking import N_


def _locale(words) -> str:
    return _conventions(words.lang)


@cache
def _conventions(lang: str) -> str:
    """The locale whose number conventions lang writes with: its own where Babel knows the code,
    else the source language's, so a catalog for a code CLDR lacks (a pseudo-locale) still shows numbers."""
    try:
        Locale.parse(lang)
    except (ValueError, UnknownLocaleError):
        return "en"
    return lang


def _missing(value: Any) -> bool:
    return value is None or (isinstance(value, float) and math.isnan(value))


def count(value, words) -> str:
    """A whole number of things: 1,204."""
    if _missing(value):
        return "–"
    return format_decimal(int(value), locale=_locale(words))


def number(value, words) -> str:
    """A measured quantity without a unit, one decimal: 2.5."""
    if _missing(value):
        return "–"
    return format_decimal(round(float(value), 1), format="#,##0.0", locale=_locale(words))


def seconds(value, words) -> str:
    if _missing(value):
        return "–"
    return words.render(N_("{value} s"), value=number(value, words))


def ms(value, words) -> str:
    if _missing(value):
        return "–"
    return words.render(N_("{value} ms"), value=number(value, words))


def percent(value, words) -> str:
    """A share given as a fraction 0..1: 0.25 -> 25 %."""
    if _missing(value):
        return "–"
    return format_percent(float(value), format="#,##0.#%", locale=_locale(words))


def ratio(value, words) -> str:
    """How many times: 2.5×."""
    if _missing(value):
        return "–"
    return words.render(N_("{value}×"), value=number(value, words))


def session(value, words) -> str:
    """A session by its 0-based index, as people count them: session 3."""
    return words.render(N_("session {number}"), number=int(value) + 1)


def yes_no(value, words) -> str:
    return words(N_("yes")) if value else words(N_("no"))


def text(value, words) -> str:
    """Code, config, log and error text: shown exactly as Triton or the user wrote it."""
    return str(value)


KINDS: dict[str, Callable[[Any, Any], str]] = {
    "count": count,
    "number": number,
    "seconds": seconds,
    "ms": ms,
    "percent": percent,
    "ratio": ratio,
    "session": session,
    "yes_no": yes_no,
    "text": text,
}


def register(kind: str, write: Callable[[Any, Any], str]) -> None:
    """Add a kind whose words live above this package (the verdict words register theirs in
    app/text/verdicts.py), so formats never imports the modules that use it."""
    if KINDS.get(kind, write) is not write:
        raise ValueError(f"value kind {kind!r} is already registered")
    KINDS[kind] = write
