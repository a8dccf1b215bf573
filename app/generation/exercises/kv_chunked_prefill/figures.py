"""Figures of the kv_chunked_prefill exercise: the running requests' gaps between tokens over time,
and the engine steps the long prompt took, in both runs."""
from __future__ import annotations

import numpy as np
import pandas as pd
import plotly.graph_objects as go

from app.charts import palette, plots
from app.charts.figures import Chart, render
from app.exercise_kit import ExerciseResult
from app.generation.exercises.kv_chunked_prefill import engine
from app.generation.exercises.kv_chunked_prefill.words import CHART_SUMMARIES as SAID
from app.generation.exercises.paged_runs import gaps_ms, pct
from app.i18n import N_, Say

LABELS = {"whole": N_("budget 1024"), "chunked": N_("budget 16")}
COLOURS = {"whole": palette.VERMILLION, "chunked": palette.BLUE}


def _gaps(tokens: pd.DataFrame) -> pd.DataFrame:
    """Each running request's gaps, at the time of the later token (from the run's first token)."""
    running = tokens[tokens["index"] != engine.LONG]
    start = float(tokens["t_recv"].min()) if len(tokens) else 0.0
    rows = []
    for _, own in running.groupby("index"):
        times = np.sort(own["t_recv"].to_numpy(dtype=float))
        rows += [{"t_ms": (t - start) * 1000.0, "gap_ms": g * 1000.0} for t, g in zip(times[1:], np.diff(times), strict=True)]
    return pd.DataFrame(rows, columns=["t_ms", "gap_ms"])


def figures(result: ExerciseResult, _: Say = str) -> list[Chart]:
    tokens = result.tables["tokens"]
    gaps = go.Figure()
    p99, steps = {}, {}
    for label, mine in tokens.groupby("label", sort=False):
        drawn = _gaps(mine)
        gaps.add_trace(go.Scatter(x=drawn["t_ms"], y=drawn["gap_ms"], mode="markers", name=_(LABELS[str(label)]),
                                  marker=dict(color=COLOURS[str(label)], size=5)))
        p99[str(label)] = pct(gaps_ms(mine[mine["index"] != engine.LONG]), 99)
        steps[str(label)] = engine.prefill_steps(mine)
    gaps.update_layout(title=_(N_("Time between tokens of the running requests")),
                       xaxis_title=_(N_("time since the run's first token (ms)")), yaxis_title=_(N_("gap (ms)")))
    took = go.Figure([go.Bar(x=[_(LABELS[label]) for label in steps], y=list(steps.values()),
                             marker_color=[COLOURS[label] for label in steps], text=list(steps.values()))])
    took.update_layout(title=_(N_("Engine steps the long prompt took")), yaxis_title=_(N_("engine steps")))
    return [
        Chart(_(N_("Gaps between tokens")), plots.layout(gaps, 320),
              str(render(_, SAID["gaps"], whole=p99.get("whole", float("nan")), chunked=p99.get("chunked", float("nan"))))),
        Chart(_(N_("The long prompt's steps")), plots.layout(took, 280),
              str(render(_, SAID["steps"], whole=steps.get("whole", 0), chunked=steps.get("chunked", 0)))),
    ]
