"""Figures of the leaked_state exercise (engine.py beside it), drawn only from its result's
tables and numbers; captions, axes and legends pass through _ (a Words, for the learner's language)."""
from __future__ import annotations

import pandas as pd
import plotly.express as px

from app.charts import palette, plots
from app.charts.figures import Chart, listed, render
from app.exercise_kit import ExerciseResult
from app.i18n import N_, Say
from app.lab.observation import state_cells
from app.recogniser.exercises.leaked_state import engine as leaked_state
from app.recogniser.exercises.leaked_state.words import CHART_SUMMARIES as SAID

DEPLOYMENT_LABELS = {"keep": N_("no eviction"), "evict": N_("idle_evict_s {evict} s")}
MEASURE_LABELS = {
    "abandoned": N_("sessions that vanished"),
    "reaped_logged": N_("reaper force-ends in the log"),
    "cells_added": N_("cells the model still holds for them"),
    "evicted": N_("cells the model evicted"),
}


def deployment_name(code: str, _: Say = str) -> str:
    return _(DEPLOYMENT_LABELS[code]).format(evict=f"{leaked_state.EVICT_S:g}")


def mark_name(mark: str, _: Say = str) -> str:
    if mark == leaked_state.HEALTHY:
        return _(N_("healthy session"))
    return _(N_("wave {n}")).format(n=mark.removeprefix("wave_"))


def figures(result: ExerciseResult, _: Say = str) -> list[Chart]:
    """The exercise's charts, each drawn from one of the result's tables."""
    cells = state_cells.totals(result.tables["cells"], by=("deployment",))
    cells["deployment"] = cells["deployment"].map(lambda code: deployment_name(code, _))
    gauge = px.line(cells, x="t", y="cells", color="deployment", line_shape="hv", markers=True,
                    labels={"t": _(N_("seconds from the first wave")), "cells": _(N_("state cells the model holds")),
                            "deployment": ""},
                    title=_(N_("The model's own gauge (asr_state_cells) as sessions vanish without END")))
    marks = result.tables["marks"]
    for mark in marks.drop_duplicates("label").itertuples():
        gauge.add_vline(x=mark.t, line_dash="dot", line_color=palette.GREY, annotation_text=mark_name(mark.label, _),
                        annotation_position="top left")
    tally = result.tables["tally"].melt(id_vars="deployment", value_vars=list(MEASURE_LABELS),
                                        var_name="measure", value_name="count")
    tally["measure"] = tally["measure"].map(lambda code: _(MEASURE_LABELS[code]))
    tally["deployment"] = tally["deployment"].map(lambda code: deployment_name(code, _))
    bars = px.bar(tally.dropna(), x="measure", y="count", color="deployment", barmode="group", text="count",
                  labels={"measure": "", "count": "", "deployment": ""},
                  title=_(N_("Triton freed every slot; only the model's own eviction freed its state")))
    return [Chart(_(N_("The model's gauge")), plots.layout(gauge, 380), _gauge_summary(result, _)),
            Chart(_(N_("Tally")), plots.layout(bars), _tally_summary(result, _))]


def _gauge_summary(result: ExerciseResult, _: Say = str) -> str:
    """Per deployment (a line of the gauge): the cells at the first sample, at most, and at the end."""
    cells = state_cells.totals(result.tables["cells"], by=("deployment",))
    lines = [render(_, SAID["gauge_item"], deployment=deployment_name(code, _), first=int(mine["cells"].iloc[0]),
                    peak=int(mine["cells"].max()), last=int(mine["cells"].iloc[-1]))
             for code, mine in ((c, m.sort_values("t")) for c, m in cells.groupby("deployment", sort=False))]
    return render(_, SAID["gauge"], deployments=listed(lines, _, clauses=True))


def _tally_summary(result: ExerciseResult, _: Say = str) -> str:
    """Per deployment (a group of bars): each measure the tally counted."""
    tally = result.tables["tally"]
    groups = []
    for row in tally.itertuples():
        counted = [render(_, SAID["measure_item"], measure=_(MEASURE_LABELS[m]), n=int(getattr(row, m)))
                   for m in MEASURE_LABELS if pd.notna(getattr(row, m))]  # not measured: left out, as the chart drops it
        groups.append(render(_, SAID["tally_item"], deployment=deployment_name(row.deployment, _), measures=listed(counted, _)))
    return render(_, SAID["tally"], deployments=listed(groups, _, clauses=True))
