"""A long prompt among running generations, with and without chunked prefill.

Four requests are generating when a 448-token prompt arrives, 200 ms in. The engine's per-step
token budget (max_batch_tokens) decides what one step computes: with a budget of 1024 the whole
prompt is computed in one step, beside the running requests' next tokens; with 16 it is cut into
chunks that fill what the running requests leave of each step. Each step takes 2 ms longer per token
it computes (token_ms), as a larger model's would, so the one big step stalls the running requests:
their time between tokens p99 (pooled over the four) shows it. Prefix sharing is off, so no run
finds the long prompt left in the cache by an earlier one.
"""
from __future__ import annotations

from typing import TYPE_CHECKING

import pandas as pd

from app.exercise_kit import Exercise, ExerciseJudgement, Finding, Measured, Steps, Tables
from app.generation.exercises import paged_runs
from app.generation.exercises.paged_runs import gaps_ms, of, pct
from app.generation.paged.engine import PagedSettings, PagedWorkload

if TYPE_CHECKING:
    from app.lab.deployment import Deployer
    from app.lab.progress import Progress
    from app.lab.server import LabServer

WORKLOAD = PagedWorkload(requests=4, mean_gap_ms=10, system_tokens=0, min_answer_tokens=60, max_answer_tokens=80,
                         long_prompt_tokens=448, long_at_ms=200, seed=3)
LONG = WORKLOAD.requests  # the long prompt's request index (the workload plans it last)
BUDGETS = {"whole": 1024, "chunked": 16}
SETTINGS = {label: PagedSettings(num_blocks=128, max_batch_tokens=budget, prefix_sharing=False, token_ms=2.0)
            for label, budget in BUDGETS.items()}
# How many times the other's p99 one run's must be to count as a stall: measured here, the whole
# prompt's run had 2 to 3 times the chunked run's p99 with token_ms 1, and 5 to 12 times with 2.
STALL = 1.5

EXERCISE = Exercise(name="kv_chunked_prefill", options=("chunking_smooths", "no_difference", "chunking_stalls"),
                    correct="chunking_smooths")


def measure(server: LabServer, deployer: Deployer, progress: Progress | None = None) -> Measured:
    del deployer  # the paged engine's deployments load through app/generation/paged/engine
    steps = Steps(progress, len(SETTINGS) + 1)
    parts, models = [], []
    for label, settings in SETTINGS.items():
        if label == "whole":
            steps("run_whole", budget=settings.max_batch_tokens, long=WORKLOAD.long_prompt_tokens)
        else:
            steps("run_chunked", budget=settings.max_batch_tokens, long=WORKLOAD.long_prompt_tokens)
        ran, part = paged_runs.labelled_run(server, label, settings, WORKLOAD)
        parts.append(part)
        models.append(ran.model)
    steps("measuring")
    tables = paged_runs.joined(parts)
    return Measured(tables={"requests": tables["requests"], "tokens": tables["tokens"]}, models=tuple(models))


def prefill_steps(tokens: pd.DataFrame) -> int:
    """Engine steps the long prompt computed in up to its first token: every step whose STEP_TAGS name
    it (a chunk's step gives it no token, but the running requests' tokens of that step list it)."""
    long = tokens[tokens["index"] == LONG]
    if long.empty:
        return 0
    tag, first = int(long["tag"].iloc[0]), int(long["step"].min())
    steps = tokens[tokens["step"] <= first]
    return int(steps[steps["step_tags"].map(lambda tags: tag in {int(t) for t in tags})]["step"].nunique())


def summary(requests: pd.DataFrame, tokens: pd.DataFrame) -> dict[str, float | int]:
    """One run: the running requests' time between tokens (pooled), the most tokens one request computed
    in one step, and the steps the long prompt took."""
    gaps = gaps_ms(tokens[tokens["index"] != LONG])
    long = requests[requests["index"] == LONG]
    return {"p99": pct(gaps, 99), "p50": pct(gaps, 50),
            "largest": int(tokens["step_tokens"].max()) if len(tokens) else 0, "prefill_steps": prefill_steps(tokens),
            "long_ttft": float(long["ttft_ms"].iloc[0]) if len(long) else float("nan")}


def judge(tables: Tables) -> ExerciseJudgement:
    """chunking_smooths if the whole prompt's run has a p99 at least STALL times the chunked run's;
    chunking_stalls if the other way round; otherwise no_difference."""
    runs = {label: summary(of(tables["requests"], label), of(tables["tokens"], label)) for label in SETTINGS}
    whole, chunked = runs["whole"], runs["chunked"]
    if whole["p99"] >= STALL * chunked["p99"]:
        outcome = "chunking_smooths"
    elif chunked["p99"] >= STALL * whole["p99"]:
        outcome = "chunking_stalls"
    else:
        outcome = "no_difference"
    numbers: dict[str, float | int] = {}
    for label, figures in runs.items():
        numbers |= {f"tbt_p99_ms_{label}": figures["p99"], f"tbt_p50_ms_{label}": figures["p50"],
                    f"largest_step_tokens_{label}": figures["largest"], f"long_prefill_steps_{label}": figures["prefill_steps"],
                    f"long_ttft_ms_{label}": figures["long_ttft"]}
    findings = [
        Finding("whole", {"budget": BUDGETS["whole"], "steps": whole["prefill_steps"], "largest": whole["largest"],
                          "p50": whole["p50"], "p99": whole["p99"], "ttft": whole["long_ttft"]}),
        Finding("chunked", {"budget": BUDGETS["chunked"], "steps": chunked["prefill_steps"], "largest": chunked["largest"],
                            "p50": chunked["p50"], "p99": chunked["p99"], "ttft": chunked["long_ttft"]}),
    ]
    explanation = [Finding("why_step"), Finding("why_chunks"), Finding("why_cost")]
    return ExerciseJudgement(outcome=outcome, numbers=numbers, findings=findings, explanation=explanation,
                             tables=dict(tables))
