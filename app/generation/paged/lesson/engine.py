"""The runs of lesson 9's live element and what they showed, free of Streamlit and of words.

One seeded workload (eight requests sharing a 32-token system prompt, about 20 ms apart) goes to
the paged engine deployed with the block count and prefix sharing the learner picked, through
app/generation/paged/engine.run, which holds the deployment alone for the run. Everything the
element shows is read off the engine's own report in the stream (the step that made each token, the
requests running and waiting then, the free blocks), never modelled.
"""
from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import pandas as pd

from app.generation.engine import PlannedRequest
from app.generation.paged.engine import PagedFigures, PagedSettings, PagedWorkload, analysis, run
from app.lab.progress import Progress
from app.lab.traffic import OnWait, ServerView

# Fixed, so a class compares like with like: the arrivals, prompts and answer lengths are the same in
# every run; only the engine's memory changes. 20 ms apart, most requests arrive while others run.
WORKLOAD = PagedWorkload(requests=8, mean_gap_ms=20.0, system_tokens=32, seed=0)
BLOCK_SIZE = PagedSettings().block_size  # kv_engine's: 16 tokens a block
# 64 blocks hold every request at once; 16 and 8 do not (seen on this server, lessons/COVERAGE.md kv-memory-caps).
BLOCK_CHOICES = (64, 16, 8)
# The prediction, in bands of the peak number of requests running in one engine step.
BANDS = ("all", "some", "few")
FEW = 2  # at most this many running at the peak: "few"


def settings(blocks: int, sharing: bool) -> PagedSettings:
    """The deployment a choice makes: kv_engine's settings but for the block count and sharing."""
    return PagedSettings(num_blocks=blocks, prefix_sharing=sharing)


def band(peak_running: int, requests: int = WORKLOAD.requests) -> str:
    """Which prediction a peak answers: every request at once, a few (FEW or fewer), or some between."""
    if peak_running >= requests:
        return "all"
    return "few" if peak_running <= FEW else "some"


@dataclass(frozen=True)
class LessonRun:
    blocks: int
    sharing: bool
    figures: PagedFigures  # peak running and waiting, TTFT p50/p95, prefix share...
    requests: pd.DataFrame  # analysis.REQUEST_COLUMNS, one row per request
    steps: pd.DataFrame  # analysis.STEP_COLUMNS plus used_blocks, one row per engine step
    # No preemption count: the engine's counter is a total since load, so a run's own share of it
    # cannot be told apart from a neighbour's; the Generation lab's engine mode shows it.

    @property
    def seen(self) -> str:
        return band(self.figures.peak_running, self.figures.requests)

    @property
    def capacity_tokens(self) -> int:
        return self.blocks * BLOCK_SIZE


def read(blocks: int, sharing: bool, trace: pd.DataFrame, plans: Sequence[PlannedRequest]) -> LessonRun:
    """A run's reading from its trace: per request, per step (blocks in use = blocks - free), and its figures."""
    requests = analysis.requests_table(trace, plans)
    steps = analysis.steps_table(trace)
    steps = steps.assign(used_blocks=blocks - steps["free_blocks"].astype(int))
    figures = analysis.figures(trace, requests, WORKLOAD.system_tokens, BLOCK_SIZE)
    return LessonRun(blocks=blocks, sharing=sharing, figures=figures, requests=requests, steps=steps)


def run_lesson(server: ServerView, blocks: int, sharing: bool, progress: Progress | None = None,
               on_wait: OnWait | None = None) -> LessonRun:
    """Deploy the engine with `blocks` blocks (once per choice), run the workload on it alone, read it."""
    if blocks not in BLOCK_CHOICES:
        raise ValueError(f"blocks must be one of {BLOCK_CHOICES}, not {blocks}")
    done = run(server, settings(blocks, sharing), WORKLOAD, progress=progress, on_wait=on_wait)
    return read(blocks, sharing, done.stream.trace, done.stream.plans)
