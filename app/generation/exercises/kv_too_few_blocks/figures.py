"""Figures of the kv_too_few_blocks exercise: each request's time to first token in both runs, and
the requests waiting at each engine step."""
from __future__ import annotations

import plotly.graph_objects as go

from app.charts import palette, plots
from app.charts.figures import Chart, listed, render
from app.exercise_kit import ExerciseResult
from app.generation.exercises.kv_too_few_blocks.words import CHART_SUMMARIES as SAID
from app.i18n import N_, Say

LABELS = {"plenty": N_("64 blocks"), "few": N_("8 blocks")}
COLOURS = {"plenty": palette.BLUE, "few": palette.VERMILLION}


def figures(result: ExerciseResult, _: Say = str) -> list[Chart]:
    requests, steps = result.tables["requests"], result.tables["steps"]
    bars = go.Figure([go.Bar(x=mine["index"], y=mine["ttft_ms"], name=_(LABELS[label]), marker_color=COLOURS[label])
                      for label, mine in requests.groupby("label", sort=False)])
    bars.update_layout(title=_(N_("Time to first token per request")), barmode="group",
                       xaxis_title=_(N_("request")), yaxis_title=_(N_("time to first token (ms)")))
    items = [render(_, SAID["ttft_item"], run=_(LABELS[str(label)]),
                    p95=float(mine["ttft_ms"].quantile(0.95))) for label, mine in requests.groupby("label", sort=False)]
    waiting = go.Figure([go.Scatter(x=list(range(len(mine))), y=mine["waiting"], name=_(LABELS[label]), mode="lines",
                                    line=dict(color=COLOURS[label], shape="hv"))
                         for label, mine in steps.groupby("label", sort=False)])
    waiting.update_layout(title=_(N_("Requests waiting for memory at each engine step")),
                          xaxis_title=_(N_("engine step of the run")), yaxis_title=_(N_("requests waiting")))
    peak = {label: int(mine["waiting"].max()) for label, mine in steps.groupby("label")}
    return [
        Chart(_(N_("First tokens")), plots.layout(bars, 320), str(render(_, SAID["ttft"], runs=listed(items, _)))),
        Chart(_(N_("Waiting for memory")), plots.layout(waiting, 300),
              str(render(_, SAID["waiting"], plenty=peak.get("plenty", 0), few=peak.get("few", 0)))),
    ]
