"""Correlation IDs that are never reused: a random 31-bit prefix per process plus a counter.

Two runs, two learners or two app processes on one server therefore never share an ID, and
the same numbers double as the SESSION tags the recogniser records as state owners.
"""
from __future__ import annotations

import itertools
import secrets
import threading

_prefix = secrets.randbits(31) + 1
_counter = itertools.count(1)
_lock = threading.Lock()


def unique_ids(count: int) -> list[int]:
    with _lock:
        return [(_prefix << 32) | next(_counter) for _ in range(count)]
