"""One function per kind of measured value, so every sentence writes a number the same way.

Templates ask for a kind in their format spec ('{wait:ms}'); numbers are localised by Babel.
"""
from __future__ import annotations

import math
from collections.abc import Callable
from functools import cache
from typing import TYPE_CHECKING, Any, Protocol

from babel import Locale, UnknownLocaleError
from babel.numbers import format_decimal, format_percent

from app.i18n.marking import N_

if TYPE_CHECKING:
    from app.i18n import Words


class Numeric(Protocol):
    """A measured number: int, float, bool, or a numpy scalar (what a pandas cell holds)."""

    def __int__(self) -> int: ...

    def __float__(self) -> float: ...


Measure = Numeric | None  # None (or NaN) is written as a dash

# How a kind writes a value in a language. A template's value is whatever its caller passed (render(**values)):
# each kind takes the types it can write, so the table of kinds can only say Any.
Write = Callable[[Any, "Words"], str]


def _locale(words: Words) -> str:
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


def _nan(value: Numeric) -> bool:
    return isinstance(value, float) and math.isnan(value)


def count(value: Measure, words: Words) -> str:
    """A whole number of things: 1,204."""
    if value is None or _nan(value):
        return "–"
    return str(format_decimal(int(value), locale=_locale(words)))


def number(value: Measure, words: Words) -> str:
    """A measured quantity without a unit, one decimal: 2.5."""
    if value is None or _nan(value):
        return "–"
    return str(format_decimal(round(float(value), 1), format="#,##0.0", locale=_locale(words)))


def seconds(value: Measure, words: Words) -> str:
    if value is None or _nan(value):
        return "–"
    return words.render(N_("{value} s"), value=number(value, words))


def ms(value: Measure, words: Words) -> str:
    if value is None or _nan(value):
        return "–"
    return words.render(N_("{value} ms"), value=number(value, words))


def percent(value: Measure, words: Words) -> str:
    """A share given as a fraction 0..1: 0.25 -> 25 %."""
    if value is None or _nan(value):
        return "–"
    return str(format_percent(float(value), format="#,##0.#%", locale=_locale(words)))


def ratio(value: Measure, words: Words) -> str:
    """How many times: 2.5×."""
    if value is None or _nan(value):
        return "–"
    return words.render(N_("{value}×"), value=number(value, words))


def session(value: Numeric, words: Words) -> str:
    """A session by its 0-based index, as people count them: session 3."""
    return words.render(N_("session {number}"), number=int(value) + 1)


def yes_no(value: object, words: Words) -> str:
    return words(N_("yes")) if value else words(N_("no"))


def text(value: object, words: Words) -> str:
    """Code, config, log and error text: shown exactly as Triton or the user wrote it."""
    return str(value)


KINDS: dict[str, Write] = {
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


def register(kind: str, write: Write) -> None:
    """Add a kind whose words live above this package (the verdict words register theirs in
    app/text/verdicts.py), so formats never imports the modules that use it."""
    if KINDS.get(kind, write) is not write:
        raise ValueError(f"value kind {kind!r} is already registered")
    KINDS[kind] = write
