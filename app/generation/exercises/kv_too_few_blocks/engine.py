"""Too few KV blocks: the same workload on a paged engine with plenty of cache and with too little.

Eight requests share a 32-token system prompt and arrive about 20 ms apart. With 64 blocks of 16
tokens every one of them fits at once; with 8 blocks (128 tokens) only a few do, and the engine's
scheduler keeps the rest waiting until running requests finish and free their blocks. Each request
also runs alone, one at a time, on the roomy deployment, so every stream can be compared with its
alone run token by token: waiting for memory changes when a request starts, not what it says.
"""
from __future__ import annotations

from typing import TYPE_CHECKING

import pandas as pd

from app.exercise_kit import Exercise, ExerciseJudgement, Finding, Measured, Steps, Tables
from app.generation.exercises import paged_runs
from app.generation.exercises.paged_runs import of, pct
from app.generation.paged.engine import PagedSettings, PagedWorkload, alone, analysis

if TYPE_CHECKING:
    from app.lab.deployment import Deployer
    from app.lab.progress import Progress
    from app.lab.server import LabServer

WORKLOAD = PagedWorkload(requests=8, mean_gap_ms=20, system_tokens=32, seed=1)
SETTINGS = {"plenty": PagedSettings(num_blocks=64), "few": PagedSettings(num_blocks=8)}
# How much later the slowest first tokens must come with few blocks to count as a rise: measured
# on this two-core machine the few-block p95 was 5 to 20 times the roomy one's.
TTFT_RISE = 1.5

EXERCISE = Exercise(name="kv_too_few_blocks", options=("wait", "refused", "changed", "no_effect"), correct="wait")


def measure(server: LabServer, deployer: Deployer, progress: Progress | None = None) -> Measured:
    del deployer  # the paged engine's deployments load through app/generation/paged/engine
    steps = Steps(progress, len(SETTINGS) + 2)
    # The alone runs first: they also warm the roomy deployment up, whose first steps on a fresh load
    # are slow enough to make its first requests wait and so blur the comparison.
    steps("alone", requests=WORKLOAD.requests)
    alone_tokens = alone(server, SETTINGS["plenty"], WORKLOAD.plan())
    parts, models = [], []
    for label, settings in SETTINGS.items():
        if label == "plenty":
            steps("run_plenty", blocks=settings.num_blocks)
        else:
            steps("run_few", blocks=settings.num_blocks)
        ran, part = paged_runs.labelled_run(server, label, settings, WORKLOAD)
        parts.append(part)
        models.append(ran.model)
    tables = paged_runs.joined(parts)
    requests = tables["requests"]
    tables["requests"] = requests.assign(equal_alone=equal_alone(requests, alone_tokens))
    steps("measuring")
    return Measured(tables={"requests": tables["requests"], "steps": tables["steps"]}, models=tuple(models))


def equal_alone(requests: pd.DataFrame, alone_tokens: dict[int, list[int]]) -> list[bool]:
    """Per row: a complete stream whose tokens are its request's alone run's."""
    equal: dict[tuple[str, int], bool] = {}
    for label in requests["label"].unique():
        equal |= {(label, index): same for index, same in analysis.equal_alone(of(requests, label), alone_tokens).items()}
    return [equal.get((row.label, int(row.index)), False) for row in requests.itertuples()]


def summary(requests: pd.DataFrame, steps: pd.DataFrame) -> dict[str, float | int]:
    """One run's figures: first tokens, requests that waited, streams equal to their alone runs."""
    return {
        "requests": len(requests),
        "complete": int((requests["status"] == analysis.COMPLETE).sum()),
        "failed": int((requests["status"] == analysis.FAILED).sum()),
        "equal": int(requests["equal_alone"].astype(bool).sum()),
        "ttft_p50": pct(requests["ttft_ms"], 50),
        "ttft_p95": pct(requests["ttft_ms"], 95),
        "peak_waiting": int(steps["waiting"].max()) if len(steps) else 0,
        "last_start": int(requests["first_step"].max()) if len(requests) else 0,
    }


def judge(tables: Tables) -> ExerciseJudgement:
    """Refused if a request failed; changed if a stream differs from its alone run; wait if requests
    waited for memory and the slowest first tokens came clearly later; otherwise no effect."""
    runs = {label: summary(of(tables["requests"], label), of(tables["steps"], label)) for label in SETTINGS}
    plenty, few = runs["plenty"], runs["few"]
    if plenty["failed"] or few["failed"]:
        outcome = "refused"
    elif plenty["equal"] < plenty["requests"] or few["equal"] < few["requests"]:
        outcome = "changed"
    elif few["peak_waiting"] > 0 and few["ttft_p95"] >= TTFT_RISE * plenty["ttft_p95"]:
        outcome = "wait"
    else:
        outcome = "no_effect"
    numbers: dict[str, float | int] = {}
    for label, figures in runs.items():
        numbers |= {f"peak_waiting_{label}": figures["peak_waiting"], f"ttft_p50_ms_{label}": figures["ttft_p50"],
                    f"ttft_p95_ms_{label}": figures["ttft_p95"], f"equal_alone_{label}": figures["equal"],
                    f"failed_{label}": figures["failed"]}
    findings = [
        Finding("plenty", {"blocks": SETTINGS["plenty"].num_blocks, "waiting": plenty["peak_waiting"],
                           "p50": plenty["ttft_p50"], "p95": plenty["ttft_p95"]}),
        Finding("few", {"blocks": SETTINGS["few"].num_blocks, "waiting": few["peak_waiting"], "p50": few["ttft_p50"],
                        "p95": few["ttft_p95"], "step": few["last_start"]}),
        Finding("equal", {"plenty": plenty["equal"], "few": few["equal"], "all": plenty["requests"],
                          "failed": plenty["failed"] + few["failed"]}),
    ]
    explanation = [Finding("why_blocks"), Finding("why_wait"), Finding("why_equal")]
    return ExerciseJudgement(outcome=outcome, numbers=numbers, findings=findings, explanation=explanation,
                             tables=dict(tables))
