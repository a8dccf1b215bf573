"""Counted nouns as value kinds: '{n:sessions}' writes "1 session" or "16 sessions" ("16 个会话").

Each noun is one plural message of the catalog, read through Words.plural (gettext's ngettext),
so the language's own plural rule (the catalog's Plural-Forms) picks the form. A sentence that
counts several things names a kind per count ('{n:sessions} in flight on {capacity:slots}'),
each noun agreeing with its own number, which one whole-sentence plural could not do.
Importing any words module registers them (app/text/__init__.py).
"""
from __future__ import annotations

import math

from app.i18n import Words, formats
from app.i18n.formats import Measure


def _n(value: Measure) -> int:
    """The number the plural rule reads; a missing one reads as "many" (the dash stands for it)."""
    return 2 if value is None or (isinstance(value, float) and math.isnan(value)) else int(value)


def _counted(template: str, value: Measure, words: Words) -> str:
    return template.format(n=formats.count(value, words))


def sessions(value: Measure, words: Words) -> str:
    return _counted(words.plural("{n} session", "{n} sessions", _n(value)), value, words)


def steps(value: Measure, words: Words) -> str:
    return _counted(words.plural("{n} step", "{n} steps", _n(value)), value, words)


def requests(value: Measure, words: Words) -> str:
    return _counted(words.plural("{n} request", "{n} requests", _n(value)), value, words)


def slots(value: Measure, words: Words) -> str:
    return _counted(words.plural("{n} slot", "{n} slots", _n(value)), value, words)


def sequences(value: Measure, words: Words) -> str:
    return _counted(words.plural("{n} sequence", "{n} sequences", _n(value)), value, words)


def instances(value: Measure, words: Words) -> str:
    return _counted(words.plural("{n} instance", "{n} instances", _n(value)), value, words)


def ids(value: Measure, words: Words) -> str:
    """Correlation IDs."""
    return _counted(words.plural("{n} ID", "{n} IDs", _n(value)), value, words)


def findings(value: Measure, words: Words) -> str:
    return _counted(words.plural("{n} finding", "{n} findings", _n(value)), value, words)


def elements(value: Measure, words: Words) -> str:
    """Tensor elements."""
    return _counted(words.plural("{n} element", "{n} elements", _n(value)), value, words)


def replies(value: Measure, words: Words) -> str:
    """A model's answers to requests."""
    return _counted(words.plural("{n} reply", "{n} replies", _n(value)), value, words)


def streams(value: Measure, words: Words) -> str:
    """A data file's streams (one per sequence)."""
    return _counted(words.plural("{n} stream", "{n} streams", _n(value)), value, words)


def runs(value: Measure, words: Words) -> str:
    return _counted(words.plural("{n} run", "{n} runs", _n(value)), value, words)


KINDS = {"sessions": sessions, "steps": steps, "requests": requests, "slots": slots, "sequences": sequences,
         "instances": instances, "ids": ids, "findings": findings, "elements": elements, "replies": replies,
         "streams": streams, "runs": runs}
for _kind, _write in KINDS.items():
    formats.register(_kind, _write)
