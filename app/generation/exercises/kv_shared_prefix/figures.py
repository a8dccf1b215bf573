"""Figures of the kv_shared_prefix exercise: each request's prompt blocks found in the cache, and its
time to first token, with sharing off and on."""
from __future__ import annotations

import plotly.graph_objects as go

from app.charts import palette, plots
from app.charts.figures import Chart, render
from app.exercise_kit import ExerciseResult
from app.generation.exercises.kv_shared_prefix.words import CHART_SUMMARIES as SAID
from app.i18n import N_, Say

LABELS = {"off": N_("prefix sharing off"), "on": N_("prefix sharing on")}
COLOURS = {"off": palette.GREY, "on": palette.BLUE}


def figures(result: ExerciseResult, _: Say = str) -> list[Chart]:
    requests = result.tables["requests"]
    runs = list(requests.groupby("label", sort=False))
    found = go.Figure([go.Bar(x=mine["index"], y=mine["prefix_blocks"], name=_(LABELS[str(label)]),
                              marker_color=COLOURS[str(label)]) for label, mine in runs])
    found.update_layout(title=_(N_("Prompt blocks each request found in the cache")), barmode="group",
                        xaxis_title=_(N_("request")), yaxis_title=_(N_("blocks found")))
    ttft = go.Figure([go.Bar(x=mine["index"], y=mine["ttft_ms"], name=_(LABELS[str(label)]),
                             marker_color=COLOURS[str(label)]) for label, mine in runs])
    ttft.update_layout(title=_(N_("Time to first token per request")), barmode="group",
                       xaxis_title=_(N_("request")), yaxis_title=_(N_("time to first token (ms)")))
    total = {str(label): int(mine["prefix_blocks"].sum()) for label, mine in runs}
    p50 = {str(label): float(mine["ttft_ms"].median()) for label, mine in runs}
    return [
        Chart(_(N_("Blocks found")), plots.layout(found, 300),
              str(render(_, SAID["blocks"], off=total.get("off", 0), on=total.get("on", 0)))),
        Chart(_(N_("First tokens")), plots.layout(ttft, 300),
              str(render(_, SAID["ttft"], off=p50.get("off", float("nan")), on=p50.get("on", float("nan"))))),
    ]
