"""Figures of the leaked_state exercise (app/lab/exercises/leaked_state.py), drawn only from its result's
tables and numbers; captions, axes and legends pass through _ (a Words, for the learner's language)."""
from __future__ import annotations

import plotly.express as px
import plotly.graph_objects as go

from app.charts import plots
from app.i18n import N_
from app.lab.exercises.common.base import ExerciseResult
from app.lab.exercises.leaked_state import EVICT_S, HEALTHY
from app.lab.observation import state_cells

DEPLOYMENT_LABELS = {"keep": N_("no eviction"), "evict": N_("idle_evict_s {evict} s")}
MEASURE_LABELS = {
    "abandoned": N_("sessions that vanished"),
    "reaped_logged": N_("reaper force-ends in the log"),
    "cells_added": N_("cells the model still holds for them"),
    "evicted": N_("cells the model evicted"),
}


def deployment_name(code: str, _=str) -> str:
    return _(DEPLOYMENT_LABELS[code]).format(evict=f"{EVICT_S:g}")


def mark_name(mark: str, _=str) -> str:
    if mark == HEALTHY:
        return _(N_("healthy session"))
    return _(N_("wave {n}")).format(n=mark.removeprefix("wave_"))


def figures(result: ExerciseResult, _=str) -> list[tuple[str, go.Figure]]:
    """The exercise's charts, each drawn from one of the result's tables."""
    cells = state_cells.totals(result.tables["cells"], by=("deployment",))
    cells["deployment"] = cells["deployment"].map(lambda code: deployment_name(code, _))
    gauge = px.line(cells, x="t", y="cells", color="deployment", line_shape="hv", markers=True,
                    labels={"t": _(N_("seconds from the first wave")), "cells": _(N_("state cells the model holds")),
                            "deployment": ""},
                    title=_(N_("The model's own gauge (asr_state_cells) as sessions vanish without END")))
    marks = result.tables["marks"]
    for mark in marks.drop_duplicates("label").itertuples():
        gauge.add_vline(x=mark.t, line_dash="dot", line_color="#888", annotation_text=mark_name(mark.label, _),
                        annotation_position="top left")
    tally = result.tables["tally"].melt(id_vars="deployment", value_vars=list(MEASURE_LABELS),
                                        var_name="measure", value_name="count")
    tally["measure"] = tally["measure"].map(lambda code: _(MEASURE_LABELS[code]))
    tally["deployment"] = tally["deployment"].map(lambda code: deployment_name(code, _))
    bars = px.bar(tally.dropna(), x="measure", y="count", color="deployment", barmode="group", text="count",
                  labels={"measure": "", "count": "", "deployment": ""},
                  title=_(N_("Triton freed every slot; only the model's own eviction freed its state")))
    return [(_(N_("The model's gauge")), plots.layout(gauge, 380)), (_(N_("Tally")), plots.layout(bars))]
