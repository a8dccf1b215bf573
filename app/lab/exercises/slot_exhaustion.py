"""Slot exhaustion: more open sessions than sequence slots, on a server that is mostly idle."""
from __future__ import annotations

import pandas as pd

from app.lab.deployment.deployments import LabSettings
from app.lab.exercises.common import readings
from app.lab.exercises.common.base import Exercise, ExerciseResult, Finding, Steps
from app.lab.scenario.scenario import Scenario, random_texts
from app.lab.traffic import driver

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


def _outcome(run) -> str:
    verdicts = set(run.sessions["verdict"])
    if "error" in verdicts:
        return "refused"
    if verdicts != {"intact"}:
        return "corrupt"
    waits = readings.backlog_waits(run)
    return "wait" if (waits["wait_ms"] > WAITED_MS).any() else "interleave"


def run(server, deployer, progress=None) -> ExerciseResult:
    steps = Steps(progress, 1 + len(STRATEGIES) * (2 + len(SWEEP)))
    models = {}
    for strategy, settings in STRATEGIES.items():
        steps("deploying", strategy=strategy, instances=settings.instances, slots=settings.slots)
        models[strategy] = deployer.apply(settings, owner=f"ex-slots-{strategy}").model

    runs, sessions, held = {}, [], []
    for strategy, model in models.items():
        steps("sessions", sessions=SESSIONS, strategy=strategy)
        result = driver.run(server, _scenario(model, SESSIONS, CHUNKS, seed=3))
        runs[strategy] = result
        waits = readings.backlog_waits(result).assign(strategy=strategy)
        sessions.append(waits.merge(result.sessions[["session", "verdict"]], on="session"))
        held.append(readings.holding(result).assign(strategy=strategy))

    sweep = []
    for strategy, model in models.items():
        for count in SWEEP:
            steps("sweep", sessions=count, strategy=strategy)
            result = driver.run(server, _scenario(model, count, SWEEP_CHUNKS, seed=10 + count))
            waits = readings.backlog_waits(result)["wait_ms"]
            sweep.append(
                {
                    "strategy": strategy,
                    "sessions": count,
                    "mean_wait_ms": float(waits.mean()),
                    "max_wait_ms": float(waits.max()),
                    "intact": bool(result.all_intact),
                }
            )
    steps("measuring")

    sessions = pd.concat(sessions, ignore_index=True)
    held = pd.concat(held, ignore_index=True)
    direct = runs["direct"]
    capacity = STRATEGIES["direct"].instances * STRATEGIES["direct"].slots
    held_pct = 100 * readings.held_fraction(held[held["strategy"] == "direct"], capacity)
    busy_pct = 100 * readings.busy_fraction(direct, STRATEGIES["direct"].instances)
    d = sessions[sessions["strategy"] == "direct"]
    o = sessions[sessions["strategy"] == "oldest"]
    numbers = {
        "capacity_sequences": capacity,
        "sessions": SESSIONS,
        "direct_sessions_waited": int((d["wait_ms"] > WAITED_MS).sum()),
        "direct_max_wait_ms": float(d["wait_ms"].max()),
        "direct_mean_wait_ms": float(d["wait_ms"].mean()),
        "oldest_sessions_waited": int((o["wait_ms"] > WAITED_MS).sum()),
        "oldest_max_wait_ms": float(o["wait_ms"].max()),
        "oldest_mean_wait_ms": float(o["wait_ms"].mean()),
        "direct_slots_held_pct": held_pct,
        "direct_instance_busy_pct": busy_pct,
        "errors": int((sessions["verdict"] == "error").sum()),
    }
    outcome = _outcome(direct)
    if numbers["errors"] == 0:
        first = Finding("direct_waited", {"waited": numbers["direct_sessions_waited"], "sessions": SESSIONS,
                                          "threshold": WAITED_MS, "longest": numbers["direct_max_wait_ms"]})
    else:
        first = Finding("errors", {"errors": numbers["errors"]})
    findings = [
        first,
        Finding("direct_held", {"held": held_pct / 100, "busy": busy_pct / 100}),
        Finding("oldest_waited", {"waited": numbers["oldest_sessions_waited"], "longest": numbers["oldest_max_wait_ms"]}),
        *[Finding("sweep", {"strategy": r["strategy"], "sessions": r["sessions"], "longest": r["max_wait_ms"]}) for r in sweep],
    ]
    explanation = [
        Finding("slot_until_end"),
        Finding("capacity", {"capacity": capacity}),
        Finding("backlog", {"longest": numbers["direct_max_wait_ms"], "busy": busy_pct / 100}),
        Finding("slots_not_server"),
        Finding("oldest_same"),
        Finding("cure"),
    ]
    steps.finish()
    return ExerciseResult(
        exercise=EXERCISE,
        outcome=outcome,
        numbers=numbers,
        tables={"sessions": sessions, "holding": held, "sweep": pd.DataFrame(sweep)},
        explanation=explanation,
        findings=findings,
        runs=runs,
    )
