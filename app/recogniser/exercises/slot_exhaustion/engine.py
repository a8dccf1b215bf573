"""Slot exhaustion: more open sessions than sequence slots, on a server that is mostly idle."""
from __future__ import annotations

from typing import TYPE_CHECKING

import pandas as pd

from app.exercise_kit import Exercise, ExerciseJudgement, Finding, Measured, Steps, Tables, readings
from app.lab.deployment import LabSettings
from app.lab.scenario.scenario import Scenario, random_texts
from app.recogniser.engine import driver

if TYPE_CHECKING:
    from app.lab.deployment import Deployer
    from app.lab.progress import Progress
    from app.lab.records import RunResult
    from app.lab.server import LabServer

SESSIONS = 5
CHUNKS = 8
THINK_MS = 40.0
SWEEP = (2, 4, 6)
SWEEP_CHUNKS = 6
WAITED_MS = 100.0  # a first chunk queued this long waited for a slot, not for the batcher's delay
STRATEGIES = {
    "direct": LabSettings(scheduler="direct", instances=1, slots=2, state_key="slot"),
    # Oldest needs state keyed by correlation ID; its capacity is max_candidate_sequences (= slots).
    "oldest": LabSettings(scheduler="oldest", instances=1, slots=2, state_key="corrid"),
}

EXERCISE = Exercise(
    name="slot_exhaustion",
    options=("interleave", "wait", "refused", "corrupt"),
    correct="wait",
)


def _scenario(model: str, sessions: int, chunks: int, seed: int) -> Scenario:
    return Scenario(model=model, texts=random_texts(sessions, chunks, seed), think_ms=THINK_MS, jitter_ms=5.0, seed=seed)


EXECUTIONS = ["instance", "exec_start", "exec_end", "error"]  # what busy_fraction reads; exec_* NaN when untraced


def _sessions(run: RunResult, **labels: object) -> pd.DataFrame:
    """Per session of one run: its first chunk's backlog wait and its verdict, labelled."""
    return readings.backlog_waits(run).assign(**labels).merge(run.sessions[["session", "verdict"]], on="session")


def measure(server: LabServer, deployer: Deployer, progress: Progress | None = None) -> Measured:
    """Five sessions on each strategy's two slots, then a sweep of 2, 4 and 6 sessions."""
    steps = Steps(progress, 1 + len(STRATEGIES) * (2 + len(SWEEP)))
    models = {}
    for strategy, settings in STRATEGIES.items():
        steps("deploying", strategy=strategy, instances=settings.instances, slots=settings.slots)
        models[strategy] = deployer.apply(settings).model

    runs, sessions, held, executions = {}, [], [], []
    for strategy, model in models.items():
        steps("sessions", sessions=SESSIONS, strategy=strategy)
        runs[strategy] = result = driver.run(server, _scenario(model, SESSIONS, CHUNKS, seed=3))
        sessions.append(_sessions(result, strategy=strategy))
        held.append(readings.holding(result).assign(strategy=strategy))
        executions.append(result.requests.reindex(columns=EXECUTIONS).assign(strategy=strategy))

    sweep = []
    for strategy, model in models.items():
        for count in SWEEP:
            steps("sweep", sessions=count, strategy=strategy)
            result = driver.run(server, _scenario(model, count, SWEEP_CHUNKS, seed=10 + count))
            sweep.append(_sessions(result, strategy=strategy, sessions=count))
    steps("measuring")
    tables = {"sessions": sessions, "holding": held, "executions": executions, "sweep_sessions": sweep}
    return Measured(tables={name: pd.concat(parts, ignore_index=True) for name, parts in tables.items()}, runs=runs)


def _outcome(direct: pd.DataFrame) -> str:
    verdicts = set(direct["verdict"])
    if "error" in verdicts:
        return "refused"
    if verdicts != {"intact"}:
        return "corrupt"
    return "wait" if (direct["wait_ms"] > WAITED_MS).any() else "interleave"


def _sweep(rows: pd.DataFrame) -> pd.DataFrame:
    """Per strategy and number of open sessions: the mean and longest backlog wait, and whether all stayed intact."""
    return pd.DataFrame(
        [
            {"strategy": strategy, "sessions": int(count), "mean_wait_ms": float(mine["wait_ms"].mean()),
             "max_wait_ms": float(mine["wait_ms"].max()), "intact": bool((mine["verdict"] == "intact").all())}
            for (strategy, count), mine in rows.groupby(["strategy", "sessions"], sort=False)
        ],
        columns=["strategy", "sessions", "mean_wait_ms", "max_wait_ms", "intact"],
    )


def _numbers(sessions: pd.DataFrame, held: pd.DataFrame, executions: pd.DataFrame) -> dict[str, float]:
    direct, oldest = (sessions[sessions["strategy"] == s] for s in STRATEGIES)
    settings = STRATEGIES["direct"]
    capacity = settings.instances * settings.slots
    return {
        "capacity_sequences": capacity,
        "sessions": len(direct),
        "direct_sessions_waited": int((direct["wait_ms"] > WAITED_MS).sum()),
        "direct_max_wait_ms": float(direct["wait_ms"].max()),
        "direct_mean_wait_ms": float(direct["wait_ms"].mean()),
        "oldest_sessions_waited": int((oldest["wait_ms"] > WAITED_MS).sum()),
        "oldest_max_wait_ms": float(oldest["wait_ms"].max()),
        "oldest_mean_wait_ms": float(oldest["wait_ms"].mean()),
        "direct_slots_held_pct": 100 * readings.held_fraction(held[held["strategy"] == "direct"], capacity),
        "direct_instance_busy_pct": 100 * readings.busy_fraction(executions[executions["strategy"] == "direct"], settings.instances),
        "errors": int((sessions["verdict"] == "error").sum()),
    }


def judge(tables: Tables) -> ExerciseJudgement:
    """From each session's backlog wait and verdict: did the sessions beyond capacity wait, fail or mix?"""
    sessions, held = tables["sessions"], tables["holding"]
    n = _numbers(sessions, held, tables["executions"])
    sweep = _sweep(tables["sweep_sessions"])
    held_share, busy_share = n["direct_slots_held_pct"] / 100, n["direct_instance_busy_pct"] / 100
    if n["errors"] == 0:
        first = Finding("direct_waited", {"waited": n["direct_sessions_waited"], "sessions": n["sessions"],
                                          "threshold": WAITED_MS, "longest": n["direct_max_wait_ms"]})
    else:
        first = Finding("errors", {"errors": n["errors"]})
    findings = [
        first,
        Finding("direct_held", {"held": held_share, "busy": busy_share}),
        Finding("oldest_waited", {"waited": n["oldest_sessions_waited"], "longest": n["oldest_max_wait_ms"]}),
        *[Finding("sweep", {"strategy": r["strategy"], "sessions": r["sessions"], "longest": r["max_wait_ms"]})
          for r in sweep.to_dict("records")],
    ]
    explanation = [
        Finding("slot_until_end"),
        Finding("capacity", {"capacity": n["capacity_sequences"]}),
        Finding("backlog", {"longest": n["direct_max_wait_ms"], "busy": busy_share}),
        Finding("slots_not_server"),
        Finding("oldest_same"),
        Finding("cure"),
    ]
    return ExerciseJudgement(outcome=_outcome(sessions[sessions["strategy"] == "direct"]), numbers=n, findings=findings,
                     explanation=explanation, tables={"sessions": sessions, "holding": held, "sweep": sweep})
