"""Measurements several exercises take from a run's per-request rows.

Server-side times come from Triton's trace (queue_ms, exec_*); against a server that is
not traced the client's own send/receive times stand in, and the row says so.
"""
from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING

import pandas as pd

if TYPE_CHECKING:
    from app.lab.observation import RunLog
    from app.lab.records import RunResult


def _traced(requests: pd.DataFrame, column: str) -> bool:
    return column in requests and requests[column].notna().any()


def backlog_waits(run: RunResult) -> pd.DataFrame:
    """Per session: when its first chunk arrived and how long it waited before it ran.

    A session's first chunk waits in the sequence batcher's backlog until a slot is free,
    and Triton counts that wait as queue time, so queue_ms of chunk 0 is the backlog wait.
    """
    q = run.requests
    first = q[q["chunk"] == 0].sort_values("session")
    traced = _traced(first, "queue_ms")
    wait = first["queue_ms"] if traced else first["latency_ms"]
    return pd.DataFrame(
        {
            "session": first["session"].astype(int).to_numpy(),
            "arrived_s": first["t_send"].to_numpy(),
            "wait_ms": wait.fillna(first["latency_ms"]).to_numpy(),
            "source": "queue_time" if traced else "client_latency",  # codes: which clock measured it
        }
    )


def holding(run: RunResult) -> pd.DataFrame:
    """Per session: the (instance, slot) its first chunk ran on, and from when to when it held it."""
    q = run.requests[run.requests["error"] == ""]
    traced = _traced(q, "exec_start")
    rows = []
    for session, mine in q.groupby("session"):
        mine = mine.sort_values("chunk")
        start = mine["exec_start"].iloc[0] if traced else mine["t_recv"].iloc[0]
        end = mine["exec_end"].iloc[-1] if traced else mine["t_recv"].iloc[-1]
        rows.append(
            {
                "session": int(session),
                "instance": int(mine["instance"].iloc[0]),
                "slot": int(mine["slot"].iloc[0]),
                "held_from": float(start),
                "held_to": float(end),
            }
        )
    return pd.DataFrame(rows, columns=["session", "instance", "slot", "held_from", "held_to"])


def busy_fraction(requests: pd.DataFrame, instances: int) -> float:
    """Share of a run's span in which the model was computing (union of executions), from its
    per-request rows (instance, exec_start, exec_end, error)."""
    q = requests[requests["error"] == ""]
    if not _traced(q, "exec_start") or q.empty:
        return float("nan")
    span = q["exec_end"].max() - q["exec_start"].min()
    if span <= 0:
        return float("nan")
    busy = 0.0
    for _, mine in q.groupby("instance"):
        # Rows of one batch share an execution: merge overlapping intervals before summing.
        intervals = sorted(zip(mine["exec_start"], mine["exec_end"], strict=True))
        cur_start, cur_end = intervals[0]
        for s, e in intervals[1:]:
            if s > cur_end:
                busy += cur_end - cur_start
                cur_start, cur_end = s, e
            else:
                cur_end = max(cur_end, e)
        busy += cur_end - cur_start
    return float(busy / (instances * span))


def held_fraction(held: pd.DataFrame, capacity: int) -> float:
    """Share of slot-time (capacity x span) that sessions held a slot."""
    if held.empty:
        return float("nan")
    span = held["held_to"].max() - held["held_from"].min()
    return float((held["held_to"] - held["held_from"]).sum() / (capacity * span)) if span > 0 else float("nan")


def verdict_counts(run: RunResult) -> dict[str, int]:
    return verdict_tally(run.sessions)


def server_counts(runs: Mapping[str, RunResult]) -> pd.DataFrame:
    """Per run label: what the server counted for the run (statistics deltas), one row each.

    `batch_sizes` is {rows in the execution: executions}; `requests_sent` is what the driver sent,
    the stand-in when the server's statistics are unavailable."""
    return pd.DataFrame(
        [
            {
                "run": label,
                "inference_count": int(run.server.get("inference_count", len(run.requests))),
                "execution_count": int(run.server.get("execution_count", 0)),
                "requests_sent": len(run.requests),
                "batch_sizes": dict(run.server.get("batch_sizes", {})),
            }
            for label, run in runs.items()
        ],
        columns=["run", "inference_count", "execution_count", "requests_sent", "batch_sizes"],
    )


def rows_run(counts: pd.Series) -> int:
    """Rows the model ran in one run's executions (padding rows included): sum of size x count."""
    return int(sum(int(size) * int(n) for size, n in dict(counts["batch_sizes"]).items()))


def verdict_tally(sessions: pd.DataFrame) -> dict[str, int]:
    """{verdict: sessions} of a sessions table, as verdict_counts gives it for a run."""
    return {k: int(v) for k, v in sessions["verdict"].value_counts().items()}


def log_lines(logs: Mapping[str, RunLog | None]) -> pd.DataFrame:
    """Per run label: the classified lines of its server log (a run_log.RunLog), in log order, one row each.

    `code` is the LogCode's value, `level` its Level's name. A log that could not be read has no rows:
    logs_read says which."""
    return pd.DataFrame(
        [
            {"run": label, "code": e.code.value, "corrid": e.corrid or "", "level": e.level.name, "message": e.message}
            for label, log in logs.items() if log is not None
            for e in log.entries if e.code is not None
        ],
        columns=["run", "code", "corrid", "level", "message"],
    )


def logs_read(logs: Mapping[str, RunLog | None]) -> pd.DataFrame:
    """Per run label: whether its server log could be read (not against a server started elsewhere)."""
    return pd.DataFrame([{"run": label, "available": log is not None and log.available} for label, log in logs.items()],
                        columns=["run", "available"])
