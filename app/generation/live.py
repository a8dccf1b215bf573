"""Lesson 8's live element, its runs and its words (no Streamlit: app/generation/live_view.py draws it).

One small seeded workload goes to `gen_static` (the dynamic batcher, a batch generated to its end in one
execution) and then to `gen_inflight` (iterative sequences, one step per execution), the same planned
requests both times, through app/generation/runs.py and the engine. The learner predicts two things first:
which one gives the median request its first token sooner, and which makes more tokens per second; `seen`
reads both answers off the runs.
"""
from __future__ import annotations

from dataclasses import replace
from typing import TYPE_CHECKING

import pandas as pd

from app.generation import runs
from app.generation.setup import GenSetup
from app.i18n import N_, Words

if TYPE_CHECKING:
    from app.lab.server import LabServer

# Six requests of 2 to 16 tokens arriving about 40 ms apart: later ones arrive while earlier ones generate.
# The queue delay is each shipped deployment's own (gen_static 5 ms, gen_inflight 0), so the runs use them.
WORKLOAD = GenSetup(requests=6, mean_gap_ms=40, min_tokens=2, max_tokens=16, prompt_seed=1, seed=7)
SETUPS = {"static": replace(WORKLOAD, queue_delay_ms=5), "inflight": replace(WORKLOAD, queue_delay_ms=0)}
MODELS = {"static": "gen_static", "inflight": "gen_inflight"}
SAME = runs.SAME  # within this ratio two numbers count as about the same

QUESTIONS = {
    "ttft": N_("Requests keep arriving while earlier ones generate. Which batching gives the median request its first "
               "token sooner?"),
    "throughput": N_("Which batching makes more tokens per second over the whole workload?"),
}
ANSWERS = {
    "static": N_("Static batching"),
    "inflight": N_("In-flight batching"),
    "same": N_("About the same"),
}
INTRO = N_(
    "The same six requests, planned once with a fixed seed, go first to **`gen_static`** and then to "
    "**`gen_inflight`**. Each request asks for 2 to 16 tokens; they arrive about 40 ms apart, so most arrive while "
    "others are still generating. Predict first, then run both."
)
HELD = N_("You predicted {said:text}, and the server agreed: {seen:text}.")
NOT_HELD = N_("You predicted {said:text}; the server showed {seen:text}.")
METRICS = {
    "ttft_p50_ms": N_("first token, median"),
    "e2e_p50_ms": N_("end to end, median"),
    "tokens_per_s": N_("tokens/s"),
    "mean_fill": N_("mean step fill"),
}
METRICS_HELP = N_("{executions:count} executions, {passes:count} model steps; mean fill is the rows each step used "
                  "divided by max_batch_size (4)")
STREAM_COLUMNS = {
    "request": N_("request"),
    "arrival_ms": N_("arrives (ms)"),
    "static": N_("tokens under static batching"),
    "inflight": N_("tokens in flight"),
    "same": N_("same tokens"),
}
STREAMS_CAPTION = N_("Token ids (0 to 63: the lab's generator has no words of its own). Each request's tokens depend on "
                     "its prompt alone, so both ways must give the same stream; only the timing differs.")


def run_both(server: LabServer, hold: bool = True) -> list[runs.GenRun]:
    """The workload on gen_static, then on gen_inflight: the same planned requests, fresh tags each run."""
    planned = runs.plan(WORKLOAD)
    return [runs.run(server, SETUPS[mode], mode, planned, hold=hold) for mode in ("static", "inflight")]


def compare(static: float, inflight: float, higher_wins: bool) -> str:
    """Which mode did better on one number ("same" within SAME of each other)."""
    if not higher_wins:
        static, inflight = -static, -inflight
    low, high = sorted((abs(static), abs(inflight)))
    if high <= low * SAME:
        return "same"
    return "static" if static > inflight else "inflight"


def seen(done: list[runs.GenRun]) -> dict[str, str]:
    """What the server did, per question: the median first token (lower wins) and tokens/s (higher wins)."""
    by_mode = {r.mode: r.numbers for r in done}
    return {
        "ttft": compare(float(by_mode["static"]["ttft_p50_ms"]), float(by_mode["inflight"]["ttft_p50_ms"]), higher_wins=False),
        "throughput": compare(float(by_mode["static"]["tokens_per_s"]), float(by_mode["inflight"]["tokens_per_s"]),
                              higher_wins=True),
    }


def streams(done: list[runs.GenRun], _: Words) -> pd.DataFrame:
    """One row per request: its arrival, its tokens under each mode, and whether the two streams are equal."""
    planned = {p.index + 1: p.arrival_s for p in runs.plan(WORKLOAD)}
    got = {r.mode: r.tokens.sort_values(["tag", "step"]).groupby("tag")["token"].apply(list) for r in done}
    table = pd.DataFrame({"request": sorted(planned)})
    table["arrival_ms"] = [round(planned[n] * 1000) for n in table["request"]]
    for mode in ("static", "inflight"):
        table[mode] = [" ".join(str(t) for t in got[mode].get(n, [])) for n in table["request"]]
    table["same"] = [_("yes") if a == b else _("no") for a, b in zip(table["static"], table["inflight"], strict=True)]
    return table.rename(columns={k: _(v) for k, v in STREAM_COLUMNS.items()})
