"""The JSON view of a run, and the numbers its text summary reads, for the CLI and instructors' scripts.

Codes and numbers only: the plain-text summary is worded at the edge (app/recogniser/words/report.py).

JSON schema (version 2; version 1 had an English `detail` where sessions now have detail_code and detail_values):
  {"schema": 2, "run_id", "model", "transport" (http, grpc or grpc_stream), "in_flight", "wall_s", "traced",
   "server": {inference_count, execution_count, average_batch_size, mean_queue_us,
              mean_compute_us, batch_sizes: {size: executions}, metrics: {name: delta}},
   "sessions": [{session, corrid, tag, expected_text, received_text, chunks, first_wrong,
                 verdict, read_state_of, detail_code, detail_values, wrong_symbols, instances, slots}],
   (detail_code: app/recogniser/engine/judgement/verdicts.Detail; detail_values: instance, slot, state_in, should_read,
    other_session, owner_tag, error: Triton's own words),
   "requests": [{session, chunk, corrid, tag, request_id, expected, symbol, instance, slot,
                 batch, state_in, state_owner, error, t_send, t_recv, latency_ms,
                 queue_ms, compute_ms, exec_start, exec_end}],
   "log": {available, unavailable, counts: {code: n}, evidence: [{level, time, source, code, values, line}]}
          (the server log lines of this run, see app/lab/observation/run_log.py; null if not captured),
   "state_cells": [{t, instance, cells, evicted}] (the recogniser's own metrics during the run)}
Times are seconds from the run's start (t_*, exec_*) or milliseconds (*_ms); queue_ms and
compute_ms come from the server's trace and are null when the server was not traced.
"""
from __future__ import annotations

import json
from typing import TYPE_CHECKING, TypedDict

import pandas as pd

from app.lab.json_value import JSONObject
from app.lab.traffic.transports import NO_ANSWER

if TYPE_CHECKING:
    from app.lab.records import RunResult

REQUEST_FIELDS = [
    "session", "chunk", "corrid", "tag", "request_id", "expected", "symbol", "instance", "slot", "batch",
    "state_in", "state_owner", "error", "t_send", "t_recv", "latency_ms", "queue_ms", "compute_ms",
    "exec_start", "exec_end",
]


WAITED_MS = 100.0  # a first chunk queued longer than this waited in the backlog for a slot


class WaitsAndRefusals(TypedDict, total=False):
    """waits_and_refusals(): each key present only when it applies."""

    waited: int
    first_chunks: int
    longest_ms: float
    refused: int
    refused_example: str
    no_answer: int
    no_answer_example: str


def waits_and_refusals(result: RunResult) -> WaitsAndRefusals:
    """A run at scale, in numbers: how many sessions waited for a slot, and what stopped the others.

    A sequence's first chunk waits in the backlog until a slot is free, and Triton counts that
    wait in the request's queue time, so chunk 0's queue_ms (from the trace) is the wait.
    Keys (each present only when it applies): waited, first_chunks, longest_ms (traced runs);
    refused, refused_example (sessions the server refused, and one refusal in its own words);
    no_answer, no_answer_example (sessions that lost a request on the way: no reply at all).
    """
    out = WaitsAndRefusals()
    q = result.requests
    first = q.loc[q["chunk"] == 0, "queue_ms"].dropna() if "queue_ms" in q else pd.Series(dtype=float)
    if not first.empty:
        out["waited"], out["first_chunks"], out["longest_ms"] = int((first > WAITED_MS).sum()), len(first), float(first.max())
    stopped = result.sessions[result.sessions["verdict"] == "error"]
    errors = stopped["detail_values"].apply(lambda v: str((v or {}).get("error", "")))
    failed = errors[errors.str.startswith(NO_ANSWER)]
    refused = errors.drop(failed.index)
    if not refused.empty:
        out["refused"], out["refused_example"] = len(refused), refused.iloc[0]
    if not failed.empty:
        out["no_answer"], out["no_answer_example"] = len(failed), failed.iloc[0]
    return out


def to_json(result: RunResult) -> JSONObject:
    requests = result.requests.reindex(columns=REQUEST_FIELDS)
    sessions = result.sessions.copy()
    sessions["slots"] = sessions["slots"].apply(lambda pairs: [list(p) for p in pairs])
    return {
        "schema": 2,
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
