"""The interleaved run's start, ordered so that its backlog forms by construction.

Sessions started together on threads do not open together: on a loaded two-core machine the
first ones finished before the last had sent anything, at most 13 sequences were open on 16
slots, and the check was not exercised (seen in CI). So the run starts in three moves:

1. holders (as many as there are slots, each with a step after its first) send their first
   step and, once answered, keep their slots and wait;
2. when every holder is in, the latecomers send their first steps, which can only wait in the
   backlog (Triton frees a slot on END or at the idle timeout, and every slot is held);
3. the holders go on once Triton's metrics count the latecomers' requests as pending
   (witness.PENDING, nv_inference_pending_request_count: the backlog as the server sees it), or after HOLD_S,
   whichever comes first.

No hold lasts longer than a quarter of the idle timeout, so the reaper never frees a holder's
slot (a holder's next step would then be refused as an unknown sequence). The highest pending
count seen is the witness's server side (witness.backlog); without a metrics endpoint the
client's clock alone decides. Sessions past the pool's width start as their threads free, as before.
"""
from __future__ import annotations

import threading
import time
from collections.abc import Callable
from typing import TYPE_CHECKING

from app.checker.engine import witness
from app.checker.engine.aliases import Row

if TYPE_CHECKING:
    from app.checker.engine.sequences.measurement import Sequence

HOLD_S = 5.0  # the longest a holder waits for the backlog, before the idle timeout's quarter applies
POLL_S = 0.02


class BacklogGate:
    """Holds the holders until the latecomers wait in the backlog; `pending_peak` is what the
    metrics showed (None: never read)."""

    def __init__(self, holders: set[int], latecomers: set[int], hold_s: float, metrics_url: str | None, model: str):
        self.holders, self.latecomers = holders, latecomers
        self.hold_s = hold_s
        self.metrics_url, self.model = metrics_url, model
        self.full = threading.Event()  # every holder has its slot (or gave up trying)
        self.backlogged = threading.Event()  # the latecomers wait in the backlog (or the hold ran out)
        self._lock = threading.Lock()
        self._in = 0
        self._sent = 0
        self.pending_peak: float | None = None

    @classmethod
    def plan(cls, sequences: list[Sequence], capacity: int, idle_s: float, metrics_url: str | None, model: str) -> BacklogGate | None:
        """A gate for the sequences the pool starts together (their .number and .sends), or None
        where no backlog can form that way: fewer of them than slots plus one, or too few able to hold."""
        can_hold = [c.number for c in sequences if c.sends >= 2]
        if capacity < 1 or len(can_hold) < capacity or len(sequences) <= capacity:
            return None
        holders = set(can_hold[:capacity])
        latecomers = {c.number for c in sequences} - holders
        return cls(holders, latecomers, min(HOLD_S, idle_s / 4), metrics_url, model)

    # -- the sessions' side ------------------------------------------------------------------
    def before_first(self, number: int) -> None:
        """A latecomer waits until every holder is in, then counts itself as sent."""
        if number in self.latecomers:
            self.full.wait(timeout=self.hold_s * 2)
            with self._lock:
                self._sent += 1

    def on_reply(self, number: int) -> Callable[[int, Row], None] | None:
        if number not in self.holders:
            return None

        def reply(k: int, row: Row) -> None:
            if k == 0 or row["error"]:
                self._holder_done()
        return reply

    def pause(self, number: int, normal: Callable[[int], float]) -> Callable[[int], float]:
        """A holder's gap before its second step starts with the wait for the backlog."""
        if number not in self.holders:
            return normal

        def pause(k: int) -> float:
            if k == 1:
                self.backlogged.wait(timeout=self.hold_s * 2)
            return normal(k)
        return pause

    def _holder_done(self) -> None:
        with self._lock:
            self._in += 1
            if self._in == len(self.holders):
                self.full.set()

    # -- the watcher, on a thread of its own --------------------------------------------------
    def watch(self) -> None:
        """Open the gate when the latecomers are pending on the server, or when the hold runs out."""
        if not self.full.wait(timeout=self.hold_s * 2):
            self.backlogged.set()  # a holder never got in: nothing to hold for
            return
        deadline = time.monotonic() + self.hold_s
        try:
            while time.monotonic() < deadline:
                with self._lock:
                    sent = self._sent
                pending = self._pending()
                if pending is not None:
                    self.pending_peak = max(pending, self.pending_peak or 0.0)
                    if pending >= len(self.latecomers):
                        return
                elif sent == len(self.latecomers):  # no metrics to read: the sends themselves are what is known
                    return
                time.sleep(POLL_S)
        finally:
            self.backlogged.set()

    def _pending(self) -> float | None:
        if not self.metrics_url:
            return None
        pending, _state = witness.readings_at(self.metrics_url, self.model, None, timeout_s=1.0)
        return pending
