"""Figures of the kv_cancelled_blocks exercise: blocks in use after the cancel, the others' and the
rest, per engine step, and the gauge after the run."""
from __future__ import annotations

import plotly.graph_objects as go

from app.charts import palette, plots
from app.charts.figures import Chart, render
from app.exercise_kit import ExerciseResult
from app.generation.exercises.kv_cancelled_blocks.words import CHART_SUMMARIES as SAID
from app.i18n import N_, Say


def figures(result: ExerciseResult, _: Say = str) -> list[Chart]:
    held = result.tables["held"]
    steps = go.Figure([
        go.Bar(x=held["step"], y=held["neighbour_blocks"], name=_(N_("held by the other requests")),
               marker_color=palette.BLUE),
        go.Bar(x=held["step"], y=held["others"], name=_(N_("held by no other request")), marker_color=palette.VERMILLION),
    ])
    steps.update_layout(title=_(N_("Blocks in use after the cancelled request's last token")), barmode="stack",
                        xaxis_title=_(N_("engine step")), yaxis_title=_(N_("blocks")))
    used = int(result.tables["gauge"]["blocks_used_after"].iloc[0])
    gauge = go.Figure([go.Bar(x=[_(N_("after the run"))], y=[used], marker_color=palette.GREY, text=[used])])
    gauge.update_layout(title=_(N_("kv_blocks_used after the run")), yaxis_title=_(N_("blocks")))
    return [
        Chart(_(N_("Blocks after the cancel")), plots.layout(steps, 300),
              str(render(_, SAID["blocks"], steps=len(held), held=int(held["others"].iloc[-1]) if len(held) else 0))),
        Chart(_(N_("The gauge")), plots.layout(gauge, 260), str(render(_, SAID["gauge"], used=used))),
    ]
