"""Pipelined clients: a session that sends chunk k+1 before chunk k's answer is back.

Which order each chunk reached the sequence batcher in is read from Triton's own trace
(QUEUE_START, or REQUEST_START for a chunk refused before it was queued), never inferred
from the client's side.
"""
from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

import pandas as pd

from app.exercise_kit import Exercise, ExerciseJudgement, Finding, Measured, Number, Steps, Tables, readings
from app.lab.scenario.scenario import Scenario, random_texts
from app.lab.scenario.transport import Transport
from app.recogniser.engine import driver

if TYPE_CHECKING:
    from app.lab.deployment import Deployer
    from app.lab.progress import Progress
    from app.lab.records import RunResult
    from app.lab.server import LabServer

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
EXERCISE = Exercise(
    name="pipelined_client",
    options=("in_order", "reordered", "fixed_by_batcher", "all_refused"),
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


def arrival_order(run: RunResult) -> pd.DataFrame:
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


def _announce(steps: Steps, label: str, **values: object) -> None:
    """The step of one round of one way of sending (a RUNS label)."""
    {
        "http_async": lambda: steps("http_async", **values),
        "grpc_async": lambda: steps("grpc_async", **values),
        "grpc_stream": lambda: steps("grpc_stream", **values),
        "serial": lambda: steps("serial", **values),
    }[label]()


def _per_run(label: str, values: Mapping[str, object]) -> Finding:
    """What one way of sending (a RUNS label) did over its rounds."""
    return {
        "http_async": Finding("run_http_async", values),
        "grpc_async": Finding("run_grpc_async", values),
        "grpc_stream": Finding("run_grpc_stream", values),
        "serial": Finding("run_serial", values),
    }[label]


def measure(server: LabServer, deployer: Deployer, progress: Progress | None = None) -> Measured:
    """Every way of sending, round after round: where each chunk fell in the server's arrival
    order, each session's verdict, and how long each round took."""
    steps = Steps(progress, sum(r[3] for r in RUNS) + 1)
    arrival, sessions, timing, runs = [], [], [], {}
    for label, transport, in_flight, count in RUNS:
        for i in range(count):
            _announce(steps, label, in_flight=in_flight, round=i + 1, rounds=count)
            result = driver.run(server, _scenario(transport, in_flight, seed=i))
            where = {"run": label, "round": i + 1}
            arrival.append(arrival_order(result).assign(**where))
            sessions.append(result.sessions[["session", "verdict"]].assign(**where))
            timing.append({**where, "wall_s": float(result.wall_s)})
            runs[f"{label}_{i + 1}"] = result
    steps("measuring")
    tables = {"arrival": pd.concat(arrival, ignore_index=True), "sessions": pd.concat(sessions, ignore_index=True),
              "timing": pd.DataFrame(timing, columns=["run", "round", "wall_s"])}
    return Measured(tables=tables, runs=runs)


def _round_row(order: pd.DataFrame, sessions: pd.DataFrame, timing: Any) -> dict[str, Number]:  # timing: a row of tables["timing"]
    """One round of one way of sending: who was overtaken, who broke, and both."""
    swapped = order.groupby("session")["out_of_place"].any()
    verdicts = readings.verdict_tally(sessions)
    broken = set(sessions.loc[sessions["verdict"] != "intact", "session"])
    return {
        "run": timing.run,
        "round": int(timing.round),
        "sessions_reordered": int(swapped.sum()),
        "chunks_out_of_place": int(order["out_of_place"].sum()),
        "sessions_broken": len(broken),
        "reordered_and_broken": len(broken & set(swapped[swapped].index)),
        "intact": verdicts.get("intact", 0),
        "refused": verdicts.get("error", 0),
        "wrong": sum(v for k, v in verdicts.items() if k not in ("intact", "error")),
        "wall_s": round(timing.wall_s, 2),
    }


def _rounds(tables: Tables) -> pd.DataFrame:
    """One row per round, in the order they ran (the rounds figure's table)."""
    arrival, sessions = tables["arrival"], tables["sessions"]

    def of(frame: pd.DataFrame, timing: Any) -> pd.DataFrame:
        return frame[(frame["run"] == timing.run) & (frame["round"] == timing.round)]

    return pd.DataFrame([_round_row(of(arrival, t), of(sessions, t), t) for t in tables["timing"].itertuples()])


def _outcome(http: pd.Series) -> str:
    """From pipelined HTTP's rounds: were chunks overtaken, and did that break the sessions?"""
    if http["sessions_reordered"] == 0:
        return "in_order" if http["sessions_broken"] == 0 else "all_refused"
    return "reordered" if http["reordered_and_broken"] > 0 else "fixed_by_batcher"


def judge(tables: Tables) -> ExerciseJudgement:
    """From the arrival order and the verdicts of every round: does pipelining reorder a session's chunks?"""
    rounds, arrival = _rounds(tables), tables["arrival"]
    by_run = rounds.groupby("run").agg(
        rounds=("round", "count"),
        rounds_reordered=("sessions_reordered", lambda s: int((s > 0).sum())),
        sessions_reordered=("sessions_reordered", "sum"),
        sessions_broken=("sessions_broken", "sum"),
        reordered_and_broken=("reordered_and_broken", "sum"),
    )
    http = by_run.loc["http_async"]
    numbers = {
        "traced": bool(arrival["traced"].all()),
        "http_async_rounds_reordered": int(http["rounds_reordered"]),
        "http_async_rounds": int(http["rounds"]),
        "http_async_sessions_reordered": int(http["sessions_reordered"]),
        "http_async_sessions_broken": int(http["sessions_broken"]),
        "http_async_reordered_sessions_broken": int(http["reordered_and_broken"]),
        "grpc_async_sessions_reordered": int(by_run.loc["grpc_async", "sessions_reordered"]),
        "grpc_stream_sessions_reordered": int(by_run.loc["grpc_stream", "sessions_reordered"]),
        "grpc_stream_sessions_broken": int(by_run.loc["grpc_stream", "sessions_broken"]),
        "serial_sessions_reordered": int(by_run.loc["serial", "sessions_reordered"]),
        "serial_sessions_broken": int(by_run.loc["serial", "sessions_broken"]),
    }
    explanation = [Finding("why_no_numbers"), Finding("why_unary"), Finding("why_overtake"), Finding("why_stream")]
    return ExerciseJudgement(outcome=_outcome(http), numbers=numbers, findings=_findings(by_run, arrival, bool(numbers["traced"])),
                     explanation=explanation, tables={"rounds": rounds, "arrival": arrival})


def _findings(by_run: pd.DataFrame, arrival: pd.DataFrame, traced: bool) -> list[Finding]:
    in_flight = {label: n for label, _, n, _ in RUNS}
    findings = [
        _per_run(label, {
            "in_flight": in_flight[label], "rounds_reordered": int(row.rounds_reordered), "rounds": int(row.rounds),
            "sessions_reordered": int(row.sessions_reordered), "broken": int(row.sessions_broken),
            "reordered_broken": int(row.reordered_and_broken),
        })
        for label, row in by_run.reindex([r[0] for r in RUNS]).iterrows()
    ]
    refusals = arrival[(arrival["run"] == "http_async") & (arrival["error"] != "")]["error"]
    if not refusals.empty:
        findings.append(Finding("refusal", {"message": str(refusals.iloc[0])}))  # Triton's own text
    if not traced:
        findings.append(Finding("untraced"))
    return findings
