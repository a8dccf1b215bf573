"""Replay and side-by-side figures of runs (plotly, no Streamlit).

replay_figure plays a run back batch by batch: one animation frame per execution the server's
trace recorded, in time order, each showing the instance x slot grid with the chunks that batch
just ran (session and chunk), a mark on each chunk that read state someone else wrote, and in
every cell the chunks it held before. Play, pause and speed are buttons and the slider steps, all
inside the figure; `highlight` draws one session's path through the grid and fades the others.
A strip under the grid puts the batch on the run's time axis, so two replays (the mistake and the
fix) given one shared_range line up with each other and with their slot timelines.

side_by_side draws two runs' slot timelines (figures.slot_timeline) on one time axis and, when the
deployments have the same instances x slots, one row layout, so the mistake reads beside the fix.

Builders take `_`, the reader's Words, as figures.py does; `projector=True` sets type large enough
for a room. replay_summary says in words what the replay shows (side_by_side's timelines say
theirs through figures.slot_timeline_summary).
"""
from __future__ import annotations

import math
from dataclasses import dataclass
from functools import lru_cache
from typing import TYPE_CHECKING, Any

import pandas as pd
import plotly.graph_objects as go

from app.charts import palette
from app.charts.figures import WRONG_COLOUR, render, sentences, session_colour
from app.i18n import N_, Translate
from app.recogniser.engine.judgement import analysis
from app.recogniser.engine.judgement.analysis import RunAnalysis
from app.recogniser.figures import owner_words, slot_timeline, slot_timeline_summary
from app.recogniser.words.charts import CHART_SUMMARIES as SUMMARIES

if TYPE_CHECKING:
    from app.lab.records import RunResult

FRAME_MS = 700  # one batch on screen at 1x
SPEEDS = (0.5, 1.0, 2.0, 4.0)
TRAIL = 3  # earlier chunks a cell lists under the one it holds
# Whose state a chunk read (analysis.owner_label codes) that it should not have: another
# session of this run, a session of an earlier run, or a padding row.
FOREIGN = ("session", "earlier", "padding")
EMPTY_COLOUR = "rgba(200,200,200,0.25)"
JUST_LINE = "#111111"
PATH_COLOUR = "#111111"
STRIP_COLOUR = "rgba(110,110,110,0.55)"
CURSOR_COLOUR = palette.BAD

# Trace order: the frames replace traces 0-3 and 5; 4 (the run's executions) never changes.
CELLS, JUST, FOREIGN_MARKS, PATH, STRIP, CURSOR = range(6)
DYNAMIC = [CELLS, JUST, FOREIGN_MARKS, PATH, CURSOR]


@dataclass(frozen=True)
class Chunk:
    """One executed request: which session's chunk ran in which cell, and whose state it read."""

    session: int
    chunk: int  # 0-based
    instance: int
    slot: int
    start: float  # seconds since the run started (trace)
    end: float
    owner: str  # analysis.owner_label code
    owner_session: int | None
    expected: str
    received: str

    @property
    def foreign(self) -> bool:
        return self.owner in FOREIGN


@dataclass(frozen=True)
class Batch:
    """One execution of the model: an instance, a start time and the chunks it ran."""

    instance: int
    start: float
    end: float
    size: int
    chunks: tuple[Chunk, ...]


def batches(run: RunAnalysis) -> list[Batch]:
    """The run's executions in time order (then instance), each with its chunks by slot."""
    marks = run.marks
    if marks.empty:
        return []
    out = []
    for (instance, start), group in marks.groupby(["instance", "exec_start"], sort=True):
        chunks = tuple(
            Chunk(int(r.session), int(r.chunk), int(r.instance), int(r.slot), float(r.exec_start), float(r.exec_end),
                  str(r.state_from), None if pd.isna(r.state_from_session) else int(r.state_from_session),
                  str(r.expected_char), str(r.received_char))
            for r in group.sort_values("slot").itertuples()
        )
        out.append(Batch(int(instance), float(start), float(group["exec_end"].max()), int(group["batch"].max()), chunks))
    out.sort(key=lambda b: (b.start, b.instance))
    return out


def grid_shape(run: RunAnalysis) -> tuple[int, int]:
    """Instances x slots the grid shows: the deployment's (the run's layout), widened to any cell the data used."""
    rows = run.slot_rows
    n_instances = max([run.instances or 0, *[i + 1 for i, _s in rows]]) or 1
    n_slots = max([run.slots or 0, *[s + 1 for _i, s in rows]]) or 1
    return n_instances, n_slots


def time_range(requests: pd.DataFrame) -> tuple[float, float]:
    """The ms a run's slot timeline spans: from its start to its last execution (or reply)."""
    end = 0.0
    if analysis.is_traced(requests):
        ran = requests[requests["exec_end"].notna()]
        end = float(ran["exec_end"].max()) if not ran.empty else 0.0
    if not end and "t_recv" in requests and requests["t_recv"].notna().any():
        end = float(requests["t_recv"].max())
    end_ms = end * 1000
    # The timeline gives every bar a minimum width of 1/300 of the run: leave room for the last one.
    return 0.0, end_ms * 1.02 + max(end_ms / 300, 0.05) + 0.5


def shared_range(*results: RunResult) -> tuple[float, float]:
    """One time axis (ms since each run started) that shows every run given in full."""
    spans = [time_range(r.requests) for r in results]
    if not spans:
        return 0.0, 1.0
    return min(lo for lo, _hi in spans), max(hi for _lo, hi in spans)


def _laid_out(a: RunResult, b: RunResult, instances: int | None, slots: int | None) -> tuple[RunAnalysis, RunAnalysis]:
    """Both runs' analyses on rows that give both timelines the same rows (the union of what each used).
    A timeline reads only a run's requests."""
    (ia, sa), (ib, sb) = (grid_shape(RunAnalysis(r.requests, instances=instances, slots=slots)) for r in (a, b))
    return (RunAnalysis(a.requests, instances=max(ia, ib), slots=max(sa, sb)),
            RunAnalysis(b.requests, instances=max(ia, ib), slots=max(sa, sb)))


def side_by_side(a: RunResult, b: RunResult, _: Translate = str, slots: int | None = None, instances: int | None = None,
                 schedulers: tuple[str, str] = ("direct", "direct"), titles: tuple[str, str] | None = None,
                 projector: bool = False) -> tuple[go.Figure, go.Figure]:
    """The slot timelines of runs a and b on one time axis and, where the grids match, one row layout.

    `schedulers` names each run's deployment (it words the rows no request of the run filled);
    `titles`, already in the reader's language, replace the timeline's own title (say, the
    preset's name). Without instances and slots, both show every cell either run used.
    """
    x_range = shared_range(a, b)
    figs = []
    for k, run in enumerate(_laid_out(a, b, instances, slots)):
        fig = slot_timeline(run, schedulers[k], _=_)
        if titles:
            fig.update_layout(title=titles[k])
        if fig.data:  # an untraced run keeps its "no trace" message
            fig.update_layout(xaxis=dict(range=list(x_range), autorange=False))
        if projector:
            _projector(fig, legend_beside=True)
        figs.append(fig)
    return figs[0], figs[1]


def side_by_side_summaries(a: RunResult, b: RunResult, _: Translate = str, slots: int | None = None, instances: int | None = None,
                           schedulers: tuple[str, str] = ("direct", "direct")) -> tuple[str, str]:
    """What each of side_by_side's timelines shows, in words, on the same rows it draws."""
    first, second = (slot_timeline_summary(run, schedulers[k], _=_) for k, run in enumerate(_laid_out(a, b, instances, slots)))
    return first, second


def _projector(fig: go.Figure, base: int = 20, legend_beside: bool = False) -> None:
    fig.update_layout(font=dict(size=base), title_font_size=base + 8, hoverlabel_font_size=base,
                      legend_font_size=base - 2)
    # Row labels ("instance 0 · slot 3") in projector type are wider than the small left margin
    # the page figures use; without automargin they were cut to their last characters.
    fig.update_yaxes(automargin=True)
    fig.update_xaxes(automargin=True)
    if legend_beside:  # a timeline's legend under the plot, in projector type, ran into its time axis title
        fig.update_layout(legend=dict(orientation="v", x=1.01, xanchor="left", y=1.0, yanchor="top"))


def _ink(colour: str) -> str:
    """Black or white text, whichever reads on `colour` (#rrggbb or rgb/rgba)."""
    if colour.startswith("#") and len(colour) == 7:
        r, g, b = (float(int(colour[i : i + 2], 16)) for i in (1, 3, 5))
    else:
        r, g, b = (float(v) for v in colour[colour.index("(") + 1 : colour.index(")")].split(",")[:3])
    return "#111111" if 0.299 * r + 0.587 * g + 0.114 * b > 150 else "#ffffff"


@lru_cache(maxsize=8192)
def _who(_: Translate, chunk: Chunk) -> str:
    return render(_, N_("session {number:count}, chunk {chunk:count}"), number=chunk.session + 1, chunk=chunk.chunk + 1)


@lru_cache(maxsize=8192)
def _short(_: Translate, chunk: Chunk) -> str:
    return render(_, N_("{number:count}·{chunk:count}"), number=chunk.session + 1, chunk=chunk.chunk + 1)


def replay_figure(result: RunResult, _: Translate = str, highlight: int | None = None, x_range: tuple[float, float] | None = None,
                  instances: int | None = None, slots: int | None = None, projector: bool = False) -> go.Figure:
    """The run played back batch by batch into its instance x slot grid (see the module's words).

    `highlight` is a 0-based session index: its path (the cells its chunks ran in, in order) is
    drawn over the grid and every other session's cells are faded. `x_range` (ms) fixes the time
    strip's axis, shared_range(a, b) for two replays shown together.
    """
    requests = result.requests
    run = RunAnalysis(requests, instances=instances, slots=slots)  # the replay reads only the run's requests
    title = _("Replay: each batch into its instance × slot")
    steps = batches(run)
    if not steps:
        fig = go.Figure()
        fig.update_layout(title=title, height=220, xaxis_visible=False, yaxis_visible=False)
        fig.add_annotation(text=_("No server trace for this run (external server without TRITON_TRACE_DIR)."),
                           showarrow=False, x=0.5, y=0.5, xref="paper", yref="paper")
        if projector:
            _projector(fig)
        return fig
    n_instances, n_slots = grid_shape(run)
    big = 22 if projector else 13
    x_range = (x_range[0], x_range[1]) if x_range is not None else time_range(requests)

    # Grid state after each batch: what each cell holds (newest first).
    held: dict[tuple[int, int], list[Chunk]] = {}
    path: list[Chunk] = []
    foreign_so_far = 0
    frames: list[dict[str, Any]] = []
    cells = [(i, s) for i in range(n_instances) for s in range(n_slots)]
    for k, batch in enumerate(steps):
        for c in batch.chunks:
            held.setdefault((c.instance, c.slot), []).insert(0, c)
            if c.session == highlight:
                path.append(c)
        foreign_so_far += sum(c.foreign for c in batch.chunks)
        just = {(c.instance, c.slot) for c in batch.chunks}
        data = [
            _cells_trace(_, cells, held, just, highlight, big),
            _just_trace(_, batch),
            _foreign_trace(_, batch, big),
            _path_trace(_, path, big),
            _cursor_trace(batch, n_instances),
        ]
        heading = render(_, N_("Batch {k:count} of {n:count}: instance {instance:text} at {time:ms}, batch size {size:count}"),
                          k=k + 1, n=len(steps), instance=batch.instance, time=batch.start * 1000, size=batch.size)
        tally = render(_, N_("chunks so far that read state someone else wrote: {n:count}"), n=foreign_so_far)
        frames.append(dict(name=str(k), data=data, traces=DYNAMIC,
                           layout=dict(title=dict(text=title, subtitle=dict(text=f"{heading}<br>{tally}")))))

    first = frames[0]["data"]
    fig = go.Figure(data=[*first[:4], _strip_trace(_, steps), first[4]], frames=frames,
                    layout=dict(title=frames[0]["layout"]["title"]))
    _controls(fig, _, len(steps), big)
    _grid_layout(fig, _, n_instances, n_slots, x_range, big)
    if projector:
        _projector(fig, 20)
    return fig


def replay_summary(result: RunResult, _: Translate = str, highlight: int | None = None, instances: int | None = None,
                   slots: int | None = None) -> str:
    """What replay_figure plays, in words: its batches, the grid, the chunks that read someone else's state
    and, with `highlight`, that session's path."""
    run = RunAnalysis(result.requests, instances=instances, slots=slots)
    steps = batches(run)
    if not steps:
        return _("No server trace for this run (external server without TRITON_TRACE_DIR).")
    n_instances, n_slots = grid_shape(run)
    chunks = [c for b in steps for c in b.chunks]
    told = render(_, SUMMARIES["replay"], batches=len(steps), instances=n_instances, slots=n_slots,
                  foreign=sum(c.foreign for c in chunks))
    path = [c for c in chunks if c.session == highlight]
    followed = (render(_, SUMMARIES["replay_path"], session=highlight, chunks=len(path),
                       cells=len({(c.instance, c.slot) for c in path})) if highlight is not None else "")
    return sentences(told, followed)


@lru_cache(maxsize=1024)
def _where(_: Translate, cell: tuple[int, int]) -> str:
    return render(_, N_("instance {instance:text} · slot {slot:text}"), instance=cell[0], slot=cell[1])


@lru_cache(maxsize=8192)
def _read_words(_: Translate, chunk: Chunk) -> str:
    return render(_, N_("read state written by {owner:text}"), owner=owner_words(chunk.owner, chunk.owner_session, _))


@lru_cache(maxsize=8192)
def _held_words(_: Translate, cell: tuple[int, int], chunk: Chunk) -> str:
    return (f"{_where(_, cell)}<br><b>{_who(_, chunk)}</b><br>"
            + render(_, N_("expected {expected:text}, got {received:text}"), expected=chunk.expected, received=chunk.received)
            + "<br>" + _read_words(_, chunk))


def _cells_trace(_: Translate, cells: list[tuple[int, int]], held: dict[tuple[int, int], list[Chunk]], just: set[tuple[int, int]],
                 highlight: int | None, big: int) -> dict[str, Any]:
    colours, opacity, text, hover, ink = [], [], [], [], []
    for cell in cells:
        chunks = held.get(cell, [])
        now = chunks[0] if chunks else None
        if now is None:
            colours.append(EMPTY_COLOUR)
            opacity.append(1.0)
            text.append("")
            ink.append("#111111")
            hover.append(f"{_where(_, cell)}<br>" + _("no chunk of this run has run here yet"))
            continue
        colour = session_colour(now.session)
        colours.append(colour)
        mine = highlight is None or now.session == highlight
        opacity.append((1.0 if cell in just else 0.5) if mine else 0.12)
        # Text keeps full strength over a faded fill: dark on a pale cell, grey on another's faded one.
        ink.append(_ink(colour) if opacity[-1] == 1.0 else "#111111" if mine else "#8a8a8a")
        before = [_short(_, c) for c in chunks[1 : 1 + TRAIL]] + (["…"] if len(chunks) > 1 + TRAIL else [])
        label = f"<b>{_who(_, now)}</b>"
        if before:
            trail = render(_, N_("before: {chunks:text}"), chunks=" ← ".join(before))
            label += f"<br><span style='font-size:{round(big * 0.8)}px'>{trail}</span>"
        text.append(label)
        hover.append(_held_words(_, cell, now))
    return dict(
        type="bar",
        name=_("chunk a cell holds"),
        x=[s for _i, s in cells],
        y=[0.9] * len(cells),
        base=[i - 0.45 for i, _s in cells],
        width=0.92,
        marker=dict(color=colours, opacity=opacity, line=dict(width=0)),
        text=text,
        textposition="inside",
        insidetextanchor="middle",
        textangle=0,
        textfont=dict(color=ink, size=big),
        constraintext="none",
        hovertext=hover,
        hovertemplate="%{hovertext}<extra></extra>",
        showlegend=False,
        xaxis="x",
        yaxis="y",
    )


def _just_trace(_: Translate, batch: Batch) -> dict[str, Any]:
    chunks = batch.chunks
    return dict(
        type="bar",
        name=_("chunk this batch ran"),
        x=[c.slot for c in chunks],
        y=[0.9] * len(chunks),
        base=[c.instance - 0.45 for c in chunks],
        width=0.92,
        marker=dict(color="rgba(0,0,0,0)", line=dict(width=4, color=JUST_LINE)),
        customdata=[[c.session, c.chunk, c.instance, c.slot] for c in chunks],
        hoverinfo="skip",
        showlegend=True,
        xaxis="x",
        yaxis="y",
    )


def _foreign_trace(_: Translate, batch: Batch, big: int) -> dict[str, Any]:
    bad = [c for c in batch.chunks if c.foreign]
    return dict(
        type="scatter",
        name=_("read state someone else wrote"),
        x=[c.slot + 0.38 for c in bad],
        y=[c.instance + 0.28 for c in bad],
        mode="markers",
        marker=dict(symbol="x", size=big + 6, color=WRONG_COLOUR, line=dict(width=2, color="#ffffff")),
        customdata=[[c.session, c.chunk, c.owner, -1 if c.owner_session is None else c.owner_session] for c in bad],
        hovertext=[f"{_who(_, c)}<br>{_read_words(_, c)}" for c in bad],
        hovertemplate="%{hovertext}<extra></extra>",
        showlegend=True,
        xaxis="x",
        yaxis="y",
    )


def _path_trace(_: Translate, path: list[Chunk], big: int) -> dict[str, Any]:
    # Along the top band of each cell, clear of its words; repeat visits to one cell sit side by side.
    dx = [((c.chunk % 8) - 3.5) * 0.09 for c in path]
    return dict(
        type="scatter",
        name=_("the highlighted session's path"),
        x=[c.slot + d for c, d in zip(path, dx, strict=True)],
        y=[c.instance - 0.31 for c in path],
        mode="lines+markers+text",
        line=dict(color=PATH_COLOUR, width=3),
        marker=dict(size=big + 8, color="#ffffff", line=dict(width=2, color=PATH_COLOUR)),
        text=[str(c.chunk + 1) for c in path],
        textfont=dict(size=big - 2, color=PATH_COLOUR),
        customdata=[[c.session, c.chunk, c.instance, c.slot] for c in path],
        hovertext=[_who(_, c) for c in path],
        hovertemplate="%{hovertext}<extra></extra>",
        showlegend=bool(path),
        xaxis="x",
        yaxis="y",
    )


def _strip_trace(_: Translate, steps: list[Batch]) -> dict[str, Any]:
    min_ms = max(steps[-1].end * 1000 / 300, 0.05)
    return dict(
        type="bar",
        name=_("the run's batches"),
        orientation="h",
        y=[b.instance for b in steps],
        x=[max((b.end - b.start) * 1000, min_ms) for b in steps],
        base=[b.start * 1000 for b in steps],
        width=0.7,
        marker=dict(color=STRIP_COLOUR, line=dict(width=0)),
        hovertext=[render(_, N_("instance {instance:text}: a batch of {size:count} at {time:ms}"),
                          instance=b.instance, size=b.size, time=b.start * 1000) for b in steps],
        hovertemplate="%{hovertext}<extra></extra>",
        showlegend=False,
        xaxis="x2",
        yaxis="y2",
    )


def _cursor_trace(batch: Batch, n_instances: int) -> dict[str, Any]:
    t = batch.start * 1000
    return dict(
        type="scatter",
        x=[t, t], y=[-0.6, n_instances - 0.4], mode="lines", line=dict(color=CURSOR_COLOUR, width=3),
        hoverinfo="skip", showlegend=False, xaxis="x2", yaxis="y2",
    )


def _grid_layout(fig: go.Figure, _: Translate, n_instances: int, n_slots: int, x_range: tuple[float, float], big: int) -> None:
    """Pixel plan, top down: title, note, slot labels, grid, legend, time strip, its axis, controls."""
    projector = big > 13
    top = 220 if projector else 145  # title, a two-line subtitle (batch; chunks so far) and the note
    grid = n_instances * (150 if projector else 105)
    gap = 2 * big + 30  # the legend sits between the grid and the strip
    strip = 30 + (34 if projector else 24) * n_instances
    bottom = (2 * big + 45) + (3 * big + 30) + (3 * big + 40)  # strip axis title, buttons, slider
    plot = grid + gap + strip
    strip_top, grid_bottom = strip / plot, (strip + gap) / plot
    instance_words = [render(_, N_("instance {instance:text}"), instance=i) for i in range(n_instances)]
    fig.update_layout(
        height=top + plot + bottom,
        barmode="overlay",
        title=dict(yref="container", y=1, yanchor="top", pad=dict(t=12), x=0.01, xanchor="left",
                   subtitle_font_size=big + 1),
        xaxis=dict(tickvals=list(range(n_slots)),
                   ticktext=[render(_, N_("slot {slot:text}"), slot=s) for s in range(n_slots)],
                   range=[-0.5, n_slots - 0.5], autorange=False, side="top", showgrid=False, zeroline=False,
                   fixedrange=True),
        yaxis=dict(tickvals=list(range(n_instances)), ticktext=instance_words,
                   range=[n_instances - 0.5, -0.5], autorange=False, domain=[grid_bottom, 1.0], showgrid=False,
                   zeroline=False, fixedrange=True),
        xaxis2=dict(anchor="y2", range=list(x_range), autorange=False, title=_("time since the run started (ms)")),
        yaxis2=dict(domain=[0.0, strip_top], tickvals=list(range(n_instances)), ticktext=instance_words,
                    range=[n_instances - 0.4, -0.6], autorange=False, fixedrange=True),
        legend=dict(orientation="h", yanchor="top", y=grid_bottom - 4 / plot, x=0, font_size=big - 1),
        margin=dict(l=10, r=10, t=top, b=bottom),
        hoverlabel=dict(align="left"),
        uniformtext=dict(minsize=max(8, big - 6), mode="show"),
    )
    # Two lines: annotations never wrap, and in projector type one line ran past the figure.
    fig.add_annotation(text=_("Each cell shows the chunk that last ran there (session, chunk).") + "<br>"
                       + _("Smaller: the chunks (session·chunk) it held before."),
                       xref="paper", yref="paper", x=0, y=1.0, yshift=big + 22, yanchor="bottom", showarrow=False,
                       xanchor="left", align="left", font=dict(size=big - 1, color="#555555"))


def _controls(fig: go.Figure, _: Translate, n_frames: int, big: int) -> None:
    def play(speed: float) -> dict[str, Any]:
        return dict(label=render(_, N_("▶ {speed:ratio}"), speed=speed), method="animate",
                    args=[None, dict(frame=dict(duration=round(FRAME_MS / speed), redraw=True),
                                     transition=dict(duration=0), fromcurrent=True, mode="immediate")])

    pause = dict(label=_("‖ pause"), method="animate",
                 args=[[None], dict(frame=dict(duration=0, redraw=False), transition=dict(duration=0), mode="immediate")])
    restart = dict(label=_("◀ first batch"), method="animate",
                   args=[["0"], dict(frame=dict(duration=0, redraw=True), transition=dict(duration=0), mode="immediate")])
    every = max(1, math.ceil(n_frames / 12))
    fig.update_layout(
        updatemenus=[dict(type="buttons", direction="left", showactive=True, active=-1,
                          buttons=[pause, *[play(s) for s in SPEEDS], restart],
                          x=0, xanchor="left", y=0, yanchor="top", pad=dict(t=2 * big + 45, r=10),
                          font=dict(size=big))],
        sliders=[dict(
            active=0,
            x=0, len=1.0, y=0, yanchor="top", pad=dict(t=2 * big + 45 + 3 * big + 30),
            currentvalue=dict(visible=False),
            font=dict(size=max(10, big - 3)),
            steps=[dict(method="animate", label=str(k + 1) if k % every == 0 or k == n_frames - 1 else "",
                        args=[[str(k)], dict(mode="immediate", frame=dict(duration=0, redraw=True),
                                             transition=dict(duration=0))])
                   for k in range(n_frames)],
        )],
    )

