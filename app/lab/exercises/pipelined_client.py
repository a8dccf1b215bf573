"""Pipelined clients: a session that sends chunk k+1 before chunk k's answer is back.

Which order each chunk reached the sequence batcher in is read from Triton's own trace
(QUEUE_START, or REQUEST_START for a chunk refused before it was queued), never inferred
from the client's side.
"""
from __future__ import annotations

import pandas as pd
import plotly.express as px
import plotly.graph_objects as go

from app.lab import driver
from app.lab.exercises import measure, plots
from app.lab.exercises.base import Exercise, ExerciseResult, Option, Steps
from app.lab.scenario import Scenario, random_texts
from app.lab.transports import Transport

MODEL = "asr_sequence_direct"
SESSIONS = 8  # as many as the deployment's slots: no session waits in the backlog
LENGTH = 24
IN_FLIGHT = 4
# Pipelined HTTP is a race: it is run several times and each round counted. With 5 rounds 17 of
# 20 single runs showed a reordering, with 10 rounds 20 of 20 (shared two-core machine).
ROUNDS = 10
# (label, transport, chunks in flight per session, rounds)
RUNS = (
    ("http_async", Transport.HTTP, IN_FLIGHT, ROUNDS),
    ("grpc_async", Transport.GRPC, IN_FLIGHT, 2),
    ("grpc_stream", Transport.GRPC_STREAM, IN_FLIGHT, 2),
    ("serial", Transport.HTTP, 1, 1),
)
LABELS = {
    "http_async": f"HTTP async_infer, {IN_FLIGHT} in flight",
    "grpc_async": f"gRPC async_infer, {IN_FLIGHT} in flight",
    "grpc_stream": f"gRPC stream, {IN_FLIGHT} in flight",
    "serial": "HTTP, one at a time",
}

EXERCISE = Exercise(
    name="pipelined_client",
    title="Pipelined clients: chunks that overtake each other",
    scenario=(
        f"{SESSIONS} streaming sessions on the direct sequence batcher (one slot each). To cut latency, "
        f"every client sends its chunks without waiting for answers: HTTP async_infer with up to {IN_FLIGHT} "
        "chunks of its session in flight, and no think time between chunks. Each chunk carries the "
        "session's correlation ID; only the first has START."
    ),
    question="In what order do each session's chunks reach the sequence batcher, and what does that do to the transcripts?",
    options=(
        Option("in_order", "In the order each client sent them, so every transcript is intact."),
        Option(
            "reordered",
            "Sometimes a chunk overtakes an earlier one of its session; the batcher runs them as they arrive, "
            "so those sessions come out wrong or are refused.",
        ),
        Option("fixed_by_batcher", "Sometimes out of order, but the sequence batcher puts each session's chunks back in order."),
        Option("all_refused", "Triton refuses a second request for a sequence while the first is unanswered."),
    ),
    correct="reordered",
)


def _scenario(transport: Transport, in_flight: int, seed: int) -> Scenario:
    return Scenario(
        model=MODEL,
        texts=random_texts(SESSIONS, LENGTH, seed),
        think_ms=0.0,
        jitter_ms=0.0,
        seed=seed,
        transport=transport,
        in_flight=in_flight,
    )


def arrival_order(run) -> pd.DataFrame:
    """Per chunk: the order it was sent in (its index) and the order it reached the scheduler."""
    q = run.requests.copy()
    if "queue_start_ns" not in q or q["request_start_ns"].isna().all():
        q["arrived_ns"] = q["t_send"]  # untraced (external server): no server-side order to show
        traced = False
    else:
        q["arrived_ns"] = q["queue_start_ns"].fillna(q["request_start_ns"])
        traced = True
    # A chunk missing from the trace (refused before queueing, or a server that died) has no place
    # in the arrival order: its rank stays empty and it does not count as out of place.
    q["arrival_rank"] = q.groupby("session")["arrived_ns"].rank(method="first").astype("Int64") - 1
    q["out_of_place"] = (q["arrival_rank"] != q["chunk"]).fillna(False).astype(bool)
    verdicts = run.sessions.set_index("session")["verdict"]
    q["verdict"] = q["session"].map(verdicts)
    q["traced"] = traced
    return q[["session", "chunk", "arrival_rank", "out_of_place", "verdict", "error", "traced"]]


def _round_row(label: str, index: int, run, order: pd.DataFrame) -> dict:
    swapped = order.groupby("session")["out_of_place"].any()
    verdicts = measure.verdict_counts(run)
    broken = set(run.sessions.loc[run.sessions["verdict"] != "intact", "session"])
    return {
        "run": label,
        "round": index + 1,
        "sessions_reordered": int(swapped.sum()),
        "chunks_out_of_place": int(order["out_of_place"].sum()),
        "sessions_broken": len(broken),
        "reordered_and_broken": len(broken & set(swapped[swapped].index)),
        "intact": verdicts.get("intact", 0),
        "refused": verdicts.get("error", 0),
        "wrong": sum(v for k, v in verdicts.items() if k not in ("intact", "error")),
        "wall_s": round(run.wall_s, 2),
    }


def run(server, deployer, progress=None) -> ExerciseResult:
    steps = Steps(progress, sum(r[3] for r in RUNS) + 1)
    rounds, orders, runs = [], [], {}
    for label, transport, in_flight, count in RUNS:
        for i in range(count):
            steps(f"{LABELS[label]}: round {i + 1} of {count}")
            result = driver.run(server, _scenario(transport, in_flight, seed=i))
            order = arrival_order(result)
            rounds.append(_round_row(label, i, result, order))
            orders.append(order.assign(run=label, round=i + 1))
            runs[f"{label}_{i + 1}"] = result
    steps("Measuring")
    rounds = pd.DataFrame(rounds)
    orders = pd.concat(orders, ignore_index=True)
    by_run = rounds.groupby("run").agg(
        rounds=("round", "count"),
        rounds_reordered=("sessions_reordered", lambda s: int((s > 0).sum())),
        sessions_reordered=("sessions_reordered", "sum"),
        sessions_broken=("sessions_broken", "sum"),
        reordered_and_broken=("reordered_and_broken", "sum"),
    )
    http = by_run.loc["http_async"]
    numbers = {
        "traced": bool(orders["traced"].all()),
        "http_async_rounds_reordered": f"{int(http['rounds_reordered'])} of {int(http['rounds'])}",
        "http_async_sessions_reordered": int(http["sessions_reordered"]),
        "http_async_sessions_broken": int(http["sessions_broken"]),
        "http_async_reordered_sessions_broken": int(http["reordered_and_broken"]),
        "grpc_async_sessions_reordered": int(by_run.loc["grpc_async", "sessions_reordered"]),
        "grpc_stream_sessions_reordered": int(by_run.loc["grpc_stream", "sessions_reordered"]),
        "grpc_stream_sessions_broken": int(by_run.loc["grpc_stream", "sessions_broken"]),
        "serial_sessions_reordered": int(by_run.loc["serial", "sessions_reordered"]),
        "serial_sessions_broken": int(by_run.loc["serial", "sessions_broken"]),
    }
    reordered = http["sessions_reordered"] > 0
    if not reordered:
        outcome = "in_order" if http["sessions_broken"] == 0 else "all_refused"
    else:
        outcome = "reordered" if http["reordered_and_broken"] > 0 else "fixed_by_batcher"
    findings = [
        f"{LABELS[label]}: {int(row.rounds_reordered)} of {int(row.rounds)} round(s) had a chunk overtaken; "
        f"{int(row.sessions_reordered)} session(s) reordered, {int(row.sessions_broken)} not intact, "
        f"{int(row.reordered_and_broken)} of them among the reordered"
        for label, row in by_run.reindex([r[0] for r in RUNS]).iterrows()
    ]
    refusals = orders[(orders["run"] == "http_async") & (orders["error"] != "")]["error"]
    if not refusals.empty:
        findings.append(f"a refusal seen with pipelined HTTP: \"{refusals.iloc[0]}\"")
    if not numbers["traced"]:
        findings.append("the server was not traced, so arrival order fell back to send time and says nothing")
    explanation = (
        "The sequence batcher keeps a sequence's requests in the order they reach it; it has no sequence "
        "numbers, so it cannot restore an order the network lost. Unary requests sent without waiting travel "
        "independently: over HTTP async_infer each chunk in flight takes its own pooled connection, and "
        "Triton's HTTP threads and gRPC completion queues hand them to the scheduler in whatever order they "
        "finish reading them. A chunk that overtakes the one before it is run first: the recogniser folds "
        "the deltas in the wrong order (wrong symbols), and if it overtakes the START the sequence does not "
        "exist yet, so it is refused. One gRPC bidirectional stream per session delivers requests in the "
        "order written and Triton answers a non-decoupled model's stream in order, so it can pipeline "
        "safely; sending one chunk at a time (waiting for each answer) is safe on any transport but pays a "
        "round trip per chunk."
    )
    steps.finish()
    return ExerciseResult(
        EXERCISE,
        outcome,
        numbers,
        {"rounds": rounds, "arrival": orders},
        explanation,
        findings,
        runs,
    )


def figures(result: ExerciseResult) -> list[tuple[str, go.Figure]]:
    rounds = result.tables["rounds"].copy()
    rounds["transport"] = rounds["run"].map(LABELS)
    bars = px.bar(
        rounds, x="round", y="sessions_reordered", color="transport", barmode="group",
        labels={"sessions_reordered": "sessions with a chunk overtaken", "round": "round"},
        title="How often chunks overtook each other, per round (from the server's trace)",
    )
    arrival = result.tables["arrival"]
    shown = []
    for label in [r[0] for r in RUNS]:
        mine = arrival[arrival["run"] == label]
        worst = mine.groupby("round")["out_of_place"].sum()
        pick = int(worst.idxmax()) if not worst.empty else 1  # the round with most to see
        shown.append(mine[mine["round"] == pick].assign(transport=LABELS[label]))
    shown = pd.concat(shown, ignore_index=True)
    shown["placed"] = shown["out_of_place"].map({True: "overtaken / overtaking", False: "in order"})
    shown["session no."] = shown["session"] + 1
    order = px.scatter(
        shown, x="chunk", y="arrival_rank", color="placed", facet_col="transport", facet_col_wrap=2,
        hover_data=["session no.", "verdict", "error"],
        color_discrete_map={"overtaken / overtaking": "#d62728", "in order": "#2ca02c"},
        labels={"chunk": "sent as chunk", "arrival_rank": "reached the scheduler as"},
        title="Sent order vs the order chunks reached the scheduler (all sessions, one round each)",
    )
    verdicts = rounds.groupby("transport")[["intact", "wrong", "refused"]].sum().reset_index()
    verdicts = verdicts.melt(id_vars="transport", var_name="verdict", value_name="sessions")
    outcome = px.bar(
        verdicts, x="transport", y="sessions", color="verdict",
        color_discrete_map={"intact": plots.VERDICT_COLOURS["intact"], "wrong": plots.VERDICT_COLOURS["lost"], "refused": plots.VERDICT_COLOURS["error"]},
        title="Transcripts over all rounds",
    )
    return [
        ("Reordering per round", plots.layout(bars)),
        ("Sent vs arrival order", plots.layout(order, height=520)),
        ("Verdicts", plots.layout(outcome)),
    ]
