"""An engine-mode run of the generation lab, as the tables its figures read (no Streamlit, no words).

Each side of a set-up runs the same planned workload (the same arrivals, prompts and answer
lengths; fresh tags per run, so no two runs share a request id) on its own deployment, through the
paged engine's driver, which holds the deployment alone for the run: a learner's blocks and steps
are never mixed with another learner's. `SideRun` keeps the engine's analysis tables, each row
labelled with its side, for app/generation/paged/figures.py:

  requests  analysis.requests_table + side
  steps     analysis.steps_table + side
  blocks    analysis.block_table + side
"""
from __future__ import annotations

import time
from dataclasses import dataclass
from typing import TYPE_CHECKING

import pandas as pd

from app.generation.paged.engine import PagedFigures, PagedSettings, analysis
from app.generation.paged.engine import run as engine_run
from app.generation.paged.setup import PagedSetup
from app.lab.traffic import Wait, run_queue

if TYPE_CHECKING:
    from app.lab.progress import Progress
    from app.lab.traffic import OnWait, ServerView

SAME = 1.2  # medians within this ratio count as about the same


@dataclass
class Waited:
    """What a run heard from the run queue while another run held its deployment: the most runs ahead of it and
    about how long it waited (the queue re-reports a waiting run's place every run_queue.POLL_S, so the first and the last
    report bound the wait to within one poll)."""

    most_ahead: int = 0
    first_s: float | None = None
    last_s: float | None = None

    def hear(self, wait: Wait) -> None:
        now = time.monotonic()
        self.most_ahead = max(self.most_ahead, int(wait.position))
        self.first_s = now if self.first_s is None else self.first_s
        self.last_s = now

    @property
    def seconds(self) -> float:
        if self.first_s is None or self.last_s is None:
            return 0.0
        return float(self.last_s - self.first_s + run_queue.POLL_S)


@dataclass(frozen=True, kw_only=True)
class SideRun:
    side: str  # "a" or "b"
    settings: PagedSettings
    model: str
    requests: pd.DataFrame
    steps: pd.DataFrame
    blocks: pd.DataFrame
    figures: PagedFigures


def run_side(server: ServerView, setup: PagedSetup, side: str, progress: Progress | None = None,
             on_wait: OnWait | None = None) -> SideRun:
    """One side of the set-up on its workload; raises what the engine's driver raises."""
    settings = setup.settings(side)
    done = engine_run(server, settings, setup.workload, progress=progress, on_wait=on_wait)
    trace, plans = done.stream.trace, done.stream.plans
    requests = analysis.requests_table(trace, plans)
    figures = analysis.figures(trace, requests, setup.workload.system_tokens, settings.block_size)
    return SideRun(side=side, settings=settings, model=done.model, requests=requests.assign(side=side),
                   steps=analysis.steps_table(trace).assign(side=side),
                   blocks=analysis.block_table(trace).assign(side=side), figures=figures)


def run_setup(server: ServerView, setup: PagedSetup, progress: Progress | None = None,
              on_wait: OnWait | None = None) -> list[SideRun]:
    """Each side of the set-up, one after the other, on the same planned workload. Raises LabError first when a
    side could never run it (PagedSetup.problems)."""
    setup.check()
    return [run_side(server, setup, side, progress, on_wait) for side in setup.sides()]


def joined(done: list[SideRun], name: str) -> pd.DataFrame:
    """One of the runs' tables (requests, steps or blocks), one side below the other."""
    return pd.concat([getattr(r, name) for r in done], ignore_index=True)


def kind(setup: PagedSetup) -> str:
    """The lab's question for this set-up: compare (two sides) or single."""
    return "compare" if setup.compare else "single"


def answer(question: str, done: list[SideRun]) -> str:
    """What the engine did, as the answer key of the lab's question (words.ANSWERS):
    compare: which side gave the median request its first token sooner (within a fifth: the same);
    single: whether some request waited in the engine's queue in some step (WAITING > 0: not yet started, or
    pre-empted and waiting to go on)."""
    if question == "compare":
        by_side = {r.side: r.figures.ttft_p50_ms for r in done}
        a, b = by_side["a"], by_side["b"]
        if a < b / SAME:
            return "a"
        return "b" if b < a / SAME else "same"
    return "yes" if any(r.figures.peak_waiting > 0 for r in done) else "no"
