"""Figures of the queue_delay_trade exercise: fill and time to first token for each delay, and each step's fill."""
from __future__ import annotations

import plotly.graph_objects as go
from plotly.subplots import make_subplots

from app.charts import palette, plots
from app.charts.figures import Chart, listed, render
from app.exercise_kit import ExerciseResult
from app.generation.exercises.queue_delay_trade import engine
from app.generation.exercises.queue_delay_trade.words import CHART_SUMMARIES as SAID
from app.i18n import N_, Say

DELAY_LABELS = {"no_delay": N_("no queue delay"), "delay": N_("queue delay {ms} ms")}
COLOURS = {"no_delay": palette.BLUE, "delay": palette.ORANGE}


def delay_name(code: str, _: Say = str) -> str:
    return _(DELAY_LABELS[code]).format(ms=engine.DELAY_MS)


def figures(result: ExerciseResult, _: Say = str) -> list[Chart]:
    steps, requests = result.tables["steps"], result.tables["requests"]
    both = make_subplots(rows=1, cols=2, subplot_titles=[_(N_("mean step fill")), _(N_("time to first token, median (ms)"))])
    items = []
    for code in engine.DELAYS:
        fill = float(steps[steps["label"] == code]["fill"].mean())
        ttft = float(requests[requests["label"] == code]["ttft_ms"].median())
        name = delay_name(code, _)
        both.add_trace(go.Bar(x=[name], y=[fill], name=name, legendgroup=code, marker_color=COLOURS[code]), row=1, col=1)
        both.add_trace(go.Bar(x=[name], y=[ttft], name=name, legendgroup=code, showlegend=False, marker_color=COLOURS[code]),
                       row=1, col=2)
        items.append(render(_, SAID["trade_item"], delay=name, fill=fill, ttft=ttft))
    both.update_yaxes(tickformat=".0%", range=[0, 1.05], row=1, col=1)
    both.update_layout(title=_(N_("What the queue delay bought and what it cost")))
    per_step = go.Figure()
    for code in engine.DELAYS:
        mine = steps[steps["label"] == code].sort_values("tick")
        per_step.add_trace(go.Scatter(x=list(range(1, len(mine) + 1)), y=mine["fill"], mode="lines+markers", line_shape="hv",
                                      name=delay_name(code, _), line=dict(color=COLOURS[code])))
    per_step.update_layout(title=_(N_("How full each model step was")), xaxis_title=_(N_("model step, in order")),
                           yaxis_title=_(N_("rows used / max batch size")), yaxis=dict(range=[0, 1.05], tickformat=".0%"))
    said = render(_, SAID["trade"], delays=listed(items, _, clauses=True))
    return [Chart(_(N_("Fill and first token")), plots.layout(both, 340), said),
            Chart(_(N_("Step fill")), plots.layout(per_step, 300), said)]
