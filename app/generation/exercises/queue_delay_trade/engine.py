"""The queue delay's trade: fuller batches for later first tokens.

The same workload twice on static batching (the dynamic batcher), once with max_queue_delay 0 and once
with DELAY_MS. Without a delay the batcher sends whatever is queued the moment the instance is free, so
early batches hold one or two requests; with the delay it waits for more (up to max_batch_size, and sends
at once when that many are queued), so steps are fuller and the first requests' first tokens come later.
"""
from __future__ import annotations

from dataclasses import replace
from typing import TYPE_CHECKING

from app.exercise_kit import Exercise, ExerciseJudgement, Finding, Measured, Steps, Tables
from app.generation import runs
from app.generation.engine import PlannedRequest
from app.generation.setup import GenSetup

if TYPE_CHECKING:
    from app.lab.deployment import Deployer
    from app.lab.progress import Progress
    from app.lab.server import LabServer

DELAY_MS = 100  # the engine's highest: GeneratorSettings.QUEUE_DELAY_US
REQUESTS = 8
GAP_MS = 25
TOKENS = 1
STEP_MS = 20
FULLER = 0.15  # mean step fill this much higher with the delay counts as fuller
SETUP = GenSetup(mode="static", max_batch_size=4, requests=REQUESTS)
DELAYS = {"no_delay": 0, "delay": DELAY_MS}  # code -> max_queue_delay in ms; words: figures.DELAY_LABELS

EXERCISE = Exercise(name="queue_delay_trade", options=("trade", "free", "nothing"), correct="trade")


def plan() -> list[PlannedRequest]:
    """REQUESTS short requests, evenly GAP_MS apart: the same for both delays."""
    return [runs.request(k, k * GAP_MS / 1000, (k, k + 1, 3, 5), TOKENS) for k in range(REQUESTS)]


def measure(server: LabServer, deployer: Deployer, progress: Progress | None = None) -> Measured:
    del deployer  # the generator's deployments load through app/generation/runs.py
    steps = Steps(progress, len(DELAYS) + 1)
    done = []
    for code, delay in DELAYS.items():
        steps("run", delay=delay / 1000, requests=REQUESTS, gap=GAP_MS / 1000)
        done.append(runs.run(server, replace(SETUP, queue_delay_ms=delay), "static", plan(), step_ms=STEP_MS, label=code))
    steps("measuring")
    return Measured(tables=runs.joined(done), models=tuple(r.model for r in done))


def judge(tables: Tables) -> ExerciseJudgement:
    """Mean step fill and median time to first token with and without the delay."""
    fill = tables["steps"].groupby("label")["fill"].mean()
    ttft = tables["requests"].groupby("label")["ttft_ms"].median()
    f0, f1 = float(fill.get("no_delay", float("nan"))), float(fill.get("delay", float("nan")))
    t0, t1 = float(ttft.get("no_delay", float("nan"))), float(ttft.get("delay", float("nan")))
    outcome = ("trade" if t1 > t0 else "free") if f1 >= f0 + FULLER else "nothing"
    numbers = {"fill_no_delay": f0, "fill_delay": f1, "ttft_no_delay_ms": t0, "ttft_delay_ms": t1,
               "delay_ms": float(DELAY_MS)}
    findings = [
        Finding("fill", {"f0": f0, "f1": f1, "delay": DELAY_MS / 1000}),
        Finding("ttft", {"t0": t0, "t1": t1}),
    ]
    explanation = [Finding("why_wait"), Finding("why_full"), Finding("why_choose", {"delay": DELAY_MS / 1000})]
    return ExerciseJudgement(outcome=outcome, numbers=numbers, findings=findings, explanation=explanation, tables=dict(tables))
