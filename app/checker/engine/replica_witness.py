"""The routing's witness: which replicas served the check run through a balancer, and, where their
logs can be read, which replicas each sequence's requests reached.

A routing check that held says something only if the balancer spread the traffic: through a
balancer that sent every request to one replica, every sequence stays whole whatever the routing.
So the witness is exercised when at least two replicas served requests (their statistics, around
the run: routing.ReplicaSpread); otherwise a held routing outcome is not_exercised (routing.diagnose).

Which replica served each sequence is known only from the replicas' own logs (--replica-log, or
an embedded server's), at verbosity 1 while the run lasts: a request given a slot or put in the
backlog ("Enqueuing CORRID c ..."), a sequence's end, and a request refused for want of its
START ("inference request for sequence c ... must specify the START flag") each name the
correlation ID on the replica that saw it (app/lab/observation/server_log.py). A sequence whose
ID two replicas' logs name was split. Sequences are counted by correlation ID: an ID the check
reused for several sequences counts once. Without every replica's log, only the spread is known
("source": "statistics") and sequences_split is None. Codes and values only.
"""
from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from app.checker.engine.witness import ADVICE_SPREAD_REPLICAS, NO_STATISTICS, ONE_REPLICA_SERVED, STATISTICS
from app.lab.observation import LogCode, LogWindow, server_log

LOG = "log"
# The lines that name a correlation ID on the replica that saw it; the rest of a verbosity-1 log is skipped unparsed.
_MARKERS = (b"CORRID", b"START flag")
_NAMING = (LogCode.SEQUENCE_ENQUEUED, LogCode.BACKLOG_ENQUEUED, LogCode.SEQUENCE_END, LogCode.START_FLAG_MISSING)


def named_ids(window: LogWindow, model: str) -> set[str] | None:
    """The correlation IDs of `model` a replica's log named since the window opened; None where
    the log cannot be read."""
    if not window.available or window.path is None:
        return None
    try:
        with open(window.path, "rb") as handle:
            handle.seek(window.offset)
            lines = [raw.decode(errors="replace") for raw in handle if raw.endswith(b"\n") and any(m in raw for m in _MARKERS)]
    except OSError:
        return None
    return _ids(server_log.parse(lines), model)


def _ids(entries: Iterable[server_log.LogEntry], model: str) -> set[str]:
    return {e.corrid for e in entries if e.code in _NAMING and e.corrid is not None and e.model == model}


def routed(served: list[int | None], named: list[set[str] | None]) -> dict[str, Any]:  # Any: as routing.Routing.witness
    """The witness from each replica's served count (its statistics; None: not said) and the IDs its
    log named (None: not read). The logs are the source only where every replica's was read and
    each replica its statistics say served appears in its own log (a log that names nothing of a
    replica that served is not that replica's, or not at verbosity 1)."""
    serving = sum(1 for n in served if n)
    logs = all(ids is not None for ids in named) and all(
        ids or not n for n, ids in zip(served, named, strict=True))
    placed = split = None
    if logs:
        counts: dict[str, int] = {}
        for ids in named:
            for corrid in ids or ():
                counts[corrid] = counts.get(corrid, 0) + 1
        placed, split = len(counts), sum(1 for n in counts.values() if n > 1)
    exercised = serving >= 2
    why = None if exercised else NO_STATISTICS if any(n is None for n in served) else ONE_REPLICA_SERVED
    return {"source": LOG if logs else STATISTICS, "exercised": exercised, "why": why,
            "advice": None if exercised or why == NO_STATISTICS else ADVICE_SPREAD_REPLICAS,
            "replicas_serving": serving, "sequences_placed": placed, "sequences_split": split}
