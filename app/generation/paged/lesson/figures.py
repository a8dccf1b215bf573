"""The live element's figure: the blocks in use and the requests running and waiting at every engine
step, from the run's steps table (engine.LessonRun.steps); labels through `_` (a Words, for the
learner's language; plain `str` keeps English). Beside it, `steps_summary` says its message in a
sentence for a reader who cannot tell its lines apart."""
from __future__ import annotations

import pandas as pd
import plotly.graph_objects as go
from plotly.subplots import make_subplots

from app.charts import palette
from app.charts.figures import empty_figure, render
from app.generation.paged.lesson import words
from app.i18n import Say

COLOURS = {"used_blocks": palette.BLUE, "running": palette.BLUISH_GREEN, "waiting": palette.VERMILLION,
           "capacity": palette.DARK_GREY}


def steps(table: pd.DataFrame, blocks: int, _: Say = str) -> go.Figure:
    """Blocks in use (bars, left axis, with the cache's size as a line) and requests running and
    waiting (lines, right axis), one point per engine step that made a token."""
    title = _(words.CHART_TITLE)
    if table.empty:
        return empty_figure(title, _(words.NO_STEPS))
    fig = make_subplots(specs=[[{"secondary_y": True}]])
    x = table["step"].astype(int)
    fig.add_trace(go.Bar(x=x, y=table["used_blocks"], name=_(words.TRACES["used_blocks"]),
                         marker=dict(color=COLOURS["used_blocks"])), secondary_y=False)
    fig.add_trace(go.Scatter(x=x, y=[blocks] * len(table), mode="lines", name=_(words.TRACES["capacity"]),
                             line=dict(color=COLOURS["capacity"], dash="dash")), secondary_y=False)
    for column, dash in (("running", "solid"), ("waiting", "dot")):
        fig.add_trace(go.Scatter(x=x, y=table[column], mode="lines+markers", line_shape="hv",
                                 name=_(words.TRACES[column]), line=dict(color=COLOURS[column], dash=dash),
                                 marker=dict(color=COLOURS[column])), secondary_y=True)
    fig.update_layout(title=title, height=340, margin=dict(l=10, r=10, t=60, b=10), legend_title_text="",
                      xaxis_title=_(words.AXIS_STEP))
    fig.update_yaxes(title_text=_(words.AXIS_BLOCKS), range=[0, blocks * 1.05], secondary_y=False)
    fig.update_yaxes(title_text=_(words.AXIS_REQUESTS), rangemode="tozero", secondary_y=True)
    return palette.finish(fig)


def steps_summary(table: pd.DataFrame, blocks: int, _: Say = str) -> str:
    if table.empty:
        return _(words.NO_STEPS)
    return render(_, words.CHART_SUMMARY, steps=len(table), used=int(table["used_blocks"].max()), blocks=blocks,
                  running=int(table["running"].max()), waiting=int(table["waiting"].max()))
