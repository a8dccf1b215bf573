"""State keyed by batch row under in-flight batching: the row a request sits in changes as others join
and leave, so a model that keeps its per-request state by row continues another request's state.

The same workload on gen_inflight (state keyed by the CORRID Triton gives each request) and on
gen_inflight_by_row (the same model with state_key row); every token is checked against the pure
rule (app/generation/engine/tokens.py), and STATE_OWNER says whose state each token continued.
"""
from __future__ import annotations

from typing import TYPE_CHECKING

from app.exercise_kit import Exercise, ExerciseJudgement, Finding, Measured, Steps, Tables
from app.generation import runs
from app.generation.setup import GenSetup

if TYPE_CHECKING:
    from app.lab.deployment import Deployer
    from app.lab.progress import Progress
    from app.lab.server import LabServer

SETUP = GenSetup(mode="inflight", max_batch_size=4, requests=8, mean_gap_ms=40, min_tokens=3, max_tokens=12, seed=5)
STEP_MS = 20
MODES = ("inflight", "inflight_by_row")

EXERCISE = Exercise(name="state_by_row", options=("same", "crossed", "both_wrong"), correct="crossed")


def measure(server: LabServer, deployer: Deployer, progress: Progress | None = None) -> Measured:
    del deployer  # the generator's deployments load through app/generation/runs.py
    steps = Steps(progress, len(MODES) + 1)
    planned = runs.plan(SETUP)
    done = []
    for mode in MODES:
        if mode == "inflight":
            steps("run_corrid", requests=SETUP.requests)
        else:
            steps("run_row", requests=SETUP.requests)
        done.append(runs.run(server, SETUP, mode, planned, step_ms=STEP_MS))
    steps("measuring")
    return Measured(tables=runs.joined(done), models=tuple(r.model for r in done))


def judge(tables: Tables) -> ExerciseJudgement:
    """Wrong tokens per deployment, and whose state the by-row model's wrong tokens continued."""
    tokens = tables["tokens"]
    wrong = tokens[tokens["wrong"].astype(bool)]
    by_row = wrong[wrong["mode"] == "inflight_by_row"]
    corrid = wrong[wrong["mode"] == "inflight"]
    foreign = by_row[by_row["owner"] != by_row["tag"]]
    requests = tables["requests"]
    intact = requests[requests["wrong"] == 0].groupby("mode").size()
    total = requests.groupby("mode").size()
    if len(corrid):
        outcome = "both_wrong"
    elif len(by_row):
        outcome = "crossed"
    else:
        outcome = "same"
    numbers = {
        "wrong_tokens_corrid": int(len(corrid)),
        "wrong_tokens_row": int(len(by_row)),
        "wrong_tokens_from_another_request": int(len(foreign)),
        "intact_requests_corrid": int(intact.get("inflight", 0)),
        "intact_requests_row": int(intact.get("inflight_by_row", 0)),
        "requests": int(total.get("inflight", 0)),
    }
    findings = [
        Finding("corrid", {"wrong": numbers["wrong_tokens_corrid"], "intact": numbers["intact_requests_corrid"],
                           "requests": numbers["requests"]}),
        Finding("row", {"wrong": numbers["wrong_tokens_row"], "foreign": numbers["wrong_tokens_from_another_request"],
                        "intact": numbers["intact_requests_row"], "requests": numbers["requests"]}),
    ]
    if len(foreign):
        first = foreign.sort_values(["tick", "row"]).iloc[0]
        findings.append(Finding("first_crossing", {"tag": int(first["tag"]), "owner": int(first["owner"]),
                                                   "step": int(first["step"]) + 1, "row": int(first["row"])}))
    explanation = [Finding("why_rows_move"), Finding("why_corrid"), Finding("why_static_hides")]
    return ExerciseJudgement(outcome=outcome, numbers=numbers, findings=findings, explanation=explanation, tables=dict(tables))
