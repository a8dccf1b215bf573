"""A request cancelled mid-generation: who frees its state?

A long request is cancelled by its client after a few tokens while two short ones run beside it. Triton marks
the request cancelled and, in flight, drops it when it comes back to the queue; the state the model keeps for it
(the lab's stand-in for a KV cache) is the model's own business. The same traffic goes to a deployment that asks
request.is_cancelled() and frees the cell (honour_cancel true; it also sweeps cells no step touched for a while,
for requests Triton dropped before the model could ask) and to one that never asks (honour_cancel false). The
model's gauge gen_state_cells, read before the run and after it has settled, says which cells stayed.
"""
from __future__ import annotations

import time
from typing import TYPE_CHECKING

import pandas as pd

from app.exercise_kit import Exercise, ExerciseJudgement, Finding, Measured, Steps, Tables
from app.generation import runs
from app.generation.engine import PlannedRequest, state_cells
from app.generation.setup import GenSetup
from app.lab.traffic import run_queue

if TYPE_CHECKING:
    from app.lab.deployment import Deployer
    from app.lab.progress import Progress
    from app.lab.server import LabServer

LONG_TOKENS = 40
CANCEL_AFTER = 3  # tokens the long request streams before its client cancels it
SHORT_TOKENS = 4
STEP_MS = 20
SETTLE_S = 8.0  # after the run, how long the gauge may take to fall: past the model's sweep (5 s, checked every 1.25 s)
MARGIN_S = 1.5  # the deployment that never asks is watched this much longer than the other took to fall back
SETUP = GenSetup(mode="inflight", max_batch_size=4, queue_delay_ms=0, requests=3)
DEPLOYMENTS = {"honour": True, "ignore": False}  # code -> honour_cancel; words: figures.DEPLOYMENT_LABELS

EXERCISE = Exercise(name="cancelled_generation", options=("triton_frees", "model_must", "neither"), correct="model_must")


def plan() -> list[PlannedRequest]:
    """The long request at 0 (cancelled after CANCEL_AFTER tokens), two short ones 10 ms apart after it."""
    return [runs.request(0, 0.0, (9, 8, 7, 6), LONG_TOKENS),
            *[runs.request(1 + k, 0.01 * (k + 1), (k, 2, 4, 6), SHORT_TOKENS) for k in range(2)]]


def measure(server: LabServer, deployer: Deployer, progress: Progress | None = None) -> Measured:
    del deployer  # the generator's deployments load through app/generation/runs.py
    steps = Steps(progress, len(DEPLOYMENTS) + 1)
    rows, done = [], []
    limit = SETTLE_S
    for code, honour in DEPLOYMENTS.items():
        if honour:
            steps("run_honour", tokens=CANCEL_AFTER, long=LONG_TOKENS)
        else:
            steps("run_ignore", tokens=CANCEL_AFTER, long=LONG_TOKENS)
        model = runs.deploy(server, SETUP, "inflight", STEP_MS, honour)
        with run_queue.hold(server, model):  # the gauge's readings and the run are one measurement
            before = state_cells(server.metrics_url, model)
            ran = runs.run(server, SETUP, "inflight", plan(), step_ms=STEP_MS, label=code, honour_cancel=honour,
                           cancel_after={0: CANCEL_AFTER}, hold=False)
            after, waited = _settled(server.metrics_url, model, before, limit)
        limit = min(SETTLE_S, waited + MARGIN_S)  # honour runs first: how long freeing took there
        long = ran.requests[ran.requests["tag"] == 1].iloc[0]
        rows.append({"deployment": code, "cells_before": before, "cells_after": after, "waited_s": waited,
                     "long_status": str(long["status"]), "long_tokens": int(long["tokens"]),
                     "short_complete": int((ran.requests["status"][ran.requests["tag"] > 1] == "complete").sum())})
        done.append(ran)
    steps("measuring")
    return Measured(tables={"cells": pd.DataFrame(rows), **runs.joined(done)}, models=tuple(r.model for r in done))


def _settled(metrics_url: str, model: str, before: int | None, limit_s: float) -> tuple[int | None, float]:
    """The gauge once it is back where it started, or after limit_s if it never gets there; and how long that took."""
    start = time.monotonic()
    while True:
        now = state_cells(metrics_url, model)
        waited = time.monotonic() - start
        if now is None or (before is not None and now <= before) or waited >= limit_s:
            return now, waited
        time.sleep(0.1)


def judge(tables: Tables) -> ExerciseJudgement:
    """Per deployment: did the cancelled request's cell stay after the run?"""
    cells = tables["cells"].set_index("deployment")
    left = {code: int(row.cells_after) - int(row.cells_before) for code, row in cells.iterrows()}
    honour, ignore = left.get("honour", 0), left.get("ignore", 0)
    if honour <= 0 and ignore <= 0:
        outcome = "triton_frees"
    elif honour <= 0 < ignore:
        outcome = "model_must"
    else:
        outcome = "neither"
    numbers = {
        "cells_left_honour": honour,
        "cells_left_ignore": ignore,
        "cancelled_after_tokens_honour": int(cells.loc["honour", "long_tokens"]),
        "cancelled_after_tokens_ignore": int(cells.loc["ignore", "long_tokens"]),
        "short_requests_complete": int(cells["short_complete"].sum()),
        "honour_back_after_s": float(cells.loc["honour", "waited_s"]),  # at once, or after the sweep (5 s)
    }
    findings = [
        Finding("honour", {"tokens": numbers["cancelled_after_tokens_honour"], "left": honour}),
        Finding("ignore", {"tokens": numbers["cancelled_after_tokens_ignore"], "left": ignore}),
        Finding("shorts", {"complete": numbers["short_requests_complete"], "all": 2 * len(cells)}),
    ]
    explanation = [Finding("why_triton"), Finding("why_model"), Finding("why_sweep")]
    return ExerciseJudgement(outcome=outcome, numbers=numbers, findings=findings, explanation=explanation, tables=dict(tables))
