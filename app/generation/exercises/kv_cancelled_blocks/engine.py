"""A cancelled generation's KV blocks: back to the pool, or held?

Four requests generate side by side; the client cancels the first after 4 tokens (the driver stops
its gRPC stream with cancel_requests=True). The engine model asks Triton whether each of its requests
was cancelled and, for one that was, cancels it in the engine, whose scheduler drops it and frees
its blocks. Read from the engine's own step records: the blocks in use that no neighbour held, at
the last step all three neighbours ran in after the cancel; then the model's gauge kv_blocks_used
once the run has settled, and the neighbours' streams against their alone runs. Prefix sharing is
off, so a freed block is simply free (not kept in the cache for its content).
"""
from __future__ import annotations

from typing import TYPE_CHECKING

import pandas as pd

from app.exercise_kit import Exercise, ExerciseJudgement, Finding, Measured, Steps, Tables
from app.generation.exercises import paged_runs
from app.generation.paged.engine import PagedSettings, PagedWorkload, alone, analysis, gauges

if TYPE_CHECKING:
    from app.lab.deployment import Deployer
    from app.lab.progress import Progress
    from app.lab.server import LabServer

# Seed 5: with seed 4 one neighbour's second token differed from its alone run with or without the
# cancel (a near tie between two candidates, which batching's float arithmetic can tip); seeds 5 to 9
# gave every stream equal to its alone run, cancel or not, three runs each.
WORKLOAD = PagedWorkload(requests=4, mean_gap_ms=10, system_tokens=0, min_answer_tokens=40, max_answer_tokens=48,
                         seed=5)
CANCELLED = 0  # the request index the client cancels
CANCEL_AFTER = 4  # tokens it streams first
SETTINGS = PagedSettings(num_blocks=64, prefix_sharing=False)

EXERCISE = Exercise(name="kv_cancelled_blocks", options=("freed", "held", "leaked", "hurt"), correct="freed")


def measure(server: LabServer, deployer: Deployer, progress: Progress | None = None) -> Measured:
    del deployer  # the paged engine's deployments load through app/generation/paged/engine
    steps = Steps(progress, 3)
    steps("run", tokens=CANCEL_AFTER)
    ran, tables = paged_runs.labelled_run(server, "cancel", SETTINGS, WORKLOAD, cancel_after={CANCELLED: CANCEL_AFTER})
    after = int(ran.gauges_after.get("kv_blocks_used", -1))  # -1: the gauge did not answer
    steps("alone", requests=WORKLOAD.requests - 1)
    plans = [p for p in WORKLOAD.plan() if p.index != CANCELLED]
    alone_tokens = alone(server, SETTINGS, plans)
    requests = tables["requests"]
    equal = analysis.equal_alone(requests, alone_tokens)
    tables["requests"] = requests.assign(equal_alone=[equal.get(int(i), False) for i in requests["index"]])
    steps("measuring")
    # The gauge once more, past the alone runs: still nothing held.
    later = int(gauges(server.metrics_url, ran.model).get("kv_blocks_used", -1))
    gauge = pd.DataFrame([{"blocks_used_after": after, "blocks_used_later": later, "num_blocks": SETTINGS.num_blocks}])
    return Measured(tables={"requests": tables["requests"], "tokens": tables["tokens"], "gauge": gauge},
                    models=(ran.model,))


def held_by_others(tokens: pd.DataFrame, total: int) -> pd.DataFrame:
    """Per engine step after the cancelled request's last token: blocks in use (total - free - cached)
    and those no neighbour held (what the cancelled request still holds: nobody else runs)."""
    cancelled = tokens[tokens["index"] == CANCELLED]
    last = int(cancelled["step"].max()) if len(cancelled) else -1
    rows = []
    for step, mine in tokens[(tokens["step"] > last) & (tokens["index"] != CANCELLED)].groupby("step"):
        in_use = total - int(mine["free_blocks"].min()) - int(mine["cached_blocks"].max())
        neighbours = {int(b) for blocks in mine["blocks"] for b in blocks}
        rows.append({"step": int(step), "neighbours": int(mine["index"].nunique()), "in_use": in_use,
                     "neighbour_blocks": len(neighbours), "others": in_use - len(neighbours)})
    return pd.DataFrame(rows, columns=["step", "neighbours", "in_use", "neighbour_blocks", "others"])


def judge(tables: Tables) -> ExerciseJudgement:
    """hurt if a neighbour did not complete equal to its alone run; leaked if blocks stayed in use after
    the run; held if the cancelled request still held blocks while all its neighbours ran; else freed."""
    requests, gauge = tables["requests"], tables["gauge"].iloc[0]
    cancelled = requests[requests["index"] == CANCELLED].iloc[0]
    neighbours = requests[requests["index"] != CANCELLED]
    after = int(gauge["blocks_used_after"])
    later = held_by_others(tables["tokens"], int(gauge["num_blocks"]))
    full = later[later["neighbours"] == len(neighbours)]
    still = int(full["others"].iloc[-1]) if len(full) else 0
    equal = int(neighbours["equal_alone"].astype(bool).sum())
    if equal < len(neighbours):
        outcome = "hurt"
    elif after != 0:  # held after the run, or not read at all: not proof of freeing
        outcome = "leaked"
    elif still > 0:
        outcome = "held"
    else:
        outcome = "freed"
    numbers: dict[str, int | str] = {
        "cancelled_tokens": int(cancelled["tokens"]), "cancelled_status": str(cancelled["status"]),
        "cancelled_peak_blocks": int(cancelled["peak_blocks"]), "held_while_neighbours_ran": still,
        "blocks_used_after": after, "neighbours_equal_alone": equal,
    }
    findings = [
        Finding("cancelled", {"tokens": int(cancelled["tokens"]), "blocks": int(cancelled["peak_blocks"])}),
        Finding("during", {"held": still, "steps": len(full)}),
        Finding("after", {"used": after}),
        Finding("neighbours", {"equal": equal, "all": len(neighbours)}),
    ]
    explanation = [Finding("why_cancel"), Finding("why_free"), Finding("why_neighbours")]
    return ExerciseJudgement(outcome=outcome, numbers=numbers, findings=findings, explanation=explanation,
                             tables={**tables, "held": later})
