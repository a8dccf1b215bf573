"""Figures of the never_ending exercise (engine.py beside it), drawn only from its result's
tables and numbers; captions, axes and legends pass through _ (a Words, for the learner's language)."""
from __future__ import annotations

import plotly.express as px
import plotly.graph_objects as go

from app.charts import palette, plots
from app.charts.figures import Chart, listed, render, sentences
from app.exercise_kit import ExerciseResult
from app.i18n import N_, Say
from app.recogniser.exercises.never_ending.words import CHART_SUMMARIES as SAID

READ_LABELS = {True: N_("fresh cell (owner 0)"), False: N_("its own state")}


def figures(result: ExerciseResult, _: Say = str) -> list[Chart]:
    """The exercise's charts, each drawn from one of the result's tables, labels through _."""
    grid = result.tables["grid"].copy()
    reaped_after = _(N_("reaped after {chunks} chunk(s)"))
    grid["label"] = grid.apply(
        lambda r: reaped_after.format(chunks=r.chunks_answered) if r.reaped else plots.verdict_name(r.verdict, _), axis=1
    )
    grid["reaped_num"] = grid["reaped"].astype(int)
    pivot = grid.pivot(index="timeout_ms", columns="think_ms", values="reaped_num")
    labels = grid.pivot(index="timeout_ms", columns="think_ms", values="label")
    heat = go.Figure(go.Heatmap(
        z=pivot.values, x=[_(N_("think {ms} ms")).format(ms=c) for c in pivot.columns],
        y=[_(N_("timeout {ms} ms")).format(ms=i) for i in pivot.index],
        text=labels.values, texttemplate="%{text}", colorscale=[[0, palette.LIGHT_GOOD], [1, palette.LIGHT_BAD]], showscale=False,
        zmin=0, zmax=1,
    ))
    heat.update_layout(title=_(N_("Slow but healthy client: reaped when it thinks longer than the timeout")))
    dead = result.tables["dead_client"]
    blocked = px.bar(dead, x=dead["timeout_ms"].astype(str) + " ms", y="waiter_blocked_ms",
                     labels={"x": _(N_("idle timeout")), "waiter_blocked_ms": _(N_("next session blocked (ms)"))},
                     title=_(N_("Dead client (no END): how long the next session waited for its slot")))
    chunks = result.tables["evict_chunks"].copy()
    chunks["read"] = chunks["state_owner"].map(lambda o: _(READ_LABELS[int(o) == 0]))
    chunks["letter"] = plots.symbol_words(chunks["symbol"] == chunks["expected"], _)
    evict = px.scatter(chunks, x="t_send", y="state_in", color="read", symbol="letter",
                       labels={"t_send": _(N_("sent at (s)")), "state_in": "STATE_IN"},
                       title=_(N_("After the pause the model had evicted the session's cell; Triton kept the sequence")))
    evict.update_traces(marker_size=11)
    if len(chunks) > 3:
        evict.add_vrect(x0=chunks["t_send"].iloc[2], x1=chunks["t_send"].iloc[3], fillcolor=palette.LIGHT_GREY, opacity=0.4,
                        line_width=0, annotation_text=_(N_("pause")), annotation_position="top left")
    return [Chart(_(N_("Timeout x think time")), plots.layout(heat), _grid_summary(result, _)),
            Chart(_(N_("Dead client")), plots.layout(blocked), _dead_summary(result, _)),
            Chart(_(N_("Model's own clean-up")), plots.layout(evict), _evict_summary(result, _))]


def _grid_summary(result: ExerciseResult, _: Say = str) -> str:
    """Which cells of the heatmap (timeout x think time) were reaped."""
    grid = result.tables["grid"]
    reaped = grid[grid["reaped"].astype(bool)]
    told = render(_, SAID["grid"], reaped=len(reaped), cells=len(grid))
    pairs = [render(_, SAID["grid_item"], think=r.think_ms, timeout=r.timeout_ms) for r in reaped.itertuples()]
    return sentences(told, render(_, SAID["grid_reaped"], pairs=listed(pairs, _)) if pairs else "")


def _dead_summary(result: ExerciseResult, _: Say = str) -> str:
    """Each bar of the dead-client chart: the idle timeout and how long the next session waited."""
    dead = result.tables["dead_client"]
    bars = [render(_, SAID["dead_item"], timeout=r.timeout_ms, blocked=r.waiter_blocked_ms) for r in dead.itertuples()]
    return render(_, SAID["dead"], bars=listed(bars, _))


def _evict_summary(result: ExerciseResult, _: Say = str) -> str:
    """The clean-up chart's points: chunks that read a fresh cell, and wrong letters."""
    chunks = result.tables["evict_chunks"]
    return render(_, SAID["evict"], fresh=int((chunks["state_owner"].astype(int) == 0).sum()), chunks=len(chunks),
                  wrong=int((chunks["symbol"] != chunks["expected"]).sum()))
