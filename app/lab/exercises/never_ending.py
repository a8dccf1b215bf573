"""Never-ending sequences: the idle timeout, slow clients, dead clients, and who cleans up."""
from __future__ import annotations

import pandas as pd
import plotly.express as px
import plotly.graph_objects as go

from app.lab import driver
from app.lab.deployments import LabSettings
from app.lab.exercises import measure, models, plots
from app.lab.exercises.base import Exercise, ExerciseResult, Option, Steps
from app.lab.scenario import Scenario, random_texts

TIMEOUTS_MS = (200, 600)
THINKS_MS = (100, 400)
SLOW_TEXT = "HELLO"
# The waiting client arrives this long after the dead one fell silent: its own idle clock
# runs from its arrival (seen on this server), so it must not wait in the backlog longer
# than the timeout minus its think time, or it is reaped right after it gets the slot.
WAITER_LAG_MS = 300
EVICT_MODEL = "asr_ex_idle_evict"
EVICT_S = 0.4
PAUSE_MS = 1000
EVICT_TEXT = "HELLO WORLD"
START_REFUSAL = "must specify the START flag"

EXERCISE = Exercise(
    name="never_ending",
    title="Never-ending sequences: idle timeout vs slow and dead clients",
    scenario=(
        "A recogniser on the direct sequence batcher has max_sequence_idle_microseconds = 200000 "
        "(0.2 s). One client is healthy but slow: it thinks 0.4 s between chunks and sends END at "
        "the end. Another client crashes after two chunks and never sends END. The model keeps "
        "each session's state in its own memory."
    ),
    question="What happens to the slow client's second chunk, sent 0.4 s after its first?",
    options=(
        Option("served", "It is served normally: the session is only slow."),
        Option("reaped", "It is refused: Triton already ended the idle sequence, so the chunk lacks a START."),
        Option("fresh", "It is served, but from a fresh state: Triton told the model to reset."),
        Option("waits", "It waits in the backlog until a slot is free."),
    ),
    correct="reaped",
)


def _slow(model: str, think_ms: float) -> Scenario:
    return Scenario(model=model, texts=[SLOW_TEXT], think_ms=think_ms, jitter_ms=0.0)


def _dead(model: str) -> Scenario:
    return Scenario(
        model=model,
        texts=["DEAD CLIENT", "WAITING"],
        think_ms=30.0,
        jitter_ms=0.0,
        stagger_ms=WAITER_LAG_MS,
        abandon={0: 2},  # two chunks, then silence and no END
    )


def _evict(model: str) -> Scenario:
    return Scenario(
        model=model,
        texts=[EVICT_TEXT, random_texts(1, 20, seed=5)[0]],
        think_ms=40.0,
        jitter_ms=0.0,
        pauses={0: (2, PAUSE_MS)},  # session 1 falls silent after its third chunk
    )


def load_evicting_model(server) -> str:
    """A session-keyed deployment whose model drops cells idle for EVICT_S (its own clean-up)."""
    settings = LabSettings(scheduler="direct", instances=1, slots=2, idle_timeout_us=5_000_000, state_key="session")
    return models.load_with_parameters(server, EVICT_MODEL, settings, idle_evict_s=EVICT_S)


def _reaped(session_row) -> bool:
    return session_row["verdict"] == "error" and START_REFUSAL in session_row["detail"]


def run(server, deployer, progress=None) -> ExerciseResult:
    steps = Steps(progress, len(TIMEOUTS_MS) * (2 + len(THINKS_MS)) + 3)
    runs, grid, dead = {}, [], []
    for timeout in TIMEOUTS_MS:
        steps(f"Deploying idle timeout {timeout} ms (1 instance x 1 slot)")
        settings = LabSettings(scheduler="direct", instances=1, slots=1, idle_timeout_us=timeout * 1000)
        model = deployer.apply(settings, owner=f"ex-idle-{timeout}ms").model
        for think in THINKS_MS:
            steps(f"Slow client thinking {think} ms, timeout {timeout} ms")
            result = driver.run(server, _slow(model, think))
            runs[f"slow_t{timeout}_think{think}"] = result
            row = result.sessions.iloc[0]
            answered = int((result.requests["error"] == "").sum())
            grid.append(
                {
                    "timeout_ms": timeout,
                    "think_ms": think,
                    "verdict": row["verdict"],
                    "reaped": _reaped(row),
                    "chunks_answered": answered,
                    "chunks": len(SLOW_TEXT),
                    "model_requests": int(result.server.get("inference_count", answered)),
                    "message": next((e for e in result.requests["error"] if e), ""),
                }
            )
        steps(f"Dead client, timeout {timeout} ms")
        result = driver.run(server, _dead(model))
        runs[f"dead_t{timeout}"] = result
        waits = measure.backlog_waits(result).set_index("session")
        q = result.requests
        silent_at = q[(q["session"] == 0) & (q["error"] == "")]["t_recv"].max()
        waiter = result.sessions.set_index("session").loc[1]
        dead.append(
            {
                "timeout_ms": timeout,
                "waiter_arrived_after_silence_ms": (waits.loc[1, "arrived_s"] - silent_at) * 1000,
                "waiter_blocked_ms": float(waits.loc[1, "wait_ms"]),
                "waiter_verdict": waiter["verdict"],
                "waiter_detail": waiter["detail"],
            }
        )

    steps(f"Deploying the session-keyed model with idle_evict_s = {EVICT_S}")
    evict_model = load_evicting_model(server)
    steps(f"A session pauses {PAUSE_MS} ms while another keeps talking")
    evict = driver.run(server, _evict(evict_model))
    runs["evict"] = evict
    steps("Measuring")

    grid = pd.DataFrame(grid)
    dead = pd.DataFrame(dead)
    q = evict.requests
    paused = q[q["session"] == 0].sort_values("chunk")
    resumed = paused[paused["chunk"] == 3].iloc[0]
    before = paused[paused["chunk"] == 2].iloc[0]
    key_cell = grid[(grid["timeout_ms"] == TIMEOUTS_MS[0]) & (grid["think_ms"] == THINKS_MS[-1])].iloc[0]
    safe_cell = grid[(grid["timeout_ms"] == TIMEOUTS_MS[-1]) & (grid["think_ms"] == THINKS_MS[-1])].iloc[0]
    long_dead = dead[dead["timeout_ms"] == TIMEOUTS_MS[-1]].iloc[0]
    short_dead = dead[dead["timeout_ms"] == TIMEOUTS_MS[0]].iloc[0]
    evicted_session = evict.sessions.set_index("session").loc[0]
    numbers = {
        "slow_reaped_at_short_timeout": bool(key_cell["reaped"]),
        "slow_chunks_answered_before_reap": int(key_cell["chunks_answered"]),
        "model_requests_for_reaped_session": int(key_cell["model_requests"]),
        "slow_intact_at_long_timeout": safe_cell["verdict"] == "intact",
        "cells_reaped": int(grid["reaped"].sum()),
        "dead_blocked_ms_long_timeout": float(long_dead["waiter_blocked_ms"]),
        "dead_blocked_ms_short_timeout": float(short_dead["waiter_blocked_ms"]),
        "evict_after_pause_state_owner": int(resumed["state_owner"]),
        "evict_after_pause_state_in": int(resumed["state_in"]),
        "evict_before_pause_state_owner_is_own": int(before["state_owner"]) == int(evicted_session["tag"]),
        "evict_after_pause_error": resumed["error"] or "none",
        "evict_verdict": evicted_session["verdict"],
    }
    if key_cell["reaped"]:
        outcome = "reaped"
    elif key_cell["verdict"] == "lost":
        outcome = "fresh"
    elif key_cell["verdict"] == "intact":
        outcome = "served"
    else:
        outcome = "waits"
    findings = [
        "grid (timeout x think): "
        + "; ".join(
            f"{r.timeout_ms} ms x {r.think_ms} ms: {'REAPED after ' + str(r.chunks_answered) + ' chunk(s)' if r.reaped else r.verdict}"
            for r in grid.itertuples()
        ),
        f"reaped chunk's refusal: {key_cell['message'] or '(none)'}",
        f"the model ran {int(key_cell['model_requests'])} request(s) for the reaped session: one per answered "
        "chunk, nothing for the reap itself.",
        f"dead client, timeout {TIMEOUTS_MS[-1]} ms: the next session waited {long_dead['waiter_blocked_ms']:.0f} ms "
        f"for the dead one's slot; at {TIMEOUTS_MS[0]} ms it waited {short_dead['waiter_blocked_ms']:.0f} ms.",
        f"after a {PAUSE_MS} ms pause (model clean-up after {EVICT_S} s, Triton timeout 5 s) the next chunk was "
        f"accepted ({'no error' if not resumed['error'] else resumed['error']}) and read STATE_IN "
        f"{int(resumed['state_in'])}, STATE_OWNER {int(resumed['state_owner'])}: verdict {evicted_session['verdict']}.",
    ]
    if long_dead["waiter_verdict"] == "error":
        findings.append(
            "the waiting session was itself reaped right after it got the slot: its idle clock ran while it "
            "sat in the backlog (" + long_dead["waiter_detail"] + ")"
        )
    explanation = (
        "Triton's sequence batcher ends a sequence that has sent nothing for max_sequence_idle_microseconds "
        "and frees its slot. It cannot tell a slow client from a dead one. With the timeout below the slow "
        f"client's think time, its sequence was reaped between chunks and its next chunk was refused "
        f"(\"{START_REFUSAL} ...\"): to Triton it is a new sequence without START. With the timeout above "
        "the think time the slow client is safe, but a client that dies without END keeps its slot for the "
        f"whole timeout: the session behind it was blocked {long_dead['waiter_blocked_ms']:.0f} ms at "
        f"{TIMEOUTS_MS[-1]} ms, {short_dead['waiter_blocked_ms']:.0f} ms at {TIMEOUTS_MS[0]} ms. Choose the "
        "timeout just above the slowest healthy client's longest silence. The reaper never tells the model: "
        "no request, no END, and for the Python backend no implicit state to release, so the model ran only "
        "the chunks it answered. A model that keeps state by session or correlation ID must clean up itself; "
        f"ours drops cells idle for idle_evict_s ({EVICT_S} s here), which is why the chunk after the pause "
        f"read a fresh cell (STATE_OWNER {int(resumed['state_owner'])}) although Triton still considered the "
        "sequence alive. Keep the model's clean-up longer than Triton's timeout, or it drops live sessions."
    )
    steps.finish()
    return ExerciseResult(
        EXERCISE,
        outcome,
        numbers,
        {"grid": grid, "dead_client": dead, "evict_chunks": paused[["chunk", "t_send", "state_in", "state_owner", "symbol", "expected", "error"]].reset_index(drop=True)},
        explanation,
        findings,
        runs,
    )


def figures(result: ExerciseResult) -> list[tuple[str, go.Figure]]:
    """The exercise's charts, each drawn from one of the result's tables."""
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
    chunks["letter"] = (chunks["symbol"] == chunks["expected"]).map(plots.LETTER)
    evict = px.scatter(chunks, x="t_send", y="state_in", color="read", symbol="letter",
                       labels={"t_send": "sent at (s)", "state_in": "STATE_IN"},
                       title="After the pause the model had evicted the session's cell; Triton kept the sequence")
    evict.update_traces(marker_size=11)
    if len(chunks) > 3:
        evict.add_vrect(x0=chunks["t_send"].iloc[2], x1=chunks["t_send"].iloc[3], fillcolor="#dddddd", opacity=0.4,
                        line_width=0, annotation_text="pause", annotation_position="top left")
    return [("Timeout x think time", plots.layout(heat)), ("Dead client", plots.layout(blocked)),
            ("Model's own clean-up", plots.layout(evict))]
