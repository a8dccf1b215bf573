"""Head-of-line blocking: a static batch holds the requests behind a long one until it ends.

One long request arrives first and starts generating; short ones arrive a moment later. Under static
batching the instance is busy with the long request's execution until its last token, so the short
ones wait in the queue for all of it (Triton hands an instance its next batch only when its execute
returns). Under in-flight batching (iterative sequences) the long request is rescheduled after every
step, so the short ones join it at the next step and finish long before it.
"""
from __future__ import annotations

from typing import TYPE_CHECKING

from app.exercise_kit import Exercise, ExerciseJudgement, Finding, Measured, Steps, Tables
from app.generation import runs
from app.generation.engine import PlannedRequest
from app.generation.setup import GenSetup

if TYPE_CHECKING:
    from app.lab.deployment import Deployer
    from app.lab.progress import Progress
    from app.lab.server import LabServer

LONG_TOKENS = 40
SHORT_TOKENS = 2
SHORT = 3  # short requests, each SHORT_GAP_MS after the one before, the first SHORT_GAP_MS after the long one
SHORT_GAP_MS = 30
STEP_MS = 20
HOSTAGE_RATIO = 3.0  # static's short first tokens this many times later than in flight's: held behind the long one
SETUP = GenSetup(max_batch_size=4, queue_delay_ms=5, requests=1 + SHORT)  # gen_static's and gen_inflight's settings

EXERCISE = Exercise(name="head_of_line", options=("hostage", "same", "static_faster"), correct="hostage")


def plan() -> list[PlannedRequest]:
    """The long request at 0, then the short ones: the same for both modes."""
    long = runs.request(0, 0.0, (1, 2, 3, 4), LONG_TOKENS)
    shorts = [runs.request(1 + k, (k + 1) * SHORT_GAP_MS / 1000, (5 + k, 6, 7, 8), SHORT_TOKENS) for k in range(SHORT)]
    return [long, *shorts]


def measure(server: LabServer, deployer: Deployer, progress: Progress | None = None) -> Measured:
    del deployer  # the generator's deployments load through app/generation/runs.py
    steps = Steps(progress, 3)
    done = {}
    for mode in ("static", "inflight"):
        values = dict(long=LONG_TOKENS, short=SHORT, tokens=SHORT_TOKENS)
        if mode == "static":
            steps("run_static", **values)
        else:
            steps("run_inflight", **values)
        done[mode] = runs.run(server, SETUP, mode, plan(), step_ms=STEP_MS)
    steps("measuring")
    return Measured(tables=runs.joined(done.values()), models=tuple(r.model for r in done.values()))


def judge(tables: Tables) -> ExerciseJudgement:
    """The short requests' first tokens under each mode: held behind the long one, or not."""
    requests = tables["requests"]
    short = requests[requests["tokens"] <= SHORT_TOKENS]
    ttft = short.groupby("mode")["ttft_ms"].median()
    e2e = requests.groupby(["mode", requests["tokens"] > SHORT_TOKENS])["e2e_ms"].median()
    static, inflight = float(ttft.get("static", float("nan"))), float(ttft.get("inflight", float("nan")))
    if static > HOSTAGE_RATIO * inflight:
        outcome = "hostage"
    elif inflight > HOSTAGE_RATIO * static:
        outcome = "static_faster"
    else:
        outcome = "same"
    long_static = float(e2e.get(("static", True), float("nan")))
    numbers = {
        "short_ttft_static_ms": static,
        "short_ttft_inflight_ms": inflight,
        "long_e2e_static_ms": long_static,
        "long_e2e_inflight_ms": float(e2e.get(("inflight", True), float("nan"))),
        "short_e2e_static_ms": float(e2e.get(("static", False), float("nan"))),
        "short_e2e_inflight_ms": float(e2e.get(("inflight", False), float("nan"))),
    }
    findings = [
        Finding("static_waited", {"short": len(short[short["mode"] == "static"]), "ttft": static, "long": long_static}),
        Finding("inflight_joined", {"ttft": inflight}),
    ]
    explanation = [
        Finding("why_instance_busy"),
        Finding("why_reschedule"),
        Finding("why_field", {"ratio": static / inflight if inflight > 0 else float("nan")}),
    ]
    return ExerciseJudgement(outcome=outcome, numbers=numbers, findings=findings, explanation=explanation,
                             tables={"tokens": tables["tokens"], "requests": requests, "steps": tables["steps"]})
