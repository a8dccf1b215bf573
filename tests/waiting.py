"""Waiting for the event that proves a state, never for a fixed time (house rule).

`wait_for` polls a condition; `wait_for_log` polls a server log window for the line that
proves what the test needs (a sequence enqueued, reaped, a slot freed). The timeout is only
the bound after which the test fails with what it waited for: on a loaded machine a wait
takes longer, it never decides differently.
"""
from __future__ import annotations

import time
from collections.abc import Callable
from typing import TypeVar

from app.lab.observation.server_log import LogCode, LogEntry, LogWindow, select

T = TypeVar("T")
EVERY_S = 0.02


def wait_for(condition: Callable[[], T], what: str, timeout_s: float = 60) -> T:
    """Poll `condition` until it returns something true; return that. Fails after `timeout_s`."""
    deadline = time.monotonic() + timeout_s
    while True:
        found = condition()
        if found:
            return found
        if time.monotonic() > deadline:
            raise AssertionError(f"waited {timeout_s:.0f} s for {what}")
        time.sleep(EVERY_S)


def wait_for_log(window: LogWindow, found: Callable[[list[LogEntry]], bool], what: str, timeout_s: float = 60) -> list[LogEntry]:
    """Poll a log window until `found(entries)` is true; return the entries."""
    assert window.available, f"no server log to read, so no way to see {what}"
    entries: list[LogEntry] = []

    def seen() -> bool:
        nonlocal entries
        entries = window.entries()
        return found(entries)

    wait_for(seen, f"the server log to show {what}", timeout_s)
    return entries


def has_line(code: LogCode, corrid=None, model: str | None = None, count: int = 1) -> Callable[[list[LogEntry]], bool]:
    """A `found` for wait_for_log: at least `count` classified lines with this code (and ID, model)."""
    return lambda entries: len(select(entries, model=model, corrids=None if corrid is None else [corrid], codes=[code])) >= count


def log_seconds(entry: LogEntry) -> float:
    """A log line's time of day in seconds: the server's own clock (glog writes local time to the
    microsecond). Differences between two lines of one run are what a test may compare."""
    hours, minutes, seconds = entry.time.split(":")
    return int(hours) * 3600 + int(minutes) * 60 + float(seconds)


def log_gap_s(earlier: LogEntry, later: LogEntry) -> float:
    """Seconds from one log line to a later one by the server's clock; glog writes no date beyond
    MMDD, so a gap across midnight wraps."""
    return (log_seconds(later) - log_seconds(earlier)) % 86400
