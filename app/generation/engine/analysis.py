"""What a generation run's trace says: per request, per model step, and for the run as a whole.

Pure functions over DataFrames (the driver's trace, TRACE_COLUMNS), so the lab, the CLI, the
figures and the tests read a run the same way, and hand-made tables test them.

A *pass* is one model step over the rows of one execution: gen_inflight makes one pass per
execution, gen_static as many as its longest request has tokens. Within an execution a request
makes one token per pass, so a response's pass is its place among its request's responses in
that execution.
"""
from __future__ import annotations

from collections.abc import Sequence
from dataclasses import asdict, dataclass
from typing import Any

import numpy as np
import pandas as pd

from app.generation.engine.tokens import expected_tokens
from app.generation.engine.workload import PlannedRequest

REQUEST_COLUMNS = ["index", "tag", "arrival_s", "max_tokens", "t_send", "t_first", "t_last", "ttft_ms", "e2e_ms",
                   "tokens", "expected", "received", "status", "correct", "first_wrong_step", "foreign_step",
                   "continued_owner", "continued_index"]
PASS_COLUMNS = ["instance", "execution", "pass", "rows", "batch", "t_recv", "fill"]
TIMELINE_COLUMNS = ["instance", "execution", "pass", "row", "index", "tag", "step", "token", "state_owner"]
# A request's status from the client's side.
COMPLETE, CANCELLED, FAILED = "complete", "cancelled", "failed"


def token_rows(trace: pd.DataFrame) -> pd.DataFrame:
    """The responses that carry a token (not empty final responses, not errors), each with its
    pass within its execution."""
    tokens = trace[(~trace["empty"].astype(bool)) & (trace["error"] == "")].copy()
    tokens = tokens.sort_values("t_recv", kind="stable")
    tokens["pass"] = tokens.groupby(["instance", "execution", "tag"]).cumcount()
    return tokens.reset_index(drop=True)


def _status(rows: pd.DataFrame) -> str:
    errors = set(rows["error"]) - {""}
    if "cancelled" in errors:
        return CANCELLED
    return FAILED if errors else COMPLETE


def requests_table(trace: pd.DataFrame, plans: Sequence[PlannedRequest]) -> pd.DataFrame:
    """One row per planned request: its times (TTFT = first token received - sent; end to end =
    last response received - sent; ms), its tokens against expected_tokens, and where it went
    wrong: first_wrong_step (first position that differs, or where the stream is cut short or
    runs long; -1 when correct), foreign_step (first token whose STATE_OWNER is not its own TAG;
    -1 when none), continued_owner (that token's STATE_OWNER; 0 is a cell found empty) and
    continued_index (the index of the request with that tag in this run, -1 when none)."""
    tokens = token_rows(trace)
    index_of_tag = {p.tag: p.index for p in plans}
    rows = []
    for plan in plans:
        own = trace[trace["index"] == plan.index]
        got = tokens[tokens["index"] == plan.index].reset_index(drop=True)
        received = [int(t) for t in got["token"]]
        status = _status(own) if len(own) else FAILED
        # A cancelled stream is judged on what it received: a prefix of its expected stream.
        expected = expected_tokens(plan.prompt, plan.max_tokens if status == COMPLETE else min(len(received), plan.max_tokens))
        wrong = next((k for k, (a, b) in enumerate(zip(received, expected, strict=False)) if a != b), -1)
        if wrong < 0 and len(received) != len(expected):
            wrong = min(len(received), len(expected))
        foreign = got[got["state_owner"] != plan.tag]
        foreign_step = int(foreign.index[0]) if len(foreign) else -1
        owner = int(foreign["state_owner"].iloc[0]) if len(foreign) else plan.tag
        t_send = float(own["t_send"].dropna().iloc[0]) if own["t_send"].notna().any() else float("nan")
        t_first = float(got["t_recv"].min()) if len(got) else float("nan")
        t_last = float(own["t_recv"].max()) if len(own) else float("nan")
        rows.append({
            "index": plan.index, "tag": plan.tag, "arrival_s": plan.arrival_s, "max_tokens": plan.max_tokens,
            "t_send": t_send, "t_first": t_first, "t_last": t_last,
            "ttft_ms": (t_first - t_send) * 1000, "e2e_ms": (t_last - t_send) * 1000,
            "tokens": len(received), "expected": expected, "received": received, "status": status,
            "correct": wrong < 0 and status != FAILED, "first_wrong_step": wrong, "foreign_step": foreign_step,
            "continued_owner": owner if len(foreign) else plan.tag,
            "continued_index": index_of_tag.get(owner, -1) if len(foreign) else plan.index,
        })
    return pd.DataFrame(rows, columns=REQUEST_COLUMNS)


def passes(trace: pd.DataFrame, max_batch_size: int) -> pd.DataFrame:
    """One row per model step (instance, execution, pass): rows that made a token, the batch Triton
    handed the model, when its first token arrived, and its fill (rows / max_batch_size)."""
    tokens = token_rows(trace)
    if tokens.empty:
        return pd.DataFrame(columns=PASS_COLUMNS)
    grouped = tokens.groupby(["instance", "execution", "pass"], sort=True)
    table = grouped.agg(rows=("tag", "size"), batch=("batch", "max"), t_recv=("t_recv", "min")).reset_index()
    table["fill"] = table["rows"] / max_batch_size
    return table.sort_values("t_recv", kind="stable").reset_index(drop=True)[PASS_COLUMNS]


def timeline(trace: pd.DataFrame, max_batch_size: int) -> pd.DataFrame:
    """The step-by-row table: for every pass, every row 0..max_batch_size-1 with the request it
    held (index, tag), the step it made, its token and whose state it continued; a row no request
    used has <NA> there. In the order the passes happened."""
    tokens = token_rows(trace)
    order = passes(trace, max_batch_size)[["instance", "execution", "pass"]]
    if order.empty:
        return pd.DataFrame(columns=TIMELINE_COLUMNS)
    grid = order.assign(_order=range(len(order))).merge(pd.DataFrame({"row": range(max_batch_size)}), how="cross")
    # Nullable integer columns before the join: 64-bit tags must never pass through float.
    cells = tokens[["instance", "execution", "pass", "row", "index", "tag", "step", "token", "state_owner"]].astype(
        {"index": "Int64", "tag": "UInt64", "step": "Int64", "token": "Int64", "state_owner": "UInt64"})
    table = grid.merge(cells, on=["instance", "execution", "pass", "row"], how="left")
    table = table.sort_values(["_order", "row"], kind="stable").drop(columns="_order").reset_index(drop=True)
    return table[TIMELINE_COLUMNS]


def mixed_passes(trace: pd.DataFrame, max_batch_size: int) -> pd.DataFrame:
    """Passes that held different requests at different steps (a request joined running ones)."""
    table = timeline(trace, max_batch_size).dropna(subset=["tag"])
    counts = table.groupby(["instance", "execution", "pass"]).agg(tags=("tag", "nunique"), steps=("step", "nunique"))
    return counts[(counts["tags"] > 1) & (counts["steps"] > 1)].reset_index()


@dataclass(frozen=True)
class RunFigures:
    requests: int
    complete: int
    correct: int
    tokens: int
    wall_s: float  # first send to last response
    tokens_per_s: float
    ttft_p50_ms: float
    ttft_p95_ms: float
    e2e_p50_ms: float
    e2e_p95_ms: float
    executions: int
    passes: int
    mean_fill: float  # mean over passes of rows / max_batch_size

    def to_json(self) -> dict[str, float | None]:
        return {key: (None if isinstance(value, float) and np.isnan(value) else value) for key, value in asdict(self).items()}


def _percentile(values: pd.Series, q: float) -> float:
    clean = values.dropna()
    return float(np.percentile(clean, q)) if len(clean) else float("nan")


def run_figures(requests: pd.DataFrame, trace: pd.DataFrame, max_batch_size: int) -> RunFigures:
    """The run's figures from requests_table(...) and the trace."""
    steps = passes(trace, max_batch_size)
    tokens = int(requests["tokens"].sum())
    start = float(requests["t_send"].min()) if len(requests) else float("nan")
    end = float(requests["t_last"].max()) if len(requests) else float("nan")
    wall = end - start
    return RunFigures(
        requests=len(requests),
        complete=int((requests["status"] == COMPLETE).sum()),
        correct=int(requests["correct"].sum()),
        tokens=tokens,
        wall_s=wall,
        tokens_per_s=tokens / wall if wall > 0 else float("nan"),
        ttft_p50_ms=_percentile(requests["ttft_ms"], 50),
        ttft_p95_ms=_percentile(requests["ttft_ms"], 95),
        e2e_p50_ms=_percentile(requests["e2e_ms"], 50),
        e2e_p95_ms=_percentile(requests["e2e_ms"], 95),
        executions=int(steps[["instance", "execution"]].drop_duplicates().shape[0]),
        passes=len(steps),
        mean_fill=float(steps["fill"].mean()) if len(steps) else float("nan"),
    )


def _records(frame: pd.DataFrame) -> list[dict[str, object]]:
    """Rows as JSON-ready dicts: NaN and <NA> become null, numpy scalars plain numbers."""
    out = []
    for record in frame.astype(object).where(frame.notna(), None).to_dict(orient="records"):
        out.append({k: (v.item() if isinstance(v, np.generic) else v) for k, v in record.items()})
    return out


def report_json(run_id: str, model: str, trace: pd.DataFrame, plans: Sequence[PlannedRequest], max_batch_size: int,
                server: dict[str, Any] | None = None) -> dict[str, object]:  # server: server_stats.delta's
    """What `batching-lab run --model gen_* --json` writes and the lab draws from: the trace rows,
    the per-request table, the passes, the step-by-row timeline and the run's figures (codes and
    numbers, no words)."""
    requests = requests_table(trace, plans)
    return {
        "kind": "generation_run",
        "run_id": run_id,
        "model": model,
        "max_batch_size": max_batch_size,
        "plans": [asdict(p) for p in plans],
        "trace": _records(trace),
        "requests": _records(requests),
        "passes": _records(passes(trace, max_batch_size)),
        "timeline": _records(timeline(trace, max_batch_size)),
        "figures": run_figures(requests, trace, max_batch_size).to_json(),
        "server": server or {},
    }
