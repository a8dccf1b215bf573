"""What a paged-engine run's trace says, per request, per engine step and per block.

Pure functions over the driver's trace (PAGED.trace_columns: one row per response, with the
engine step that made each token, the blocks its request held then, and the cache and queue in
that step), so the lab, the CLI, the figures, the exercises and the benchmark read a run alike.
"""
from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import asdict, dataclass

import numpy as np
import numpy.typing as npt
import pandas as pd

from app.generation.engine.workload import PlannedRequest

COMPLETE, CANCELLED, FAILED = "complete", "cancelled", "failed"
REQUEST_COLUMNS = ["index", "tag", "arrival_s", "prompt_tokens", "max_tokens", "t_send", "t_first", "t_last",
                   "ttft_ms", "tbt_p50_ms", "tbt_p99_ms", "tokens", "received", "status", "error", "first_step",
                   "prefix_blocks", "peak_blocks"]
STEP_COLUMNS = ["step", "requests", "tokens", "free_blocks", "cached_blocks", "waiting", "running", "t_recv"]
BLOCK_COLUMNS = ["step", "index", "tag", "block", "shared"]


def token_rows(trace: pd.DataFrame) -> pd.DataFrame:
    """Responses that carry a token (not empty final responses, not errors), in receive order."""
    tokens = trace[(~trace["empty"].astype(bool)) & (trace["error"] == "")]
    return tokens.sort_values("t_recv", kind="stable").reset_index(drop=True)


def _status(rows: pd.DataFrame) -> tuple[str, str]:
    errors = sorted(set(rows["error"]) - {""})
    if "cancelled" in errors:
        return CANCELLED, ""
    return (FAILED, errors[0]) if errors else (COMPLETE, "")


def _gaps_ms(times: pd.Series) -> npt.NDArray[np.float64]:
    return np.diff(np.sort(times.to_numpy(dtype=float))) * 1000.0


def _pct(values: Sequence[float] | npt.NDArray[np.float64], q: float) -> float:
    clean = np.asarray([v for v in values if not np.isnan(v)], dtype=float)
    return float(np.percentile(clean, q)) if clean.size else float("nan")


def requests_table(trace: pd.DataFrame, plans: Sequence[PlannedRequest]) -> pd.DataFrame:
    """One row per planned request: time to first token (first token received - sent), time
    between its tokens (p50, p99), what it received, the first engine step that made one of its
    tokens, how many of its prompt's blocks came from the cache, and the most blocks it held."""
    tokens = token_rows(trace)
    rows = []
    for plan in plans:
        own = trace[trace["index"] == plan.index]
        got = tokens[tokens["index"] == plan.index]
        status, error = _status(own) if len(own) else (FAILED, "")
        t_send = float(own["t_send"].dropna().iloc[0]) if own["t_send"].notna().any() else float("nan")
        t_first = float(got["t_recv"].min()) if len(got) else float("nan")
        gaps = _gaps_ms(got["t_recv"])
        rows.append({
            "index": plan.index, "tag": plan.tag, "arrival_s": plan.arrival_s, "prompt_tokens": len(plan.prompt),
            "max_tokens": plan.max_tokens, "t_send": t_send, "t_first": t_first,
            "t_last": float(own["t_recv"].max()) if len(own) else float("nan"),
            "ttft_ms": (t_first - t_send) * 1000, "tbt_p50_ms": _pct(gaps, 50), "tbt_p99_ms": _pct(gaps, 99),
            "tokens": len(got), "received": [int(t) for t in got["token"]], "status": status, "error": error,
            "first_step": int(got["step"].min()) if len(got) else -1,
            "prefix_blocks": int(got["prefix_blocks"].max()) if len(got) else 0,
            "peak_blocks": int(got["blocks"].map(len).max()) if len(got) else 0,
        })
    return pd.DataFrame(rows, columns=REQUEST_COLUMNS)


def steps_table(trace: pd.DataFrame) -> pd.DataFrame:
    """One row per engine step that made a token: how many requests shared it, the tokens they
    computed (a prompt, or a chunk of one, counts all its tokens), and the cache and queue then."""
    tokens = token_rows(trace)
    if tokens.empty:
        return pd.DataFrame(columns=STEP_COLUMNS)
    grouped = tokens.groupby("step", sort=True)
    table = grouped.agg(requests=("step_tags", lambda s: len(s.iloc[0])), tokens=("step_tokens", "sum"),
                        free_blocks=("free_blocks", "min"), cached_blocks=("cached_blocks", "max"),
                        waiting=("waiting", "max"), running=("running", "max"), t_recv=("t_recv", "min"))
    return table.reset_index()[STEP_COLUMNS]


def block_table(trace: pd.DataFrame) -> pd.DataFrame:
    """The block table over time: one row per (step, request, block) it held in that step, with
    whether another request held that block too (a shared prefix)."""
    tokens = token_rows(trace)
    rows = [{"step": int(r.step), "index": int(r.index), "tag": int(r.tag), "block": int(b),
             "shared": int(b) in set(r.shared_blocks)}
            for r in tokens.itertuples() for b in r.blocks]
    return pd.DataFrame(rows, columns=BLOCK_COLUMNS)


def equal_alone(requests: pd.DataFrame, alone: Mapping[int, Sequence[int]]) -> dict[int, bool]:
    """Per request index: whether its stream equals its alone run (only complete streams)."""
    out = {}
    for row in requests.itertuples():
        if row.status == COMPLETE and int(row.index) in alone:
            out[int(row.index)] = list(row.received) == list(alone[int(row.index)])
    return out


@dataclass(frozen=True)
class PagedFigures:
    requests: int
    complete: int
    tokens: int
    wall_s: float  # first send to last response
    tokens_per_s: float
    ttft_p50_ms: float
    ttft_p95_ms: float
    tbt_p50_ms: float  # over every gap between two tokens of one request
    tbt_p99_ms: float
    steps: int
    peak_running: int
    peak_waiting: int
    least_free_blocks: int
    prefix_blocks_reused: int
    prefix_blocks_possible: int  # shared-prefix blocks every request but the first could find
    prefix_share: float  # reused / possible

    def to_json(self) -> dict[str, float | None]:
        return {k: (None if isinstance(v, float) and np.isnan(v) else v) for k, v in asdict(self).items()}


def figures(trace: pd.DataFrame, requests: pd.DataFrame, system_tokens: int, block_size: int) -> PagedFigures:
    """The run's figures. A shared prefix of `system_tokens` fills system_tokens // block_size
    whole blocks; every request but the first could find those in the cache."""
    tokens = token_rows(trace)
    steps = steps_table(trace)
    start = float(requests["t_send"].min()) if len(requests) else float("nan")
    end = float(requests["t_last"].max()) if len(requests) else float("nan")
    wall = end - start
    gaps = np.concatenate([_gaps_ms(g["t_recv"]) for _, g in tokens.groupby("index")]) if len(tokens) else np.array([])
    possible = max(len(requests) - 1, 0) * (system_tokens // block_size)
    reused = int(requests["prefix_blocks"].sum())
    return PagedFigures(
        requests=len(requests), complete=int((requests["status"] == COMPLETE).sum()), tokens=len(tokens),
        wall_s=wall, tokens_per_s=len(tokens) / wall if wall > 0 else float("nan"),
        ttft_p50_ms=_pct(requests["ttft_ms"].to_numpy(), 50), ttft_p95_ms=_pct(requests["ttft_ms"].to_numpy(), 95),
        tbt_p50_ms=_pct(gaps, 50), tbt_p99_ms=_pct(gaps, 99), steps=len(steps),
        peak_running=int(steps["running"].max()) if len(steps) else 0,
        peak_waiting=int(steps["waiting"].max()) if len(steps) else 0,
        least_free_blocks=int(steps["free_blocks"].min()) if len(steps) else 0,
        prefix_blocks_reused=reused, prefix_blocks_possible=possible,
        prefix_share=reused / possible if possible else float("nan"),
    )
