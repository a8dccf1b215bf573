"""Plain-text and JSON views of a run, for the CLI and for instructors' scripts.

JSON schema (version 1):
  {"schema": 1, "run_id", "model", "transport" (http, grpc or grpc_stream), "in_flight", "wall_s", "traced",
   "server": {inference_count, execution_count, average_batch_size, mean_queue_us,
              mean_compute_us, batch_sizes: {size: executions}, metrics: {name: delta}},
   "sessions": [{session, corrid, tag, expected_text, received_text, chunks, first_wrong,
                 verdict, read_state_of, detail, wrong_symbols, instances, slots}],
   "requests": [{session, chunk, corrid, tag, request_id, expected, symbol, instance, slot,
                 batch, state_in, state_owner, error, t_send, t_recv, latency_ms,
                 queue_ms, compute_ms, exec_start, exec_end}],
   "log": {available, unavailable, counts: {code: n}, evidence: [{level, time, source, code, values, line}]}
          (the server log lines of this run, see app/lab/run_log.py; null if not captured),
   "state_cells": [{t, instance, cells, evicted}] (the recogniser's own metrics during the run)}
Times are seconds from the run's start (t_*, exec_*) or milliseconds (*_ms); queue_ms and
compute_ms come from the server's trace and are null when the server was not traced.
"""
from __future__ import annotations

import json

import pandas as pd

from app.lab.transports import NO_ANSWER

REQUEST_FIELDS = [
    "session", "chunk", "corrid", "tag", "request_id", "expected", "symbol", "instance", "slot", "batch",
    "state_in", "state_owner", "error", "t_send", "t_recv", "latency_ms", "queue_ms", "compute_ms",
    "exec_start", "exec_end",
]


WAITED_MS = 100.0  # a first chunk queued longer than this waited in the backlog for a slot


def waits_and_refusals(result) -> list[str]:
    """Lines for a run at scale: how many sessions waited for a slot, and what refused the others.

    A sequence's first chunk waits in the backlog until a slot is free, and Triton counts that
    wait in the request's queue time, so chunk 0's queue_ms (from the trace) is the wait.
    """
    lines = []
    q = result.requests
    first = q.loc[q["chunk"] == 0, "queue_ms"].dropna() if "queue_ms" in q else pd.Series(dtype=float)
    if not first.empty:
        waited = first[first > WAITED_MS]
        lines.append(f"waited for a slot: {len(waited)} of {len(first)} sessions queued their first chunk over "
                     f"{WAITED_MS:.0f} ms (longest {first.max():.0f} ms)")
    stopped = result.sessions[result.sessions["verdict"] == "error"]
    failed = stopped[stopped["detail"].str.contains(NO_ANSWER, regex=False)]
    refused = stopped.drop(failed.index)
    if not refused.empty:
        lines.append(f"refused: {len(refused)} session(s); the server said, e.g.: {refused.iloc[0]['detail']}")
    if not failed.empty:
        lines.append(f"no answer: {len(failed)} session(s) lost a request on the way (did the server stop?), "
                     f"e.g.: {failed.iloc[0]['detail']}")
    return lines


def summary_table(result) -> str:
    s = result.sessions
    lines = [
        f"run {result.run_id} on {result.scenario.model} over {result.scenario.transport.label}"
        f"{f', {result.scenario.in_flight} chunks in flight per session' if result.scenario.in_flight > 1 else ''}: "
        f"{len(s)} sessions, {len(result.requests)} requests, {result.wall_s:.2f} s",
        f"{'#':>3} {'verdict':8} {'first wrong':>11}  {'expected':30} received",
    ]
    for row in s.itertuples():
        first = "-" if pd.isna(row.first_wrong) else str(int(row.first_wrong) + 1)
        lines.append(f"{row.session + 1:>3} {row.verdict:8} {first:>11}  {row.expected_text[:30]:30} {row.received_text[:30]}")
    counts = s["verdict"].value_counts().to_dict()
    lines.append("verdicts: " + ", ".join(f"{k} {v}" for k, v in counts.items()))
    lines += waits_and_refusals(result)
    srv = result.server
    lines.append(
        f"server: {srv['inference_count']} inferences in {srv['execution_count']} executions "
        f"(average batch {srv['average_batch_size']:.2f}), mean queue {srv['mean_queue_us']:.0f} us, "
        f"mean compute {srv['mean_compute_us']:.0f} us; batch sizes {srv['batch_sizes']}"
    )
    return "\n".join(lines)


def to_json(result) -> dict:
    requests = result.requests.reindex(columns=REQUEST_FIELDS)
    sessions = result.sessions.copy()
    sessions["slots"] = sessions["slots"].apply(lambda pairs: [list(p) for p in pairs])
    return {
        "schema": 1,
        "run_id": result.run_id,
        "model": result.scenario.model,
        "transport": result.scenario.transport.value,
        "in_flight": result.scenario.in_flight,
        "wall_s": result.wall_s,
        "traced": result.traced,
        "server": result.server,
        "sessions": json.loads(sessions.to_json(orient="records")),
        "requests": json.loads(requests.to_json(orient="records")),
        "log": result.log.to_json() if result.log is not None else None,
        "state_cells": json.loads(result.state_cells.to_json(orient="records")) if result.state_cells is not None else [],
    }
