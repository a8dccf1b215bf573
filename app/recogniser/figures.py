"""Plotly figures of a run (no Streamlit): slot timeline, batch sizes, queue vs compute, latency.

Each figure of a run takes its analysis.RunAnalysis (analysis.of_run(result, instances, slots)),
built once per run and handed to every chart and its sentence, so the benchmark and the tests build
exactly what the pages show. Traces are few and vectorised (one per session,
one for padding, one for queue waits) so a 32 x 40 run rebuilds in well under a second.

Every builder takes `_`, the reader's Words (app/i18n), and passes each title, axis title,
legend entry, category name and hover label through it; the default `str` keeps English.

Beside each builder, `<builder>_summary` (same arguments) says the chart's message in a sentence,
read from the same analysis table, for a learner who cannot tell its colours apart or uses a
screen reader; the pages show it under the chart (app/ui/chart.py). Its words: app/recogniser/words/charts.py;
the kit they are drawn with (Chart, render, listed...): app/charts/figures.py.
"""
from __future__ import annotations

from collections.abc import Iterable
from typing import Any

import numpy as np
import pandas as pd
import plotly.graph_objects as go
from plotly.subplots import make_subplots

from app.charts import palette
from app.charts.figures import LEGEND_SESSIONS, WRONG_COLOUR, empty_figure, listed, render, sentences, session_colour
from app.i18n import N_, Translate
from app.recogniser.engine.judgement import analysis
from app.recogniser.engine.judgement.analysis import RunAnalysis
from app.recogniser.words.charts import CHART_SUMMARIES as SUMMARIES

PADDING_COLOUR = "rgba(120,120,120,0.45)"
QUEUE_COLOUR = "rgba(90,90,90,0.9)"
BAR_WIDTH = 0.62
INSTANCE_COLOUR = palette.BLUE  # neutral: session colours would suggest a session-to-instance link


# Whose state a chunk read (analysis.owner_label codes) and where a timing came from.
OWNER_WORDS = {
    "fresh": N_("a fresh cell"),
    "padding": N_("a padding row"),
    "own": N_("its own session"),
    "session": N_("session {number:count}"),
    "earlier": N_("an earlier run"),
    "unknown": N_("unknown"),
}
SOURCE_WORDS = {
    "trace": N_("this run's trace"),
    "statistics": N_("statistics API"),
    "metrics": N_("Prometheus metrics"),
    "client": N_("client round trip"),
}
SOURCE_LATENCY_WORDS = {"client": N_("client round trip"), "trace": N_("server: queue + compute (trace)")}


def owner_words(code: str, session: int | None, _: Translate = str) -> str:
    return render(_, OWNER_WORDS.get(code, OWNER_WORDS["unknown"]), number=(session or 0) + 1)


def length_words(low: int, high: int, _: Translate = str) -> str:
    if low == high:
        return render(_, N_("{n:count} chunks"), n=low)
    return render(_, N_("{low:count}–{high:count} chunks"), low=low, high=high)


def slot_timeline(run: RunAnalysis, scheduler: str = "direct", _: Translate = str) -> go.Figure:
    """One row per instance x slot, time across; each chunk a bar coloured by its session."""
    title = _("Slot occupancy: instance × slot over time")
    marks = run.marks
    if marks.empty:
        return empty_figure(title, _("No server trace for this run (external server without TRITON_TRACE_DIR)."))
    rows = run.slot_rows
    y_of = {row: k for k, row in enumerate(rows)}
    fig = go.Figure()

    # Sub-millisecond computes would be invisible on a run-long axis: give every bar a visible minimum.
    span_ms = (marks["exec_end"].max() - min(marks["queued_from"].min(), marks["exec_start"].min())) * 1000
    min_ms = max(span_ms / 300, 0.05)

    many = marks["session"].nunique() > LEGEND_SESSIONS
    if many:
        title += render(_, N_(" ({n:count} sessions: hover a bar for its session)"), n=marks["session"].nunique())
    for session, mine in marks.groupby("session", sort=True):
        y = np.array([y_of[(int(i), int(s))] for i, s in zip(mine["instance"], mine["slot"], strict=True)])
        start_ms = mine["exec_start"].to_numpy() * 1000
        width_ms = np.maximum((mine["exec_end"].to_numpy() - mine["exec_start"].to_numpy()) * 1000, min_ms)
        custom = np.column_stack(
            [
                mine["chunk"].to_numpy() + 1,
                mine["expected_char"], mine["received_char"],
                mine["queue_ms"].round(1), mine["compute_ms"].round(1),
                mine["state_char"],
                [owner_words(c, s, _) for c, s in zip(mine["state_from"], mine["state_from_session"], strict=True)],
                mine["batch"],
            ]
        )
        name = render(_, N_("session {number:count}"), number=int(session) + 1)
        fig.add_trace(
            go.Bar(
                name=name,
                showlegend=not many,
                orientation="h",
                y=y,
                x=width_ms,
                base=start_ms,
                width=BAR_WIDTH,
                marker=dict(color=session_colour(session), pattern=dict(shape=palette.session_pattern(session)), line=dict(width=0)),
                customdata=custom,
                hovertemplate=(
                    f"<b>{name}</b>, "
                    + _("chunk %{customdata[0]}<br>expected %{customdata[1]}, got %{customdata[2]}<br>"
                        "queued %{customdata[3]} ms, computed %{customdata[4]} ms in a batch of %{customdata[7]}<br>"
                        "read state %{customdata[5]} written by %{customdata[6]}")
                    + "<extra></extra>"
                ),
            )
        )

    # Wrong letters: a small red mark above the bar, so the session colours stay readable.
    wrong = marks[marks["wrong"]]
    if not wrong.empty:
        fig.add_trace(
            go.Scatter(
                name=_("letter came back wrong"),
                x=(wrong["exec_start"] * 1000 + min_ms / 2).to_numpy(),
                y=np.array([y_of[(int(i), int(s))] for i, s in zip(wrong["instance"], wrong["slot"], strict=True)]) - 0.42,
                mode="markers",
                marker=dict(symbol="triangle-down", size=6, color=WRONG_COLOUR),
                hoverinfo="skip",
            )
        )

    padding = run.padding_rows
    if not padding.empty:
        label = _("padding row (READY=0)") if scheduler == "direct" else _("row of another run")
        fig.add_trace(
            go.Bar(
                name=label,
                orientation="h",
                y=[y_of[(int(i), int(s))] for i, s in zip(padding["instance"], padding["slot"], strict=True)],
                x=np.maximum((padding["exec_end"] - padding["exec_start"]).to_numpy() * 1000, min_ms),
                base=padding["exec_start"].to_numpy() * 1000,
                width=BAR_WIDTH,
                marker=dict(color=PADDING_COLOUR, pattern=dict(shape="/", fgcolor="rgba(60,60,60,0.8)")),
                hovertemplate=f"<b>{label}</b><br>" + _("no request of this run in this slot<br>batch of %{customdata}")
                + "<extra></extra>",
                customdata=padding["batch"],
            )
        )

    # Queue waits: a thin line just under the row, from arrival to the start of execution.
    waits = marks[marks["exec_start"] - marks["queued_from"] > 0.0005]
    if not waits.empty:
        y = np.array([y_of[(int(i), int(s))] for i, s in zip(waits["instance"], waits["slot"], strict=True)]) + 0.42
        xs = np.column_stack([waits["queued_from"] * 1000, waits["exec_start"] * 1000, np.full(len(waits), np.nan)]).ravel()
        ys = np.column_stack([y, y, np.full(len(waits), np.nan)]).ravel()
        fig.add_trace(
            go.Scatter(
                name=_("waiting in the queue"),
                x=xs,
                y=ys,
                mode="lines",
                line=dict(color=QUEUE_COLOUR, width=2),
                hoverinfo="skip",
            )
        )

    fig.update_layout(
        title=title,
        barmode="overlay",
        height=max(260, 46 * len(rows) + 130),
        xaxis_title=_("time since the run started (ms)"),
        # A fixed, reversed range: autorange would hide rows (slots) the run never used.
        yaxis=dict(
            tickvals=list(range(len(rows))),
            ticktext=[render(_, N_("instance {instance:text} · slot {slot:text}"), instance=i, slot=s) for i, s in rows],
            range=[len(rows) - 0.4, -0.6],
            autorange=False,
        ),
        legend=dict(orientation="h", yanchor="top", y=-0.12 - 1.2 / max(len(rows), 1), x=0),
        margin=dict(l=10, r=10, t=50, b=10),
        hoverlabel=dict(align="left"),
    )
    return palette.finish(fig)


def batch_sizes(run: RunAnalysis, _: Translate = str) -> go.Figure:
    """Executions per batch size: the server's statistics next to this run's trace."""
    table = run.batch_distribution
    title = _("Batch sizes the model ran (padding rows included)")
    if table.empty:
        return empty_figure(title, _("The server reported no executions."))
    fig = go.Figure(
        [
            go.Bar(name=_("server statistics"), x=table["batch_size"], y=table["server"]),
            go.Bar(name=_("this run's trace"), x=table["batch_size"], y=table["trace"]),
        ]
    )
    fig.update_layout(title=title, barmode="group", height=300, xaxis=dict(title=_("batch size"), dtick=1),
                      yaxis_title=_("executions"), margin=dict(l=10, r=10, t=50, b=10))
    return palette.finish(fig)


def queue_vs_compute(run: RunAnalysis, _: Translate = str) -> go.Figure:
    """Mean time per request spent waiting vs computing, from trace, statistics and metrics."""
    table = run.queue_compute
    title = _("Where a request's time went (mean per request)")
    if table.empty:
        return empty_figure(title, _("No timing data from the server."))
    sources = [_(SOURCE_WORDS[s]) for s in table["source"]]
    fig = go.Figure(
        [
            go.Bar(name=_("queue"), y=sources, x=table["queue_ms"], orientation="h"),
            go.Bar(name=_("compute"), y=sources, x=table["compute_ms"], orientation="h"),
        ]
    )
    fig.update_layout(title=title, barmode="stack", height=260, xaxis_title=_("ms"),
                      margin=dict(l=10, r=10, t=50, b=10))
    return palette.finish(fig)


def latency_percentiles(run: RunAnalysis, _: Translate = str) -> go.Figure:
    """p50/p95/p99 latency per session length, client-side and server-side."""
    table = run.latency_percentiles
    title = _("Latency percentiles per session length")
    if table.empty:
        return empty_figure(title, _("No successful requests."))
    lengths = [length_words(lo, hi, _) for lo, hi in zip(table["length_low"], table["length_high"], strict=True)]
    sources = [_(SOURCE_LATENCY_WORDS[s]) for s in table["source"]]
    fig = go.Figure()
    for q in analysis.PERCENTILES:
        fig.add_trace(
            go.Bar(
                name=f"p{q}",
                x=[lengths, sources],
                y=table[f"p{q}"],
            )
        )
    fig.update_layout(title=title, barmode="group", height=320, yaxis_title=_("ms"),
                      margin=dict(l=10, r=10, t=50, b=10))
    return palette.finish(fig)


def instance_work(run: RunAnalysis, _: Translate = str) -> go.Figure:
    """Busy time and requests per instance: how evenly the copies shared the work."""
    table = run.instance_work
    title = _("Work per instance")
    if table.empty:
        return empty_figure(title, _("No request reached an instance."))
    labels = [render(_, N_("instance {instance:text}"), instance=i) for i in table["instance"]]
    fig = make_subplots(rows=1, cols=3, subplot_titles=(_("busy time (ms)"), _("requests"), _("mean batch")))
    for col, column in enumerate(("busy_ms", "requests", "mean_batch"), start=1):
        fig.add_trace(go.Bar(x=labels, y=table[column], showlegend=False,
                             marker_color=INSTANCE_COLOUR), row=1, col=col)
    fig.update_layout(title=title, height=300, margin=dict(l=10, r=10, t=70, b=10))
    return palette.finish(fig)


def state_cells(frame: pd.DataFrame | None, marks: pd.DataFrame | None = None,
                title: str | None = None, _: Translate = str) -> go.Figure:
    """The recogniser's asr_state_cells gauge over time, one line per instance; evictions dashed.

    `frame` is a state_cells.Sampler frame (t, instance, cells, evicted); `marks` (t, label)
    draws a dotted line for each event the caller recorded (a wave of sessions, say); `title` and
    the marks' labels come in the reader's language already.
    """
    title = title if title is not None else _("State cells the model holds (its own metric, per instance)")
    if frame is None or frame.empty:
        return empty_figure(title, _("The model reported no state-cell metric (a model without it, or no metrics endpoint)."))
    fig = go.Figure()
    for instance, rows in frame.groupby("instance"):
        name = render(_, N_("instance {instance:text}: cells held"), instance=instance)
        fig.add_trace(go.Scatter(x=rows["t"], y=rows["cells"], mode="lines+markers", name=name, line_shape="hv", marker_size=4))
        if rows["evicted"].max() > rows["evicted"].min():
            fig.add_trace(go.Scatter(x=rows["t"], y=rows["evicted"] - rows["evicted"].iloc[0], mode="lines",
                                     name=render(_, N_("instance {instance:text}: cells it evicted"), instance=instance),
                                     line=dict(dash="dash"), line_shape="hv"))
    for mark in (marks.itertuples() if marks is not None else ()):
        fig.add_vline(x=mark.t, line_dash="dot", line_color="#888", annotation_text=mark.label,
                      annotation_position="top left", annotation_textangle=-90)
    fig.update_layout(title=title, xaxis_title=_("seconds from the start"), yaxis_title=_("cells"), height=320,
                      margin=dict(l=10, r=10, t=50, b=10), legend_title_text="")
    return palette.finish(fig)


# ------------------------------------------------- each chart's message, in words


def _session_words(values: Iterable[Any], _: Translate = str) -> str:
    return listed([render(_, N_("session {number:count}"), number=int(v) + 1) for v in sorted(set(values))], _)


def slot_timeline_summary(run: RunAnalysis, scheduler: str = "direct", _: Translate = str) -> str:
    """What slot_timeline shows: how many chunks ran where, which came back wrong, padding, the longest wait."""
    marks = run.marks
    if marks.empty:
        return _("No server trace for this run (external server without TRITON_TRACE_DIR).")
    wrong = marks[marks["wrong"]]
    padding = run.padding_rows
    wait_ms = float(((marks["exec_start"] - marks["queued_from"]).clip(lower=0) * 1000).max())
    told = render(_, SUMMARIES["timeline"], chunks=len(marks), sessions=marks["session"].nunique(),
                  rows=len(run.slot_rows), wait=wait_ms)
    letters = (render(_, SUMMARIES["timeline_wrong"], n=len(wrong), sessions=_session_words(wrong["session"], _))
               if len(wrong) else _(SUMMARIES["timeline_right"]))
    rows = ""
    if len(padding):
        rows = render(_, SUMMARIES["timeline_padding" if scheduler == "direct" else "timeline_other_rows"], n=len(padding))
    return sentences(told, letters, rows)


def batch_sizes_summary(run: RunAnalysis, _: Translate = str) -> str:
    table = run.batch_distribution
    if table.empty:
        return _("The server reported no executions.")
    counted = table[table["server"] > 0]
    usual = int(counted.loc[counted["server"].idxmax(), "batch_size"]) if len(counted) else 0
    return render(_, SUMMARIES["batch_sizes"], executions=int(table["server"].sum()), usual=usual,
                  largest=int(counted["batch_size"].max()) if len(counted) else 0, traced=int(table["trace"].sum()))


def queue_vs_compute_summary(run: RunAnalysis, _: Translate = str) -> str:
    table = run.queue_compute
    if table.empty:
        return _("No timing data from the server.")
    items = [render(_, SUMMARIES["queue_vs_compute_item"], source=_(SOURCE_WORDS[r.source]), queue=r.queue_ms, compute=r.compute_ms)
             for r in table.itertuples()]
    return render(_, SUMMARIES["queue_vs_compute"], sources=listed(items, _, clauses=True))


def latency_percentiles_summary(run: RunAnalysis, _: Translate = str) -> str:
    table = run.latency_percentiles
    if table.empty:
        return _("No successful requests.")
    high, low = table.loc[table["p99"].idxmax()], table.loc[table["p50"].idxmin()]
    return render(_, SUMMARIES["latency"], p99=high["p99"], source=_(SOURCE_LATENCY_WORDS[high["source"]]),
                  length=length_words(int(high["length_low"]), int(high["length_high"]), _),
                  p50=low["p50"], low_source=_(SOURCE_LATENCY_WORDS[low["source"]]),
                  low_length=length_words(int(low["length_low"]), int(low["length_high"]), _))


def instance_work_summary(run: RunAnalysis, _: Translate = str) -> str:
    table = run.instance_work
    if table.empty:
        return _("No request reached an instance.")
    items = [render(_, SUMMARIES["instances_item"], instance=r.instance, requests=r.requests, executions=r.executions,
                    busy=r.busy_ms, batch=r.mean_batch) for r in table.itertuples()]
    return render(_, SUMMARIES["instances"], instances=listed(items, _, clauses=True))


def state_cells_summary(frame: pd.DataFrame | None, _: Translate = str) -> str:
    if frame is None or frame.empty:
        return _("The model reported no state-cell metric (a model without it, or no metrics endpoint).")
    items = []
    for instance, rows in frame.groupby("instance"):
        rows = rows.sort_values("t")
        items.append(render(_, SUMMARIES["state_cells_item"], instance=instance, peak=int(rows["cells"].max()),
                            last=int(rows["cells"].iloc[-1]), evicted=int(rows["evicted"].max() - rows["evicted"].iloc[0])))
    return render(_, SUMMARIES["state_cells"], instances=listed(items, _, clauses=True))


def lab_figures(run: RunAnalysis, scheduler: str = "direct", _: Translate = str) -> dict[str, go.Figure]:
    """Every figure the live lab shows for one run's analysis (analysis.of_run)."""
    return {
        "timeline": slot_timeline(run, scheduler, _=_),
        "batch_sizes": batch_sizes(run, _=_),
        "queue_vs_compute": queue_vs_compute(run, _=_),
        "latency": latency_percentiles(run, _=_),
        "instances": instance_work(run, _=_),
    }


def lab_summaries(run: RunAnalysis, scheduler: str = "direct", _: Translate = str) -> dict[str, str]:
    """What each of lab_figures says, in words (same keys), from the same analysis."""
    return {
        "timeline": slot_timeline_summary(run, scheduler, _=_),
        "batch_sizes": batch_sizes_summary(run, _=_),
        "queue_vs_compute": queue_vs_compute_summary(run, _=_),
        "latency": latency_percentiles_summary(run, _=_),
        "instances": instance_work_summary(run, _=_),
    }
