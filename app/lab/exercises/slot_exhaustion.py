"""Slot exhaustion: more open sessions than sequence slots, on a server that is mostly idle."""
from __future__ import annotations

import pandas as pd
import plotly.express as px
import plotly.graph_objects as go

from app.lab import driver
from app.lab.deployments import LabSettings
from app.lab.exercises import measure, plots
from app.lab.exercises.base import Exercise, ExerciseResult, Option, Steps
from app.lab.scenario import Scenario, random_texts

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
    title="Slot exhaustion: five talkers, two slots",
    scenario=(
        f"A recogniser runs with the sequence batcher, direct strategy, on 1 instance with 2 batch "
        f"slots. {SESSIONS} clients open a stream at the same moment and send a 20 ms chunk every "
        f"{THINK_MS:.0f} ms, waiting for each reply. Computing a chunk takes about a millisecond, so the "
        "server spends most of its time doing nothing."
    ),
    question="What happens to the clients beyond the first two?",
    options=(
        Option("interleave", "They are served at once: the idle server interleaves all five streams."),
        Option("wait", "They wait, without any error, until an earlier stream ends and frees its slot."),
        Option("refused", "Triton refuses them with an error: no slot is free."),
        Option("corrupt", "They share the two slots and read each other's state."),
    ),
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
    waits = measure.backlog_waits(run)
    return "wait" if (waits["wait_ms"] > WAITED_MS).any() else "interleave"


def run(server, deployer, progress=None) -> ExerciseResult:
    steps = Steps(progress, 1 + len(STRATEGIES) * (2 + len(SWEEP)))
    models = {}
    for strategy, settings in STRATEGIES.items():
        steps(f"Deploying {strategy}: 1 instance x 2 slots")
        models[strategy] = deployer.apply(settings, owner=f"ex-slots-{strategy}").model

    runs, sessions, held = {}, [], []
    for strategy, model in models.items():
        steps(f"{SESSIONS} sessions on {strategy}")
        result = driver.run(server, _scenario(model, SESSIONS, CHUNKS, seed=3))
        runs[strategy] = result
        waits = measure.backlog_waits(result).assign(strategy=strategy)
        sessions.append(waits.merge(result.sessions[["session", "verdict"]], on="session"))
        held.append(measure.holding(result).assign(strategy=strategy))

    sweep = []
    for strategy, model in models.items():
        for count in SWEEP:
            steps(f"Sweep: {count} sessions on {strategy}")
            result = driver.run(server, _scenario(model, count, SWEEP_CHUNKS, seed=10 + count))
            waits = measure.backlog_waits(result)["wait_ms"]
            sweep.append(
                {
                    "strategy": strategy,
                    "sessions": count,
                    "mean_wait_ms": float(waits.mean()),
                    "max_wait_ms": float(waits.max()),
                    "intact": bool(result.all_intact),
                }
            )
    steps("Measuring")

    sessions = pd.concat(sessions, ignore_index=True)
    held = pd.concat(held, ignore_index=True)
    direct = runs["direct"]
    capacity = STRATEGIES["direct"].instances * STRATEGIES["direct"].slots
    held_pct = 100 * measure.held_fraction(held[held["strategy"] == "direct"], capacity)
    busy_pct = 100 * measure.busy_fraction(direct, STRATEGIES["direct"].instances)
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
    findings = [
        f"direct: {numbers['direct_sessions_waited']} of {SESSIONS} sessions waited over {WAITED_MS:.0f} ms "
        f"for a slot (longest {numbers['direct_max_wait_ms']:.0f} ms); none got an error."
        if numbers["errors"] == 0
        else f"{numbers['errors']} sessions got an error.",
        f"direct: slots were held {held_pct:.0f}% of the time while the instance computed only {busy_pct:.0f}% of it.",
        f"oldest (same capacity): {numbers['oldest_sessions_waited']} sessions waited, longest "
        f"{numbers['oldest_max_wait_ms']:.0f} ms.",
        "sweep, longest wait: "
        + "; ".join(f"{r['strategy']} {r['sessions']} sessions {r['max_wait_ms']:.0f} ms" for r in sweep),
    ]
    explanation = (
        "A sequence owns a slot from its START to its END, whether or not it is sending. Capacity is "
        f"instances x slots = {capacity} sequences (for oldest, instances x max_candidate_sequences). "
        "A new sequence that finds no free slot waits in the backlog, without limit and "
        "without an error, and Triton counts that wait as queue time of its first request: here the "
        f"longest was {numbers['direct_max_wait_ms']:.0f} ms, about one whole earlier stream, while the "
        f"instance was busy only {busy_pct:.0f}% of the time. The server is not overloaded; its slots are. "
        "Oldest does not add capacity either: it batches differently, but a sequence still needs one of its "
        "candidate places until END. The cure is more slots (max_batch_size / max_candidate_sequences) or "
        "instances, clients that send END promptly, and an idle timeout for the ones that never do; the "
        "sweep shows the wait growing once sessions exceed capacity."
    )
    steps.finish()
    return ExerciseResult(
        EXERCISE,
        outcome,
        numbers,
        {"sessions": sessions, "holding": held, "sweep": pd.DataFrame(sweep)},
        explanation,
        findings,
        runs,
    )


def figures(result: ExerciseResult) -> list[tuple[str, go.Figure]]:
    """The exercise's charts, each drawn from one of the result's tables."""
    s = result.tables["sessions"].assign(who=lambda f: plots.sessions(f))
    waits = px.bar(s, x="who", y="wait_ms", color="strategy", barmode="group",
                   labels={"who": "", "wait_ms": "backlog wait of first chunk (ms)"},
                   title="How long each session waited for a slot")
    h = result.tables["holding"].assign(who=lambda f: plots.sessions(f))
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
    return [("Backlog wait per session", plots.layout(waits)), ("Slot timeline", plots.layout(timeline, 380)),
            ("Sweep", plots.layout(sweep))]
