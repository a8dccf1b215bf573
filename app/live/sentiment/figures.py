"""Plotly figures of the sentiment runs (no Streamlit): reviews per second, and reviews per batch size the
server formed, one group of bars per run; each with its `<builder>_summary`, the chart's message in a
sentence (words: words.py, its CHART_SUMMARIES and the runs' own words).

Every builder takes `_`, the reader's Words (app/i18n); the default `str` keeps English."""
from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

import plotly.graph_objects as go

from app.charts import palette
from app.charts.figures import listed, render, sentences
from app.i18n import Say
from app.live.sentiment.words import CHART_SUMMARIES as SUMMARIES
from app.live.sentiment.words import MODES

if TYPE_CHECKING:
    from app.live.sentiment.engine import SentimentRun



def mode_words(run: SentimentRun, _: Say = str) -> str:
    """How a sentiment run sent its reviews (engine.MODES code), in _'s language."""
    template = MODES.get(run.mode)
    return render(_, template, concurrency=getattr(run, "concurrency", 1)) if template else str(run.mode)


def throughput(runs: Sequence[SentimentRun], _: Say = str) -> go.Figure:
    """Reviews per second for each way of sending the same reviews (sentiment model)."""
    fig = go.Figure(go.Bar(x=[mode_words(r, _) for r in runs], y=[r.throughput for r in runs],
                           text=[f"{r.throughput:.0f}/s" for r in runs], textposition="outside"))
    fig.update_layout(title=_("Throughput: reviews scored per second"), yaxis_title=_("reviews / s"), height=300,
                      margin=dict(l=10, r=10, t=50, b=10))
    return palette.finish(fig)


def server_batches(runs: Sequence[SentimentRun], _: Say = str) -> go.Figure:
    """How many reviews ran in a batch of each size, one group of bars per run.

    Counting reviews (size x executions) rather than executions keeps runs of the same
    reviews comparable: each run's bars add up to its number of reviews.
    """
    fig = go.Figure()
    for run in runs:
        sizes = run.server.get("batch_sizes", {})
        fig.add_trace(go.Bar(name=mode_words(run, _), x=list(sizes), y=[int(k) * v for k, v in sizes.items()],
                             customdata=list(sizes.values()),
                             hovertemplate=_("%{y} reviews in %{customdata} batch(es) of %{x}") + "<extra>%{fullData.name}</extra>"))
    fig.update_layout(title=_("Reviews per batch size the server formed"), barmode="group", height=300,
                      xaxis=dict(title=_("batch size"), dtick=1), yaxis_title=_("reviews"),
                      margin=dict(l=10, r=10, t=50, b=10))
    return palette.finish(fig)


def throughput_summary(runs: Sequence[SentimentRun], _: Say = str) -> str:
    items = [render(_, SUMMARIES["throughput_item"], mode=mode_words(r, _), rate=round(r.throughput)) for r in runs]
    rates = [r.throughput for r in runs if r.throughput > 0]
    gain = (render(_, SUMMARIES["throughput_gain"], ratio=max(rates) / min(rates)) if len(rates) > 1 else "")
    return sentences(render(_, SUMMARIES["throughput"], runs=listed(items, _)), gain)


def server_batches_summary(runs: Sequence[SentimentRun], _: Say = str) -> str:
    items: list[str] = []
    for run in runs:
        sizes = {int(k): int(v) for k, v in run.server.get("batch_sizes", {}).items()}
        items.append(render(_, SUMMARIES["server_batches_item"], mode=mode_words(run, _),
                            reviews=sum(k * v for k, v in sizes.items()), executions=sum(sizes.values()),
                            largest=max(sizes, default=0)))
    return render(_, SUMMARIES["server_batches"], runs=listed(items, _, clauses=True))
