"""Plotly figures of a generation run (no Streamlit), drawn from plain tables, labels through `_`
(a Words, for the learner's language; plain `str` keeps English).

The tables (app/generation/runs.py makes them from a run's trace):
  tokens      one row per token response: mode, tag, instance, execution, tick (the instance's model step:
              one per execution in flight, one per token position inside a static batch's execution), row,
              batch, step, last (bool: the request's final token), t_s (seconds from the run's start), wrong
              (bool), owner (tag whose state it continued; equal to tag when the token continued its own)
  requests    one row per request: mode, tag, ttft_ms, e2e_ms, tokens
  steps       one row per model step: mode, instance, tick, rows (requests that made a token), fill
              (rows / max_batch_size)

Beside each figure, `<figure>_summary` (same arguments) says its message in a sentence for a learner
who cannot tell its colours apart; its words are app/generation/words.CHART_SUMMARIES.
"""
from __future__ import annotations

from collections.abc import Iterable
from typing import TYPE_CHECKING, Any

import pandas as pd
import plotly.graph_objects as go
from plotly.subplots import make_subplots

from app.charts import palette
from app.charts.figures import Chart, empty_figure, listed, render
from app.generation.words import CHART_SUMMARIES as SAID
from app.generation.words import MARKS, MODES, NUMBERS, REQUEST
from app.i18n import N_, Say, Words, formats
from app.i18n.formats import Measure, Numeric

if TYPE_CHECKING:
    from app.generation.runs import GenRun


MARK_SYMBOLS = {"join": "triangle-right", "step": "square", "leave": "triangle-left"}
MODE_COLOURS = {"static": palette.ORANGE, "inflight": palette.BLUE, "inflight_by_row": palette.REDDISH_PURPLE}
MODE_PATTERNS = {"static": "/", "inflight": "", "inflight_by_row": "x"}


def request_name(tag: Numeric, _: Say = str) -> str:
    return _(REQUEST).format(tag=int(tag))


def mode_name(mode: str, _: Say = str) -> str:
    return _(MODES[mode])


def request_colour(tags: list[int], tag: int) -> str:
    """A request's colour: its place among the run's tags (the same request keeps it in every figure)."""
    return palette.session_colour(sorted(tags).index(int(tag)))


def _mark(row: Any) -> str:  # a row of the trace (itertuples): pandas rows are untyped
    if row.step == 0:
        return "join"
    return "leave" if bool(row.last) else "step"


def timeline(tokens: pd.DataFrame, max_batch_size: int, x: str = "tick", _: Say = str) -> go.Figure:
    """The step-by-row timeline: one panel per instance, model steps (or time) across, batch row up;
    each token a mark in its request's colour, its first token a right-pointing triangle (the request
    joins), its last a left-pointing one (it leaves); grey open squares are rows a step left
    empty; a wrong token is crossed, its hover naming whose state it continued."""
    title = _(N_("Which request ran in which batch row, step by step"))
    if tokens.empty:
        return empty_figure(title, _(N_("No tokens came back in this run.")))
    instances = sorted(int(i) for i in tokens["instance"].unique())
    fig = make_subplots(rows=len(instances), cols=1, shared_xaxes=True, vertical_spacing=0.08,
                        subplot_titles=[render(_, N_("instance {n:count}"), n=i) for i in instances])
    tags = sorted(int(t) for t in tokens["tag"].unique())
    x_title = _(N_("model step of the instance")) if x == "tick" else _(N_("seconds from the first request"))
    for panel, instance in enumerate(instances, start=1):
        mine = tokens[tokens["instance"] == instance]
        # Every row place a step left empty, so a half-empty batch shows as one.
        at = mine.groupby("tick").agg(used=("row", lambda r: set(int(v) for v in r)), t_s=("t_s", "min"))
        empty = [(e, r, t) for e, (used, t) in at.iterrows() for r in range(max_batch_size) if r not in used]
        if empty:
            fig.add_trace(go.Scatter(
                x=[e if x == "tick" else t for e, _r, t in empty], y=[r for _e, r, _t in empty], mode="markers",
                name=_(MARKS["empty"]), legendgroup="empty", showlegend=panel == 1, hoverinfo="skip",
                marker=dict(symbol="square-open", size=12, color=palette.LIGHT_GREY)), row=panel, col=1)
        for tag in tags:
            own = mine[mine["tag"] == tag]
            if own.empty:
                continue
            marks = [_mark(r) for r in own.itertuples()]
            hover = [render(_, N_("{request:text}, token {step:count}, row {row:count} of {batch:count}"),
                            request=request_name(tag, _), step=int(r.step) + 1, row=int(r.row),
                            batch=int(r.batch) if "batch" in own else max_batch_size) for r in own.itertuples()]
            fig.add_trace(go.Scatter(
                x=own["tick" if x == "tick" else "t_s"], y=own["row"], mode="markers", name=request_name(tag, _),
                legendgroup=f"tag-{tag}", showlegend=bool(panel == 1 or instance == own["instance"].iloc[0]),
                hovertext=hover, hoverinfo="text",
                marker=dict(symbol=[MARK_SYMBOLS[m] for m in marks], size=12, color=request_colour(tags, tag),
                            line=dict(width=1, color=palette.OUTLINE))), row=panel, col=1)
        wrong = mine[mine["wrong"].astype(bool)]
        if not wrong.empty:
            fig.add_trace(go.Scatter(
                x=wrong["tick" if x == "tick" else "t_s"], y=wrong["row"], mode="markers", name=_(MARKS["wrong"]),
                legendgroup="wrong", showlegend=True,
                hovertext=[render(_, N_("{request:text}: wrong token, it continued {owner:text}'s state"),
                                  request=request_name(r.tag, _), owner=request_name(r.owner, _)) for r in wrong.itertuples()],
                hoverinfo="text", marker=dict(symbol="x-thin-open", size=16, color=palette.BAD, line=dict(width=3))),
                row=panel, col=1)
        fig.update_yaxes(title_text=_(N_("batch row")), range=[-0.6, max_batch_size - 0.4], dtick=1, row=panel, col=1)
    fig.update_xaxes(title_text=x_title, row=len(instances), col=1)
    fig.update_layout(title=title, height=170 + 150 * len(instances), margin=dict(l=10, r=10, t=60, b=10),
                      legend_title_text="")
    return palette.finish(fig)


def timeline_summary(tokens: pd.DataFrame, max_batch_size: int, x: str = "tick", _: Say = str) -> str:
    del x  # the same counts whichever axis runs across
    if tokens.empty:
        return _(N_("No tokens came back in this run."))
    ticks = tokens.drop_duplicates(["instance", "tick"])
    executions = tokens.drop_duplicates(["instance", "execution"])
    said = render(_, SAID["timeline"], tokens=len(tokens), requests=tokens["tag"].nunique(), executions=len(executions),
                  ticks=len(ticks), rows=max_batch_size, empty=len(ticks) * max_batch_size - len(tokens))
    joined = _joined(tokens)
    parts = [said, render(_, SAID["timeline_joined"], n=joined)]
    wrong = tokens[tokens["wrong"].astype(bool)]
    if wrong.empty:
        parts.append(_(SAID["timeline_right"]))
    else:
        owners = [request_name(o, _) for o in sorted(int(v) for v in wrong["owner"].unique())]
        parts.append(render(_, SAID["timeline_wrong"], n=len(wrong), owners=listed(owners, _)))
    return " ".join(parts)


def _joined(tokens: pd.DataFrame) -> int:
    """Requests whose first token was made in a model step beside a request that had already started.
    By model step (tick), not execution: a static execution runs many steps, and the requests of its
    batch all start at its first one, so none of them joined a running batch."""
    firsts = tokens[tokens["step"] == 0]
    later = tokens[tokens["step"] > 0]
    running = set(zip(later["instance"], later["tick"], strict=True))
    return int(sum((i, k) in running for i, k in zip(firsts["instance"], firsts["tick"], strict=True)))


def latencies(requests: pd.DataFrame, _: Say = str) -> go.Figure:
    """Per request, time to first token and end to end, one bar per mode side by side (the same workload)."""
    title = _(N_("Time to first token and end to end, per request"))
    if requests.empty:
        return empty_figure(title, _(N_("No requests in this run.")))
    fig = make_subplots(rows=1, cols=2, subplot_titles=[_(N_("time to first token")), _(N_("end to end"))])
    for mode, mine in requests.groupby("mode", sort=False):
        names = [request_name(t, _) for t in mine["tag"]]
        for col, column in ((1, "ttft_ms"), (2, "e2e_ms")):
            fig.add_trace(go.Bar(x=names, y=mine[column], name=mode_name(str(mode), _), legendgroup=str(mode),
                                 showlegend=col == 1, marker=dict(color=MODE_COLOURS[str(mode)],
                                                                  pattern_shape=MODE_PATTERNS[str(mode)])),
                          row=1, col=col)
    fig.update_yaxes(title_text=_(N_("milliseconds")), row=1, col=1)
    fig.update_layout(title=title, barmode="group", height=360, margin=dict(l=10, r=10, t=60, b=10), legend_title_text="")
    return palette.finish(fig)


def latencies_summary(requests: pd.DataFrame, _: Say = str) -> str:
    if requests.empty:
        return _(N_("No requests in this run."))
    items = [render(_, SAID["latencies_item"], mode=mode_name(str(mode), _), ttft=float(mine["ttft_ms"].median()),
                    e2e=float(mine["e2e_ms"].median()))
             for mode, mine in requests.groupby("mode", sort=False)]
    return str(render(_, SAID["latencies"], modes=listed(items, _, clauses=True)))


def fill(steps: pd.DataFrame, _: Say = str) -> go.Figure:
    """Each model step's fill (rows that made a token / max batch size), one line per mode, steps across."""
    title = _(N_("How full each model step was"))
    if steps.empty:
        return empty_figure(title, _(N_("No executions in this run.")))
    fig = go.Figure()
    for mode, mine in steps.groupby("mode", sort=False):
        ordered = mine.sort_values(["tick", "instance"]).reset_index(drop=True)
        fig.add_trace(go.Scatter(x=list(range(1, len(ordered) + 1)), y=ordered["fill"], mode="lines+markers",
                                 line_shape="hv", name=mode_name(str(mode), _), line=dict(color=MODE_COLOURS[str(mode)]),
                                 marker=dict(color=MODE_COLOURS[str(mode)])))
    fig.update_layout(title=title, height=300, margin=dict(l=10, r=10, t=60, b=10), legend_title_text="",
                      xaxis_title=_(N_("model step, in order")), yaxis_title=_(N_("rows used / max batch size")),
                      yaxis=dict(range=[0, 1.05], tickformat=".0%"))
    return palette.finish(fig)


def fill_summary(steps: pd.DataFrame, _: Say = str) -> str:
    if steps.empty:
        return _(N_("No executions in this run."))
    items = [render(_, SAID["fill_item"], mode=mode_name(str(mode), _), fill=float(mine["fill"].mean()), steps=len(mine))
             for mode, mine in steps.groupby("mode", sort=False)]
    return str(render(_, SAID["fill"], modes=listed(items, _, clauses=True)))


def charts(tokens: pd.DataFrame, requests: pd.DataFrame, steps: pd.DataFrame, max_batch_size: int,
           x: str = "tick", _: Say = str) -> list[Chart]:
    """The run's charts with their captions and summaries: one timeline per mode, then latencies and fill."""
    out = []
    for mode, mine in tokens.groupby("mode", sort=False):
        out.append(Chart(render(_, N_("Timeline: {mode:text}"), mode=mode_name(str(mode), _)),
                         timeline(mine, max_batch_size, x, _), timeline_summary(mine, max_batch_size, x, _)))
    out.append(Chart(_(N_("Latency per request")), latencies(requests, _), latencies_summary(requests, _)))
    out.append(Chart(_(N_("Step fill")), fill(steps, _), fill_summary(steps, _)))
    return out


def number_text(name: str, value: Measure, _: Words, percents: Iterable[str] = ("mean_fill",)) -> str:
    """One of a run's numbers (words.NUMBERS) written in the reader's language: a share in
    `percents` as a percentage, a count as a count, anything else as a number."""
    if name in percents:
        return formats.percent(value, _)
    if isinstance(value, int):
        return formats.count(value, _)
    return formats.number(value, _)


def numbers_table(done: Iterable[GenRun], _: Words) -> pd.DataFrame:
    """The runs' numbers side by side: one column per run's mode, one row per words.NUMBERS entry."""
    return pd.DataFrame({mode_name(r.mode, _): [number_text(k, r.numbers[k], _) for k in NUMBERS] for r in done},
                        index=[_(label) for label in NUMBERS.values()])
