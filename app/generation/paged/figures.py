"""Plotly figures of an engine-mode run (no Streamlit), drawn from the paged engine's analysis tables
(app/generation/paged/runs.py labels each row with its side), labels through `_` (a Words for the
learner's language; plain `str` keeps English):

  blocks    one row per (step, request, block held): side, step, index, tag, block, shared
  steps     one row per engine step: side, step, requests, tokens, free_blocks, cached_blocks, waiting, running
  requests  one row per request: side, index, ttft_ms, tbt_p50_ms, tbt_p99_ms, tokens, first_step, ...

Beside each figure, `<figure>_summary` (same arguments) says its message in a sentence, for a learner
who cannot tell its colours apart; its words are app/generation/paged/words.CHART_SUMMARIES.
"""
from __future__ import annotations

from collections.abc import Iterable
from typing import TYPE_CHECKING

import pandas as pd
import plotly.graph_objects as go
from plotly.subplots import make_subplots

from app.charts import palette
from app.charts.figures import Chart, empty_figure, listed, render
from app.generation.figures import number_text
from app.generation.paged.words import CAPTIONS, MARKS, NUMBERS, ON_OFF, REQUEST, REQUEST_COLUMNS, SETTING_LINE, SIDES, STATUS
from app.generation.paged.words import CHART_SUMMARIES as SAID
from app.i18n import N_, Say, Words
from app.i18n.formats import Numeric

if TYPE_CHECKING:
    from app.generation.paged.engine import PagedSettings
    from app.generation.paged.runs import SideRun


SIDE_COLOURS = {"a": palette.BLUE, "b": palette.ORANGE}
SIDE_DASHES = {"a": "solid", "b": "dash"}
# Past this many block places (steps x blocks) the free ones are left undrawn: the queue figure's
# free-block line says the same, and a browser need not draw tens of thousands of marks.
FREE_MARKS_LIMIT = 6000


def side_name(side: str, _: Say = str) -> str:
    return _(SIDES[side])


def request_name(index: Numeric, _: Say = str) -> str:
    """A request by its place in the workload (index from 0), counted from 1 as a learner counts."""
    return _(REQUEST).format(n=int(index) + 1)


def request_colour(indexes: list[int], index: int) -> str:
    """A request's colour: its place in the run (the same request keeps it in every figure)."""
    return palette.session_colour(sorted(indexes).index(int(index)))


def setting_line(side: str, settings: PagedSettings, _: Words) -> str:
    return _.render(SETTING_LINE, side=side_name(side, _), blocks=settings.num_blocks, size=settings.block_size,
                    capacity=settings.capacity_tokens, budget=settings.max_batch_tokens, scheduler=settings.scheduler,
                    sharing=_(ON_OFF[bool(settings.prefix_sharing)]))


def blocks_figure(blocks: pd.DataFrame, steps: pd.DataFrame, num_blocks: int, _: Say = str) -> go.Figure:
    """The block table over time: engine steps across, block ids up; each block a request held in a
    step is a square in that request's colour; a block two or more requests held (a shared prefix) is
    outlined in black with a cross; a block nobody held is a grey open square."""
    title = _(N_("Which request held which KV block, step by step"))
    if blocks.empty:
        return empty_figure(title, _(N_("No tokens came back in this run.")))
    fig = go.Figure()
    top = max(int(num_blocks), int(blocks["block"].max()) + 1)
    step_ids = sorted(int(s) for s in steps["step"]) if not steps.empty else sorted(int(s) for s in blocks["step"].unique())
    if len(step_ids) * top <= FREE_MARKS_LIMIT:
        held = set(zip(blocks["step"].astype(int), blocks["block"].astype(int), strict=True))
        free = [(s, b) for s in step_ids for b in range(top) if (s, b) not in held]
        if free:
            fig.add_trace(go.Scatter(x=[s for s, _b in free], y=[b for _s, b in free], mode="markers",
                                     name=_(MARKS["free"]), hoverinfo="skip",
                                     marker=dict(symbol="square-open", size=7, color=palette.LIGHT_GREY)))
    indexes = sorted(int(i) for i in blocks["index"].unique())
    for index in indexes:
        own = blocks[blocks["index"] == index]
        hover = [render(_, N_("{request:text}, block {block:count}, step {step:count}"),
                        request=request_name(index, _), block=int(r.block), step=int(r.step)) for r in own.itertuples()]
        fig.add_trace(go.Scatter(x=own["step"], y=own["block"], mode="markers", name=request_name(index, _),
                                 hovertext=hover, hoverinfo="text",
                                 marker=dict(symbol="square", size=8, color=request_colour(indexes, index),
                                             line=dict(width=0.5, color=palette.OUTLINE))))
    shared = blocks[blocks["shared"].astype(bool)].drop_duplicates(["step", "block"])
    if not shared.empty:
        fig.add_trace(go.Scatter(x=shared["step"], y=shared["block"], mode="markers", name=_(MARKS["shared"]),
                                 hoverinfo="skip", marker=dict(symbol="x-thin-open", size=8, color=palette.BLACK,
                                                               line=dict(width=1.5))))
    fig.update_layout(title=title, height=min(260 + 9 * top, 900), margin=dict(l=10, r=10, t=60, b=10),
                      legend_title_text="", xaxis_title=_(N_("engine step")), yaxis_title=_(N_("KV cache block")),
                      yaxis=dict(range=[-0.8, top - 0.2]))
    return palette.finish(fig)


def blocks_summary(blocks: pd.DataFrame, steps: pd.DataFrame, num_blocks: int, side: str, _: Say = str) -> str:
    if blocks.empty:
        return _(N_("No tokens came back in this run."))
    per_step = blocks.drop_duplicates(["step", "block"]).groupby("step").size()
    shared = blocks[blocks["shared"].astype(bool)].drop_duplicates(["step", "block"])
    return render(_, SAID["blocks"], side=side_name(side, _), requests=blocks["index"].nunique(),
                  steps=steps["step"].nunique() if not steps.empty else blocks["step"].nunique(),
                  peak=int(per_step.max()), total=max(int(num_blocks), int(blocks["block"].max()) + 1), shared=len(shared))


def queue_figure(steps: pd.DataFrame, _: Say = str) -> go.Figure:
    """Per engine step: requests running and waiting (top), and free blocks (bottom); one line style per side."""
    title = _(N_("Requests running and waiting for room, and free KV blocks, per engine step"))
    if steps.empty:
        return empty_figure(title, _(N_("No tokens came back in this run.")))
    fig = make_subplots(rows=2, cols=1, shared_xaxes=True, vertical_spacing=0.12,
                        subplot_titles=[_(N_("requests")), _(N_("free blocks"))])
    series = ((1, "running", N_("{side:text}: running"), palette.BLUISH_GREEN),
              (1, "waiting", N_("{side:text}: waiting"), palette.VERMILLION),
              (2, "free_blocks", N_("{side:text}: free blocks"), palette.DARK_GREY))
    for side, mine in steps.groupby("side", sort=False):
        ordered = mine.sort_values("step")
        for row, column, label, colour in series:
            fig.add_trace(go.Scatter(x=ordered["step"], y=ordered[column], mode="lines+markers", line_shape="hv",
                                     name=render(_, label, side=side_name(str(side), _)),
                                     line=dict(color=colour, dash=SIDE_DASHES[str(side)]), marker=dict(color=colour, size=4)),
                          row=row, col=1)
    fig.update_xaxes(title_text=_(N_("engine step")), row=2, col=1)
    fig.update_layout(title=title, height=460, margin=dict(l=10, r=10, t=60, b=10), legend_title_text="")
    return palette.finish(fig)


def queue_summary(steps: pd.DataFrame, _: Say = str) -> str:
    if steps.empty:
        return _(N_("No tokens came back in this run."))
    items = [render(_, SAID["queue_item"], side=side_name(str(side), _), waiting=int(mine["waiting"].max()),
                    running=int(mine["running"].max()), free=int(mine["free_blocks"].min()))
             for side, mine in steps.groupby("side", sort=False)]
    return render(_, SAID["queue"], items=listed(items, _, clauses=True))


def latencies_figure(requests: pd.DataFrame, _: Say = str) -> go.Figure:
    """Per request, time to first token and median time between its tokens, one bar per side."""
    title = _(N_("Time to first token and time between tokens, per request"))
    if requests.empty:
        return empty_figure(title, _(N_("No requests in this run.")))
    fig = make_subplots(rows=1, cols=2, subplot_titles=[_(N_("time to first token")), _(N_("time between tokens, median"))])
    for side, mine in requests.groupby("side", sort=False):
        names = [request_name(i, _) for i in mine["index"]]
        for col, column in ((1, "ttft_ms"), (2, "tbt_p50_ms")):
            fig.add_trace(go.Bar(x=names, y=mine[column], name=side_name(str(side), _), legendgroup=str(side),
                                 showlegend=col == 1,
                                 marker=dict(color=SIDE_COLOURS[str(side)], pattern_shape="/" if side == "b" else "")),
                          row=1, col=col)
    fig.update_yaxes(title_text=_(N_("milliseconds")), row=1, col=1)
    fig.update_layout(title=title, barmode="group", height=360, margin=dict(l=10, r=10, t=60, b=10), legend_title_text="")
    return palette.finish(fig)


def latencies_summary(requests: pd.DataFrame, _: Say = str) -> str:
    if requests.empty:
        return _(N_("No requests in this run."))
    items = [render(_, SAID["latencies_item"], side=side_name(str(side), _), ttft=float(mine["ttft_ms"].median()),
                    tbt=float(mine["tbt_p50_ms"].median()))
             for side, mine in requests.groupby("side", sort=False)]
    return render(_, SAID["latencies"], items=listed(items, _, clauses=True))


def charts(done: list[SideRun], _: Say = str) -> list[Chart]:
    """The run's charts with their captions and summaries: a block table per side, then the queue and the latencies."""
    out = []
    for run in done:
        caption = render(_, CAPTIONS["blocks"], side=side_name(run.side, _))
        out.append(Chart(caption, blocks_figure(run.blocks, run.steps, run.settings.num_blocks, _),
                         blocks_summary(run.blocks, run.steps, run.settings.num_blocks, run.side, _)))
    steps = pd.concat([r.steps for r in done], ignore_index=True)
    requests = pd.concat([r.requests for r in done], ignore_index=True)
    out.append(Chart(_(CAPTIONS["queue"]), queue_figure(steps, _), queue_summary(steps, _)))
    out.append(Chart(_(CAPTIONS["latencies"]), latencies_figure(requests, _), latencies_summary(requests, _)))
    return out


def numbers_table(done: Iterable[SideRun], _: Words) -> pd.DataFrame:
    """The runs' figures side by side: one column per side, one row per words.NUMBERS entry."""
    return pd.DataFrame({side_name(r.side, _): [number_text(k, getattr(r.figures, k), _, percents=("prefix_share",))
                                                for k in NUMBERS] for r in done},
                        index=[_(label) for label in NUMBERS.values()])


def requests_table(done: Iterable[SideRun], _: Words) -> pd.DataFrame:
    """Every request of every side as the page lists them, headed and worded in the reader's language."""
    rows = pd.concat([r.requests for r in done], ignore_index=True)
    shown = rows[list(REQUEST_COLUMNS)].copy()
    shown["side"] = [side_name(s, _) for s in shown["side"]]
    shown["index"] = [int(i) + 1 for i in shown["index"]]
    shown["status"] = [_.render(STATUS[s], error=e) for s, e in zip(rows["status"], rows["error"], strict=True)]
    shown[["ttft_ms", "tbt_p50_ms"]] = shown[["ttft_ms", "tbt_p50_ms"]].astype(float).round(1)
    return shown.rename(columns={k: _(v) for k, v in REQUEST_COLUMNS.items()})
