"""The server log lines that belong to one run or exercise: evidence as codes, lines verbatim.

A line belongs to a run when it names one of the run's models (outright, or through the
batcher it names) and, if it carries a correlation ID, one of the run's IDs; a reaper line
names only the ID, and belongs when the ID is the run's. Lines that classify as routine
bookkeeping (a request placed in a slot, an END, a freed slot) are counted, not quoted: at
--log-verbose=1 there is one of each per request. Words for each code live at the page and
CLI edge (app/text/log_readings.py), not here.
"""
from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field

from app.lab.json_value import JSONObject
from app.lab.observation.server_log import Level, LogCode, LogEntry, LogWindow, Unavailable

ROUTINE = frozenset({LogCode.SEQUENCE_ENQUEUED, LogCode.SEQUENCE_END, LogCode.SLOT_FREED})


@dataclass
class RunLog:
    unavailable: Unavailable | None  # why there are no lines to read (external server); None when read
    entries: list[LogEntry] = field(default_factory=list)  # every line that belongs, in log order

    @property
    def available(self) -> bool:
        return self.unavailable is None

    def evidence(self) -> list[LogEntry]:
        """Lines worth quoting: classified and not routine, or any warning or error."""
        return [e for e in self.entries if (e.code is not None and e.code not in ROUTINE) or e.level in (Level.WARNING, Level.ERROR, Level.FATAL)]

    def count(self, code: LogCode) -> int:
        return sum(1 for e in self.entries if e.code == code)

    def counts(self) -> dict[LogCode, int]:
        out: dict[LogCode, int] = {}
        for entry in self.entries:
            if entry.code is not None:
                out[entry.code] = out.get(entry.code, 0) + 1
        return out

    def to_json(self) -> JSONObject:
        """{available, unavailable, counts{code: n}, evidence[{level, time, source, code, values, line}]}."""
        return {
            "available": self.available,
            "unavailable": self.unavailable.value if self.unavailable else None,
            "counts": {code.value: n for code, n in self.counts().items()},
            "evidence": [
                {"level": e.level.value, "time": e.time, "source": e.source, "code": e.code.value if e.code else None,
                 "values": dict(e.values), "line": e.raw}
                for e in self.evidence()
            ],
        }


def belongs(entry: LogEntry, models: set[str], corrids: set[str]) -> bool:
    if entry.corrid is not None and entry.corrid not in corrids:
        return False
    if entry.model is not None:
        return entry.model in models
    return entry.corrid is not None  # a line naming only an ID (the reaper's) that is ours


def capture(window: LogWindow, models: Iterable[str], corrids: Iterable[int | str]) -> RunLog:
    """The lines of `window` that belong to these models and correlation IDs."""
    if not window.available:
        return RunLog(window.unavailable)
    wanted_models, wanted_ids = set(models), {str(c) for c in corrids}
    return RunLog(None, [e for e in window.entries() if belongs(e, wanted_models, wanted_ids)])


def merge(logs: Iterable[RunLog]) -> RunLog:
    """One log from several (an exercise's runs on different servers): lines in the given order."""
    logs = list(logs)
    read = [log for log in logs if log.available]
    if not read:
        return RunLog(logs[0].unavailable if logs else Unavailable.NOT_STARTED)
    return RunLog(None, [e for log in read for e in log.entries])
