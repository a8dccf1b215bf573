"""Figures of the slot_exhaustion exercise (engine.py beside it), drawn only from its result's
tables and numbers; captions, axes and legends pass through _ (a Words, for the learner's language)."""
from __future__ import annotations

import pandas as pd
import plotly.express as px
import plotly.graph_objects as go

from app.charts import palette, plots
from app.charts.figures import Chart, listed, render
from app.exercise_kit import ExerciseResult
from app.i18n import N_, Say
from app.recogniser.exercises.slot_exhaustion.words import CHART_SUMMARIES as SAID

WAIT_LABELS = {"waiting": N_("{strategy}: waiting"), "holding": N_("{strategy}: holding a slot")}


def figures(result: ExerciseResult, _: Say = str) -> list[Chart]:
    """The exercise's charts, each drawn from one of the result's tables, labels through _."""
    s = result.tables["sessions"].assign(who=lambda f: plots.session_names(f, _))
    waits = px.bar(s, x="who", y="wait_ms", color="strategy", barmode="group",
                   labels={"who": "", "wait_ms": _(N_("backlog wait of first chunk (ms)")), "strategy": _(N_("strategy"))},
                   title=_(N_("How long each session waited for a slot")))
    h = result.tables["holding"].assign(who=lambda f: plots.session_names(f, _))
    arrived = s.set_index(["strategy", "session"])["arrived_s"]
    timeline = go.Figure()
    for strategy, rows in h.groupby("strategy"):
        waiting = [arrived.get((strategy, r.session), r.held_from) for r in rows.itertuples()]
        timeline.add_bar(y=rows["who"] + f" ({strategy})", x=rows["held_from"] - pd.Series(waiting, index=rows.index),
                         base=waiting, orientation="h", name=_(WAIT_LABELS["waiting"]).format(strategy=strategy),
                         marker_color=palette.LIGHT_GREY)
        timeline.add_bar(y=rows["who"] + f" ({strategy})", x=rows["held_to"] - rows["held_from"], base=rows["held_from"],
                         orientation="h", name=_(WAIT_LABELS["holding"]).format(strategy=strategy),
                         marker_color=palette.BLUE if strategy == "direct" else palette.ORANGE)
    timeline.update_layout(barmode="overlay", title=_(N_("Waiting in the backlog, then holding a slot until END")),
                           xaxis_title=_(N_("seconds from the start of the run")))
    capacity = result.numbers.get("capacity_sequences", 2)
    sweep = px.line(result.tables["sweep"], x="sessions", y="max_wait_ms", color="strategy", markers=True,
                    labels={"max_wait_ms": _(N_("longest backlog wait (ms)")), "sessions": _(N_("open sessions")),
                            "strategy": _(N_("strategy"))},
                    title=_(N_("Backlog wait vs open sessions (capacity {capacity})")).format(capacity=capacity))
    sweep.add_vline(x=capacity, line_dash="dot")
    waited = [render(_, SAID["waits_item"], strategy=strategy, waited=int((mine["wait_ms"] > 0).sum()), sessions=len(mine),
                     longest=float(mine["wait_ms"].max()))
              for strategy, mine in s.groupby("strategy", sort=True)]
    held = [render(_, SAID["holding_item"], strategy=strategy, sessions=len(rows),
                   longest=float((rows["held_to"] - rows["held_from"]).max()))
            for strategy, rows in h.groupby("strategy")]
    swept = []
    for strategy, rows in result.tables["sweep"].groupby("strategy", sort=True):
        rows = rows.sort_values("sessions")
        swept.append(render(_, SAID["sweep_item"], strategy=strategy, low=float(rows["max_wait_ms"].iloc[0]),
                            few=int(rows["sessions"].iloc[0]), high=float(rows["max_wait_ms"].iloc[-1]), many=int(rows["sessions"].iloc[-1])))
    return [Chart(_(N_("Backlog wait per session")), plots.layout(waits), render(_, SAID["waits"], strategies=listed(waited, _, clauses=True))),
            Chart(_(N_("Slot timeline")), plots.layout(timeline, 380), render(_, SAID["holding"], strategies=listed(held, _, clauses=True))),
            Chart(_(N_("Sweep")), plots.layout(sweep), render(_, SAID["sweep"], strategies=listed(swept, _, clauses=True), capacity=capacity))]
