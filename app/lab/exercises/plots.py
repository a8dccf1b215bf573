"""Plotly figures of an exercise result (no Streamlit): one list of (caption, figure) per exercise.

Each figure draws one of the result's tables, so what a learner sees is exactly what the
CLI's JSON holds.
"""
from __future__ import annotations

import pandas as pd
import plotly.express as px
import plotly.graph_objects as go

READ_COLOURS = {"own": "#2ca02c", "fresh": "#9edae5", "refused": "#d62728", "unknown": "#7f7f7f"}
LETTER = {True: "right letter", False: "wrong letter"}
VERDICT_COLOURS = {"intact": "#2ca02c", "lost": "#ff7f0e", "foreign": "#9467bd", "garbage": "#8c564b", "error": "#d62728"}


def _sessions(frame: pd.DataFrame) -> pd.Series:
    return "session " + (frame["session"].astype(int) + 1).astype(str)


def _layout(fig: go.Figure, height: int = 320) -> go.Figure:
    fig.update_layout(height=height, margin=dict(l=10, r=10, t=40, b=10), legend_title_text="")
    return fig


def slot_exhaustion(result) -> list[tuple[str, go.Figure]]:
    s = result.tables["sessions"].assign(who=lambda f: _sessions(f))
    waits = px.bar(s, x="who", y="wait_ms", color="strategy", barmode="group",
                   labels={"who": "", "wait_ms": "backlog wait of first chunk (ms)"},
                   title="How long each session waited for a slot")
    h = result.tables["holding"].assign(who=lambda f: _sessions(f))
    arrived = s.set_index(["strategy", "session"])["arrived_s"]
    timeline = go.Figure()
    for strategy, rows in h.groupby("strategy"):
        waiting = [arrived.get((strategy, r.session), r.held_from) for r in rows.itertuples()]
        timeline.add_bar(y=rows["who"] + f" ({strategy})", x=rows["held_from"] - pd.Series(waiting, index=rows.index),
                         base=waiting, orientation="h", name=f"{strategy}: waiting", marker_color="#c7c7c7")
        timeline.add_bar(y=rows["who"] + f" ({strategy})", x=rows["held_to"] - rows["held_from"], base=rows["held_from"],
                         orientation="h", name=f"{strategy}: holding a slot",
                         marker_color="#1f77b4" if strategy == "direct" else "#ff7f0e")
    timeline.update_layout(barmode="overlay", title="Waiting in the backlog, then holding a slot until END",
                           xaxis_title="seconds from the start of the run")
    sweep = px.line(result.tables["sweep"], x="sessions", y="max_wait_ms", color="strategy", markers=True,
                    labels={"max_wait_ms": "longest backlog wait (ms)", "sessions": "open sessions"},
                    title="Backlog wait vs open sessions (capacity 2)")
    sweep.add_vline(x=result.numbers.get("capacity_sequences", 2), line_dash="dot")
    return [("Backlog wait per session", _layout(waits)), ("Slot timeline", _layout(timeline, 380)),
            ("Sweep", _layout(sweep))]


def never_ending(result) -> list[tuple[str, go.Figure]]:
    grid = result.tables["grid"].copy()
    grid["label"] = grid.apply(lambda r: f"reaped after {r.chunks_answered} chunk(s)" if r.reaped else r.verdict, axis=1)
    grid["reaped_num"] = grid["reaped"].astype(int)
    pivot = grid.pivot(index="timeout_ms", columns="think_ms", values="reaped_num")
    labels = grid.pivot(index="timeout_ms", columns="think_ms", values="label")
    heat = go.Figure(go.Heatmap(
        z=pivot.values, x=[f"think {c} ms" for c in pivot.columns], y=[f"timeout {i} ms" for i in pivot.index],
        text=labels.values, texttemplate="%{text}", colorscale=[[0, "#c7e9c0"], [1, "#fcbba1"]], showscale=False,
        zmin=0, zmax=1,
    ))
    heat.update_layout(title="Slow but healthy client: reaped when it thinks longer than the timeout")
    dead = result.tables["dead_client"]
    blocked = px.bar(dead, x=dead["timeout_ms"].astype(str) + " ms", y="waiter_blocked_ms",
                     labels={"x": "idle timeout", "waiter_blocked_ms": "next session blocked (ms)"},
                     title="Dead client (no END): how long the next session waited for its slot")
    chunks = result.tables["evict_chunks"].copy()
    chunks["read"] = chunks["state_owner"].map(lambda o: "fresh cell (owner 0)" if int(o) == 0 else "its own state")
    chunks["letter"] = (chunks["symbol"] == chunks["expected"]).map(LETTER)
    evict = px.scatter(chunks, x="t_send", y="state_in", color="read", symbol="letter",
                       labels={"t_send": "sent at (s)", "state_in": "STATE_IN"},
                       title="After the pause the model had evicted the session's cell; Triton kept the sequence")
    evict.update_traces(marker_size=11)
    if len(chunks) > 3:
        evict.add_vrect(x0=chunks["t_send"].iloc[2], x1=chunks["t_send"].iloc[3], fillcolor="#dddddd", opacity=0.4,
                        line_width=0, annotation_text="pause", annotation_position="top left")
    return [("Timeout x think time", _layout(heat)), ("Dead client", _layout(blocked)),
            ("Model's own clean-up", _layout(evict))]


def id_collision(result) -> list[tuple[str, go.Figure]]:
    chunks = result.tables["chunks"].assign(who=lambda f: _sessions(f))
    chunks["letter"] = chunks["right"].map(LETTER)
    colours = {**READ_COLOURS, "session 1": "#9467bd", "session 2": "#e377c2"}
    fig = px.scatter(chunks, x="t_send", y="who", color="read_state_of", symbol="letter", facet_row="run",
                     color_discrete_map=colours, labels={"t_send": "sent at (s)", "who": "", "read_state_of": "read state of"},
                     title="Whose state each chunk read")
    fig.update_traces(marker_size=10)
    return [("Chunks", _layout(fig, 420))]


def sticky_routing(result) -> list[tuple[str, go.Figure]]:
    routes = result.tables["routes"].assign(who=lambda f: _sessions(f), chunk_no=lambda f: f["chunk"] + 1)
    routes["answer"] = routes.apply(lambda r: "refused" if r["error"] else ("right" if r["right"] else "wrong"), axis=1)
    fig = px.scatter(routes, x="chunk_no", y="who", color="replica", symbol="answer", facet_row="policy",
                     labels={"chunk_no": "chunk", "who": ""}, title="Which replica served each chunk (from nginx's access log)",
                     symbol_map={"right": "circle", "wrong": "diamond", "refused": "x"})
    fig.update_traces(marker_size=12)
    return [("Routing", _layout(fig, 420))]


def forgot_ready(result) -> list[tuple[str, go.Figure]]:
    s = result.tables["sessions"].assign(who=lambda f: _sessions(f))
    fig = px.bar(s, x="who", y="wrong_symbols", color="verdict", facet_row="run", color_discrete_map=VERDICT_COLOURS,
                 labels={"who": "", "wrong_symbols": "wrong symbols"}, title="Wrong symbols per session")
    return [("Sessions", _layout(fig, 420))]


def verification(result) -> list[tuple[str, go.Figure]]:
    checks = result.tables["checks"]
    table = go.Figure(go.Table(
        header=dict(values=["check", "observed", "as expected"], align="left"),
        cells=dict(values=[checks["check"], checks["observed"], checks["as_expected"].map({True: "yes", False: "NO"})],
                   align="left"),
    ))
    table.update_layout(title="The rollout guide's experiments")
    sentiment = result.tables["sentiment"]
    diff = px.bar(sentiment, x="mode", y="max_score_diff", text="batch_sizes",
                  labels={"mode": "", "max_score_diff": "largest score difference vs in-order singles"},
                  title="Sentiment: same reviews, other orders and batches (bar text: batches run, 'N of size')<br>"
                  f"labels identical: {'yes' if sentiment['labels_identical'].all() else 'NO'}; "
                  "scores must agree within 1e-5")
    transcripts = result.tables["recogniser_transcripts"]
    rec = go.Figure(go.Table(
        header=dict(values=["arrival", "expected", "received", "verdict"], align="left"),
        cells=dict(values=[transcripts["arrival"], transcripts["expected_text"], transcripts["received_text"],
                           transcripts["verdict"]], align="left"),
    ))
    rec.update_layout(title="Recogniser behind the dynamic batcher")
    return [("Checks", _layout(table, 330)), ("Sentiment", _layout(diff)), ("Recogniser", _layout(rec, 330))]


DRAW = {
    "slot_exhaustion": slot_exhaustion,
    "never_ending": never_ending,
    "id_collision": id_collision,
    "sticky_routing": sticky_routing,
    "forgot_ready": forgot_ready,
    "verification": verification,
}


def figures(result) -> list[tuple[str, go.Figure]]:
    return DRAW[result.name](result)
