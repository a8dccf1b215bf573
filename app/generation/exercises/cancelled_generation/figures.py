"""Figures of the cancelled_generation exercise: the model's state cells before and after, and both timelines."""
from __future__ import annotations

import plotly.graph_objects as go

from app.charts import palette, plots
from app.charts.figures import Chart, listed, render
from app.exercise_kit import ExerciseResult
from app.generation import figures as drawing
from app.generation.exercises.cancelled_generation import engine
from app.generation.exercises.cancelled_generation.words import CHART_SUMMARIES as SAID
from app.i18n import N_, Say

DEPLOYMENT_LABELS = {"honour": N_("honour_cancel true"), "ignore": N_("honour_cancel false")}
WHEN = {"cells_before": N_("before the run"), "cells_after": N_("after the run")}
COLOURS = {"cells_before": palette.GREY, "cells_after": palette.BAD}


def figures(result: ExerciseResult, _: Say = str) -> list[Chart]:
    cells = result.tables["cells"]
    names = [_(DEPLOYMENT_LABELS[code]) for code in cells["deployment"]]
    bars = go.Figure([go.Bar(x=names, y=cells[column], name=_(label), marker_color=COLOURS[column], text=cells[column])
                      for column, label in WHEN.items()])
    bars.update_layout(title=_(N_("The model's own gauge (gen_state_cells) around a cancelled request")), barmode="group",
                       yaxis_title=_(N_("state cells the model holds")))
    items = [render(_, SAID["cells_item"], deployment=name, before=int(row.cells_before), after=int(row.cells_after))
             for name, row in zip(names, cells.itertuples(), strict=True)]
    out = [Chart(_(N_("State cells")), plots.layout(bars, 320), str(render(_, SAID["cells"], deployments=listed(items, _))))]
    tokens = result.tables["tokens"]
    for label, mine in tokens.groupby("label", sort=False):
        out.append(Chart(_(DEPLOYMENT_LABELS[str(label)]),
                         plots.layout(drawing.timeline(mine, engine.SETUP.max_batch_size, "tick", _), 320),
                         drawing.timeline_summary(mine, engine.SETUP.max_batch_size, "tick", _)))
    return out
