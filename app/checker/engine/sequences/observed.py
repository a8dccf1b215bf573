"""The replies that differed from their references, kept during measurement for the diagnosis.

measure.py compares each reply with its reference as it arrives and keeps only the size of the
difference; the diagnosis (app/checker/engine/sequences/diagnosis.py) needs the arrays themselves, to hold
replayed hypotheses against them. Only replies that may be beyond the tolerance are kept: any
compared output that differs from its reference by more than the smallest tolerance the
judgement can derive (0 for exact outputs; a float output's datatype FLOOR, or the user's
tolerance when it is smaller). A reply not kept is within tolerance, so its reference stands
for it. Memory is capped: past KEEP_BYTES the request is only named in `unkept`, and the
diagnosis leaves its session alone.
"""
from __future__ import annotations

import threading

import numpy as np

from app.checker.engine import compare
from app.checker.engine.aliases import Arrays, Row
from app.checker.engine.facts import TensorSpec

KEEP_BYTES = 64 << 20  # of reply arrays kept per check


def kept_above(datatype: str, user_tolerance: float | None) -> float:
    """The difference above which a reply is kept: below it, no tolerance the judge derives is passed."""
    if not compare.is_float(datatype):
        return 0.0
    floor = compare.FLOOR[datatype]
    return floor if user_tolerance is None else min(floor, float(user_tolerance))


class Observations:
    """request_id -> {output: array} for replies that differed; thread-safe (sessions reply on many threads)."""

    def __init__(self, compared: list[TensorSpec], user_tolerance: float | None):
        self.limits = {s.name: kept_above(s.datatype, user_tolerance) for s in compared}
        self.arrays: dict[str, Arrays] = {}
        self.unkept: set[str] = set()
        self._bytes = 0
        self._lock = threading.Lock()

    def keep(self, row: Row, got: Arrays) -> None:
        """Keep `got` when a compared output of the row differs beyond what any tolerance allows."""
        if not any(_beyond(row.get(f"diff.{name}"), limit) for name, limit in self.limits.items()):
            return
        kept = {name: got[name] for name in self.limits if name in got}
        size = sum(np.asarray(a).nbytes for a in kept.values())
        with self._lock:
            if self._bytes + size > KEEP_BYTES:
                self.unkept.add(row["request_id"])
                return
            self._bytes += size
            self.arrays[row["request_id"]] = kept


def _beyond(diff: float | None, limit: float) -> bool:
    return diff is not None and not (isinstance(diff, float) and np.isnan(diff)) and diff > limit
