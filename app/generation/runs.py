"""A generation lab run as the tables its figures, table and judges read (no Streamlit, no words).

`run(server, setup, mode)` deploys the generator for one batching mode with the set-up's settings, holds
that deployment alone for the run (app/lab/traffic/run_queue, so two learners' runs never mix), sends the
set-up's workload through the engine's driver and turns the trace into `GenRun`: the tables of
app/generation/figures.py and the headline numbers. `tables(...)` is the pure part, tested on hand-made
traces.
"""
from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import pandas as pd


@dataclass(frozen=True)
class Planned:
    """One request of a workload: its tag, when it is sent (seconds from the run's start), its prompt and length."""

    tag: int
    arrival_s: float
    prompt: tuple[int, int, int, int]
    max_tokens: int


@dataclass(frozen=True, kw_only=True)
class GenRun:
    mode: str  # static | inflight | inflight_by_row
    label: str  # what the run is called among a comparison's runs (the mode, or an exercise's code)
    model: str
    max_batch_size: int
    tokens: pd.DataFrame
    requests: pd.DataFrame
    steps: pd.DataFrame
    numbers: dict[str, Any] = field(default_factory=dict)


def ticks(tokens: pd.DataFrame) -> pd.Series:
    """Each token's model step on its instance: executions in order, and inside an execution (a static batch
    generated to its end) the request's k-th token of it at k. In flight every execution is one step."""
    frame = tokens.sort_values(["instance", "execution", "step"])
    within = frame.groupby(["instance", "execution", "tag"]).cumcount()
    width = within.groupby([frame["instance"], frame["execution"]]).transform("max") + 1
    per_execution = frame.assign(width=width).drop_duplicates(["instance", "execution"])[["instance", "execution", "width"]]
    per_execution["offset"] = per_execution.groupby("instance")["width"].cumsum() - per_execution["width"]
    offset = frame.merge(per_execution, on=["instance", "execution"], how="left")["offset"].to_numpy()
    return pd.Series(offset + within.to_numpy(), index=frame.index).reindex(tokens.index)


def joined(done: Iterable[GenRun]) -> dict[str, pd.DataFrame]:
    """The tables of several runs, one below the other, each row labelled with its run's label."""
    done = list(done)
    return {name: pd.concat([getattr(r, name).assign(label=r.label) for r in done], ignore_index=True)
            for name in ("tokens", "requests", "steps")}


def answer(kind: str, done: list[GenRun]) -> str:
    """What the server did, as the answer key of the lab page's question (app/generation/words.ANSWERS):
    compare: which mode gave the median request its first token sooner (within a fifth: the same);
    single: whether some step ran with rows left empty."""
    if kind == "compare":
        by_mode = {r.mode: r.numbers["ttft_p50_ms"] for r in done}
        static, inflight = by_mode["static"], by_mode["inflight"]
        if static < inflight / SAME:
            return "static"
        return "inflight" if inflight < static / SAME else "same"
    return "yes" if any(r.numbers["mean_fill"] < 1 for r in done) else "no"


SAME = 1.2  # first tokens within this ratio count as about the same


def tables(trace: pd.DataFrame, mode: str, max_batch_size: int) -> tuple[pd.DataFrame, pd.DataFrame, pd.DataFrame]:
    """(tokens, requests, steps) of app/generation/figures.py from a trace with one row per token:
    tag, sent_s (when its request was sent), t_s (when this token arrived, both from the run's start),
    instance, execution, row, batch, step, token, expected (the pure rule's token at that step) and owner
    (STATE_OWNER: the tag whose state the model continued)."""
    tokens = trace.copy()
    tokens["mode"] = mode
    tokens["wrong"] = tokens["token"] != tokens["expected"]
    tokens["last"] = tokens["step"] == tokens.groupby("tag")["step"].transform("max")
    tokens["tick"] = ticks(tokens) if not tokens.empty else pd.Series(dtype=int)
    grouped = tokens.groupby("tag")
    requests = pd.DataFrame({
        "mode": mode,
        "ttft_ms": (grouped["t_s"].min() - grouped["sent_s"].first()) * 1000,
        "e2e_ms": (grouped["t_s"].max() - grouped["sent_s"].first()) * 1000,
        "tokens": grouped.size(),
        "wrong": grouped["wrong"].sum(),
    }).reset_index()
    steps = tokens.groupby(["instance", "tick"]).size().rename("rows").reset_index()
    steps["mode"] = mode
    steps["fill"] = steps["rows"] / max_batch_size
    return tokens, requests, steps


def numbers(tokens: pd.DataFrame, requests: pd.DataFrame, steps: pd.DataFrame) -> dict[str, Any]:
    """The run's headline numbers: tokens/s over the run, TTFT p50 and p95, mean step fill, wrong tokens."""
    if tokens.empty:
        return {"requests": 0, "tokens": 0, "tokens_per_s": 0.0, "ttft_p50_ms": float("nan"),
                "ttft_p95_ms": float("nan"), "e2e_p50_ms": float("nan"), "mean_fill": float("nan"), "wrong_tokens": 0}
    span = float(tokens["t_s"].max() - tokens["sent_s"].min())
    return {
        "requests": int(len(requests)),
        "tokens": int(len(tokens)),
        "tokens_per_s": float(len(tokens) / span) if span > 0 else float("nan"),
        "ttft_p50_ms": float(np.percentile(requests["ttft_ms"], 50)),
        "ttft_p95_ms": float(np.percentile(requests["ttft_ms"], 95)),
        "e2e_p50_ms": float(np.percentile(requests["e2e_ms"], 50)),
        "mean_fill": float(steps["fill"].mean()),
        "wrong_tokens": int(tokens["wrong"].sum()),
    }
