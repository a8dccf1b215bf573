"""What the paged engine's exercises (kv_*) share: one run of a workload on one deployment, kept as
the labelled rows their judges read, and the plain statistics those judges take over them.

Each row carries its run's `label` (the exercise's name for the setting), so both runs of an
exercise sit in one table and a judge picks its runs by label.
"""
from __future__ import annotations

from collections.abc import Iterable, Mapping

import numpy as np
import numpy.typing as npt
import pandas as pd

from app.generation.paged.engine import PagedRun, PagedSettings, PagedWorkload, analysis, run
from app.lab.traffic import ServerView

REQUEST_COLUMNS = ["label", "index", "tag", "prompt_tokens", "max_tokens", "ttft_ms", "tokens", "status", "first_step",
                   "prefix_blocks", "peak_blocks", "received"]
STEP_COLUMNS = ["label", *analysis.STEP_COLUMNS]
TOKEN_COLUMNS = ["label", "index", "tag", "t_recv", "step", "step_tags", "step_tokens", "blocks", "free_blocks",
                 "cached_blocks"]


def labelled_run(server: ServerView, label: str, settings: PagedSettings, workload: PagedWorkload,
                 cancel_after: Mapping[int, int] | None = None) -> tuple[PagedRun, dict[str, pd.DataFrame]]:
    """Run `workload` on the deployment `settings` make; its requests, engine steps and token rows, labelled."""
    ran = run(server, settings, workload, cancel_after=cancel_after)
    trace = ran.stream.trace
    requests = analysis.requests_table(trace, ran.stream.plans).assign(label=label)[REQUEST_COLUMNS]
    steps = analysis.steps_table(trace).assign(label=label)[STEP_COLUMNS]
    tokens = analysis.token_rows(trace).assign(label=label)[TOKEN_COLUMNS]
    return ran, {"requests": requests, "steps": steps, "tokens": tokens}


def joined(parts: Iterable[dict[str, pd.DataFrame]]) -> dict[str, pd.DataFrame]:
    """Each table of several runs, one after another."""
    out: dict[str, list[pd.DataFrame]] = {}
    for part in parts:
        for name, frame in part.items():
            out.setdefault(name, []).append(frame)
    return {name: pd.concat(frames, ignore_index=True) for name, frames in out.items()}


def of(table: pd.DataFrame, label: str) -> pd.DataFrame:
    return table[table["label"] == label]


def pct(values: npt.ArrayLike, q: float) -> float:
    """The q-th percentile of the values that are numbers (nan when none is)."""
    clean = np.asarray([v for v in np.asarray(values, dtype=float) if not np.isnan(v)], dtype=float)
    return float(np.percentile(clean, q)) if clean.size else float("nan")


def gaps_ms(tokens: pd.DataFrame) -> npt.NDArray[np.float64]:
    """Every gap between two tokens of one request as the client received them, pooled over requests."""
    gaps = [np.diff(np.sort(own["t_recv"].to_numpy(dtype=float))) * 1000.0 for _, own in tokens.groupby("index")]
    return np.concatenate(gaps) if gaps else np.array([])
