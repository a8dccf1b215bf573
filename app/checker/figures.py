"""Figures of a deployment check (app/checker/engine): the executions over time from the server's trace
(for a decoupled model: its response streams over time as the client heard them), and each broken
session's difference from its reference over the steps. No Streamlit.

Both are drawn from the engine's tables (app/checker/engine/reports/report.timeline and .errors), so a test or
a benchmark builds exactly what the page shows. Every title, axis, legend entry and hover label
passes through `_`, the reader's Words; timeline_summary and each errors() Chart's summary say the
figure's message in words (app/checker/words/charts.py).
"""
from __future__ import annotations

import math
from typing import TYPE_CHECKING

import numpy as np
import pandas as pd
import plotly.graph_objects as go

from app.charts import palette
from app.charts.figures import LEGEND_SESSIONS, WRONG_COLOUR, Chart, empty_figure, session_colour
from app.checker import words as check_words
from app.checker.engine import check_errors, check_stream_timeline, check_timeline
from app.checker.words import page as check_page
from app.checker.words.charts import CHART_SUMMARIES as SUMMARIES
from app.i18n import N_, Words

if TYPE_CHECKING:
    from app.checker.engine import CheckResult

LANE_HEIGHT = 0.8  # of a lane's row; an execution's requests share it in stripes, one per request
PHASE_COLOURS = (palette.rgba(palette.BLUE, 0.07), palette.rgba(palette.ORANGE, 0.07))
MIN_LABELLED_SHARE = 0.08  # a phase band narrower than this share of the check gets no label
DASHES = palette.DASHES  # one per output, the colour being the session's


def _row_label(variant: str, lane: object, two_variants: bool, _: Words) -> str:
    name = check_page.lane(lane, _)
    if not two_variants:
        return name
    return _.render(N_("{variant:text} · {lane:text}"), variant=_(check_words.VARIANTS[variant]), lane=name)


def timeline(result: CheckResult, _: Words) -> go.Figure:
    """One row per instance (the lane the engine placed each execution in), time across; each
    execution a bar split into one stripe per request, coloured by its session; a red mark on
    every step that differed from its reference beyond tolerance; the check's phases as bands."""
    if result.streams is not None:
        return _stream_timeline(result, _)
    title = _(N_("Executions over time: one row per instance, coloured by session"))
    rows = check_timeline(result)
    if rows.empty:
        return empty_figure(title, _(N_("No server trace for this check: the trace is read from the embedded server, or from "
                                  "TRITON_TRACE_DIR for the app's external one.")))
    rows = rows.assign(lane=rows["lane"].astype(str))
    if not result.facts.sequence:
        # The stateless phases all run on the model's own instances ("alone" names how, not where): one set of rows.
        rows = rows.assign(variant="all_instances")
    variants = list(dict.fromkeys(rows["variant"]))
    lanes = list(dict.fromkeys(zip(rows["variant"], rows["lane"], strict=True)))
    lanes.sort(key=lambda vl: (variants.index(vl[0]), vl[1]))
    y_of = {vl: k for k, vl in enumerate(lanes)}
    # Stripe k of n within the execution's bar, so batch mates stay visible side by side.
    order = rows.groupby("execution").cumcount().to_numpy()
    size = rows.groupby("execution")["execution"].transform("size").to_numpy()
    stripe = LANE_HEIGHT / size
    base_y = np.array([y_of[vl] for vl in zip(rows["variant"], rows["lane"], strict=True)], dtype=float)
    rows = rows.assign(y=base_y - LANE_HEIGHT / 2 + stripe * (order + 0.5), stripe=stripe, batch=size)
    start = rows["exec_start"].astype(float).to_numpy()
    span = float(rows["exec_end"].astype(float).max() - start.min()) or 1.0
    rows = rows.assign(width_s=np.maximum(rows["exec_end"].astype(float).to_numpy() - start, span / 400))

    fig = go.Figure()
    _phase_bands(fig, result, float(start.min()), float(rows["exec_end"].astype(float).max()), _)
    sessions = sorted(rows["session"].astype(int).unique())
    many = len(sessions) > LEGEND_SESSIONS
    if many:
        title += _.render(N_(" ({n:count} sessions: hover a bar for its session)"), n=len(sessions))
    hover = "<b>%{customdata[0]}</b>, " + _(N_("step %{customdata[1]}<br>%{customdata[2]}<br>a batch of %{customdata[3]}")) + "<extra></extra>"
    groups = [(None, rows)] if many else list(rows.groupby(rows["session"].astype(int), sort=True))
    for session, mine in groups:
        custom = np.column_stack([
            [_.render(N_("session {number:count}"), number=int(s) + 1) for s in mine["session"]],
            (mine["step"].astype(int) + 1).to_numpy(),
            [_(check_words.ROLES.get(r, r)) for r in mine["role"]],
            mine["batch"].to_numpy(),
        ])
        fig.add_trace(go.Bar(
            name=_.render(N_("session {number:count}"), number=int(session) + 1) if session is not None else _(N_("requests")),
            showlegend=not many, orientation="h", y=mine["y"], x=mine["width_s"], base=mine["exec_start"].astype(float),
            width=mine["stripe"], marker=dict(color=[session_colour(int(s)) for s in mine["session"]], line=dict(width=0)),
            customdata=custom, hovertemplate=hover,
        ))
    diverged = rows[rows["diverged"].astype(bool)]
    if not diverged.empty:
        fig.add_trace(go.Scatter(
            name=_(N_("differed from its reference")), x=diverged["exec_start"].astype(float), y=diverged["y"], mode="markers",
            marker=dict(symbol="x", size=9, color=WRONG_COLOUR, line=dict(width=1, color="white")),
            customdata=np.column_stack([[_.render(N_("session {number:count}"), number=int(s) + 1) for s in diverged["session"]],
                                        (diverged["step"].astype(int) + 1).to_numpy()]),
            hovertemplate="<b>%{customdata[0]}</b>, " + _(N_("step %{customdata[1]} differed from its reference")) + "<extra></extra>",
        ))
    two = len(variants) > 1
    fig.update_layout(
        title=title, barmode="overlay", height=max(280, 60 * len(lanes) + 170, 0 if many else 21 * (len(sessions) + 1) + 130),
        xaxis_title=_(N_("seconds since the check started")),
        yaxis=dict(tickvals=list(range(len(lanes))), ticktext=[_row_label(v, lane, two, _) for v, lane in lanes],
                   range=[len(lanes) - 0.4, -0.6], autorange=False),
        legend=dict(yanchor="top", y=1, x=1.01),  # beside the rows, which may be only one or two
        margin=dict(l=10, r=10, t=90, b=10), hoverlabel=dict(align="left"),
    )
    return palette.finish(fig)


def timeline_summary(result: CheckResult, _: Words) -> str:
    """What timeline shows, in words: executions, sessions, rows, and the steps that differed."""
    if result.streams is not None:
        return _stream_timeline_summary(result, _)
    rows = check_timeline(result)
    if rows.empty:
        return _(N_("No server trace for this check: the trace is read from the embedded server, or from "
                    "TRITON_TRACE_DIR for the app's external one."))
    lanes = {(v, lane) for v, lane in zip(rows["variant"] if result.facts.sequence else ["all"] * len(rows),
                                            rows["lane"].astype(str), strict=True)}
    return _.render(SUMMARIES["check_timeline"], executions=rows["execution"].nunique(),
                    sessions=rows["session"].astype(int).nunique(), lanes=len(lanes),
                    diverged=int(rows["diverged"].astype(bool).sum()))


STREAM_PASSES = {("stream_alone", "a"): N_("alone, first time"), ("stream_alone", "b"): N_("alone, second time"),
                 ("staggered", "a"): N_("staggered")}
STREAM_ROW_SPREAD = 0.3  # a request's three streams sit on three heights of its row: first, second, staggered


def _stream_timeline(result: CheckResult, _: Words) -> go.Figure:
    """A decoupled model's check: one row per request, time across; each stream a line from the
    moment it was sent to its last response, a dot per response as it arrived (a diamond for the
    final one), a red cross where a response differed from the request's lone stream and a grey
    cross where the client gave a stream up or it failed; the lone passes run one request at a time,
    the staggered requests overlap."""
    title = _(N_("Response streams over time: one row per request, a dot per response as it arrived"))
    rows = check_stream_timeline(result)
    if rows.empty:
        return empty_figure(title, _(N_("No response was sent or heard in this check.")))
    requests = sorted(rows["request"].astype(int).unique())
    many = len(requests) > LEGEND_SESSIONS
    if many:
        title += _.render(N_(" ({n:count} requests: hover a dot for its request)"), n=len(requests))
    offsets = {key: STREAM_ROW_SPREAD * (k - 1) for k, key in enumerate(STREAM_PASSES)}
    rows = rows.assign(y=[int(r) + offsets[(p, s)] for r, p, s in zip(rows["request"], rows["phase"], rows["pass"], strict=True)],
                       how=[_(STREAM_PASSES[(p, s)]) for p, s in zip(rows["phase"], rows["pass"], strict=True)],
                       label=[_.render(N_("request {number:count}"), number=int(r) + 1) for r in rows["request"]])
    times = rows["time_s"].astype(float)
    fig = go.Figure()
    _phase_bands(fig, result, float(times.min()), float(times.max()), _)
    groups = [(None, rows)] if many else list(rows.groupby(rows["request"].astype(int), sort=True))
    for request, mine in groups:
        name = _.render(N_("request {number:count}"), number=int(request) + 1) if request is not None else _(N_("requests"))
        colour = session_colour(int(request)) if request is not None else palette.BLUE
        xs: list[float | None] = []
        ys: list[float | None] = []
        for _key, stream in mine.groupby(["request", "phase", "pass"], sort=False):
            xs += [float(stream["time_s"].min()), float(stream["time_s"].max()), None]
            ys += [float(stream["y"].iloc[0])] * 2 + [None]
        fig.add_trace(go.Scatter(x=xs, y=ys, mode="lines", line=dict(color=colour, width=2), name=name, legendgroup=name,
                                 showlegend=False, hoverinfo="skip"))
        heard = mine[mine["event"] == "response"]
        fig.add_trace(go.Scatter(
            x=heard["time_s"].astype(float), y=heard["y"], mode="markers", name=name, legendgroup=name, showlegend=not many,
            marker=dict(color=colour, size=[9 if f else 6 for f in heard["final"]],
                        symbol=["diamond" if f else "circle" for f in heard["final"]], line=dict(width=0)),
            customdata=np.column_stack([heard["label"], (heard["response"].astype(int) + 1).to_numpy(), heard["how"],
                                        [_(N_("the final one")) if f else "" for f in heard["final"]]]) if len(heard) else None,
            hovertemplate="<b>%{customdata[0]}</b>, " + _(N_("response %{customdata[1]} %{customdata[3]}<br>%{customdata[2]}"))
                          + "<extra></extra>",
        ))
    diverged = rows[rows["diverged"].astype(bool)]
    if not diverged.empty:
        fig.add_trace(go.Scatter(
            name=_(N_("differed from its lone stream")), x=diverged["time_s"].astype(float), y=diverged["y"], mode="markers",
            marker=dict(symbol="x", size=10, color=WRONG_COLOUR, line=dict(width=1, color="white")),
            customdata=np.column_stack([diverged["label"], (diverged["response"].astype(int) + 1).to_numpy(), diverged["how"]]),
            hovertemplate="<b>%{customdata[0]}</b>, " + _(N_("response %{customdata[1]} differed from its lone stream<br>"
                                                             "%{customdata[2]}")) + "<extra></extra>",
        ))
    stopped = rows[rows["event"].isin(["given_up", "error"])]
    if not stopped.empty:
        fig.add_trace(go.Scatter(
            name=_(N_("given up or failed: no final response")), x=stopped["time_s"].astype(float), y=stopped["y"],
            mode="markers", marker=dict(symbol="x-thin-open", size=12, color=palette.GREY, line=dict(width=2, color=palette.GREY)),
            customdata=np.column_stack([stopped["label"], stopped["how"]]),
            hovertemplate="<b>%{customdata[0]}</b>, %{customdata[1]}<extra></extra>",
        ))
    fig.update_layout(
        title=title, height=max(280, 34 * len(requests) + 170),
        xaxis_title=_(N_("seconds since the check started")),
        yaxis=dict(tickvals=requests, ticktext=[_.render(N_("request {number:count}"), number=r + 1) for r in requests],
                   range=[max(requests) + 0.6, min(requests) - 0.6], autorange=False),
        legend=dict(yanchor="top", y=1, x=1.01),
        margin=dict(l=10, r=10, t=90, b=10), hoverlabel=dict(align="left"),
    )
    return palette.finish(fig)


def _stream_timeline_summary(result: CheckResult, _: Words) -> str:
    rows = check_stream_timeline(result)
    if rows.empty:
        return _(N_("No response was sent or heard in this check."))
    heard = rows[rows["event"] == "response"]
    alone = heard[heard["phase"] == "stream_alone"]
    staggered = heard[heard["phase"] == "staggered"]
    sent = rows[rows["event"] == "sent"]
    return _.render(SUMMARIES["check_stream_timeline"], requests=rows["request"].nunique(), alone=len(alone),
                    staggered=len(staggered), streams=len(sent), diverged=int(rows["diverged"].astype(bool).sum()),
                    stopped=int(rows["event"].isin(["given_up", "error"]).sum()))


def _phase_bands(fig: go.Figure, result: CheckResult, first: float, last: float, _: Words) -> None:
    """Each phase of the check as a light band behind the executions, named where there is room."""
    phases = result.tables.phases
    span = max(last - first, 1e-9)
    for k, p in enumerate(phases.itertuples()):
        x0, x1 = float(p.started_s), float(p.started_s + p.wall_s)
        if x1 < first or x0 > last:
            continue  # not traced (the references): outside the drawn span
        label = _.render(N_("{phase:text} ({variant:text})"), phase=_(check_words.PHASES[p.phase]),
                         variant=_(check_words.VARIANTS[p.variant]))
        wide = (min(x1, last) - max(x0, first)) / span >= MIN_LABELLED_SHARE
        fig.add_vrect(x0=x0, x1=x1, fillcolor=PHASE_COLOURS[k % 2], line_width=0, layer="below")
        if wide:  # names on two heights above the plot, so neighbours do not overwrite each other
            fig.add_annotation(x=max(x0, first), y=1.0 + 0.07 * (k % 2), xref="x", yref="paper", xanchor="left", yanchor="bottom",
                               text=label, showarrow=False, font=dict(size=10))


def errors(result: CheckResult, _: Words) -> list[Chart]:
    """For each broken check, each broken session's difference from its reference over its steps,
    one line per session and output, with the tolerance it was judged by. A step with no reply to
    compare (none, or one of another shape) is marked at the top. Each Chart's summary names the
    largest difference, or the steps without a reply."""
    frame = check_errors(result)
    out: list[Chart] = []
    if frame.empty:
        return out
    for (check, variant), rows in frame.groupby(["check", "variant"], sort=False):
        name = check_words.check_name(check, variant, _)
        title = _.render(N_("Difference from the reference, step by step: {check:text}"), check=name)
        out.append(Chart(title, _error_figure(rows, title, result.facts.sequence, _), _error_summary(rows, name, result.facts.sequence, _)))
    return out


def _beyond(rows: pd.DataFrame) -> pd.DataFrame:
    """The rows of the outputs that went beyond their tolerance somewhere (what _error_figure draws)."""
    rows = rows.assign(difference=rows["difference"].astype(float))
    beyond = rows[rows["difference"] > rows["tolerance"]]
    return rows[rows["output"].isin(set(beyond["output"]))]


def _error_summary(rows: pd.DataFrame, name: str, sequence: bool, _: Words) -> str:
    rows = _beyond(rows)
    lines = rows.groupby(["conversation" if sequence else "session", "output"], sort=False).ngroups
    finite = rows[np.isfinite(rows["difference"])]
    if finite.empty:
        return _.render(SUMMARIES["check_errors_no_reply"], check=name, lines=lines,
                        missing=int((~np.isfinite(rows["difference"])).sum()))
    worst = finite.loc[finite["difference"].idxmax()]
    return _.render(SUMMARIES["check_errors"], check=name, lines=lines, largest=check_words.number(float(worst["difference"])),
                    session=int(worst["session"]), output=worst["output"], step=int(worst["step"]) + 1)


def _error_figure(rows: pd.DataFrame, title: str, sequence: bool, _: Words) -> go.Figure:
    rows = _beyond(rows)  # only the outputs that went beyond their tolerance somewhere in this check
    finite = rows["difference"][np.isfinite(rows["difference"])]
    top = float(finite.max()) if len(finite) else 1.0
    top = top if top > 0 else 1.0
    # A line per sequence (a session's inputs may run as several, e.g. reusing an ID); on the
    # stateless path each request is numbered alone (no sequence), so a line per session.
    lines = list(rows.groupby(["conversation" if sequence else "session", "output"], sort=False))
    many = len(lines) > LEGEND_SESSIONS
    outputs = list(dict.fromkeys(rows["output"]))
    fig = go.Figure()
    for (_line, output), mine in lines:
        mine = mine.sort_values("step")
        session = int(mine["session"].iloc[0])
        label = _.render(N_("{session:session} · {output:text}"), session=session, output=output)
        y = mine["difference"].where(np.isfinite(mine["difference"]))
        fig.add_trace(go.Scatter(
            name=label, x=mine["step"].astype(int) + 1, y=y, mode="lines+markers", showlegend=not many,
            line=dict(color=session_colour(session), width=1.5, dash=DASHES[outputs.index(output) % len(DASHES)]),
            marker=dict(size=5), hovertemplate=f"<b>{label}</b><br>" + _(N_("step %{x}: off by %{y}")) + "<extra></extra>",
        ))
        missing = mine[~np.isfinite(mine["difference"])]
        if len(missing):
            fig.add_trace(go.Scatter(
                name=_(N_("no reply to compare")), x=missing["step"].astype(int) + 1, y=[top * 1.1] * len(missing), mode="markers",
                marker=dict(symbol="triangle-down", size=9, color=WRONG_COLOUR), showlegend=False,
                hovertemplate=f"<b>{label}</b><br>" + _(N_("step %{x}: no reply of the reference's shape")) + "<extra></extra>",
            ))
    # One dashed line per tolerance value, naming the outputs judged by it.
    tolerances = rows.groupby("output", sort=False)["tolerance"].first().astype(float)
    for value, names in tolerances.groupby(tolerances, sort=True):
        if math.isfinite(value):
            fig.add_hline(y=value, line=dict(dash="dash", color="rgba(60,60,60,0.7)", width=1),
                          annotation_text=_.render(N_("tolerance of {outputs:text}: {value:text}"), outputs=", ".join(names.index),
                                                   value=check_words.number(value)),
                          annotation_position="top left", annotation_font_size=10)
    steps = int(rows["step"].max()) + 1
    fig.update_layout(
        title=title, height=360, xaxis=dict(title=_(N_("step of the session")), dtick=1 if steps <= 30 else None, tickformat="d"),
        yaxis_title=_(N_("difference from the reference")),
        legend=dict(orientation="h", yanchor="top", y=-0.2, x=0), margin=dict(l=10, r=10, t=60, b=10),
        hoverlabel=dict(align="left"),
    )
    return palette.finish(fig)
