"""Run slow lab work in a worker thread while the script thread moves an st.progress bar.

The driver reports progress from its own session threads, which have no Streamlit
context; so the work only updates a counter and this (the script) thread draws it.
"""
from __future__ import annotations

import threading
import time
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from typing import TypeVar

import streamlit as st

from app.i18n import N_
from app.lab.progress import Stage
from app.lab.traffic import Wait
from app.ui.language import t

T = TypeVar("T")


class _Progress:
    """What the work reports from its threads: requests answered, or its place in the run queue."""

    def __init__(self) -> None:
        self.lock = threading.Lock()
        self.counts = (0, 0)
        self.waiting: Wait | None = None

    def __call__(self, done: int, total: int, _stage: Stage) -> None:
        with self.lock:
            self.counts, self.waiting = (done, total), None

    def wait(self, place: Wait) -> None:
        with self.lock:
            self.waiting = place


def run_with_progress(work: Callable[[_Progress], T], label: str) -> T:
    """Call work(progress) in a worker thread; progress(done, total) moves the bar, and
    progress.wait (a driver.run on_wait) shows the learner's place while other runs go first."""
    bar = st.progress(0.0, text=label)
    progress = _Progress()
    try:
        with ThreadPoolExecutor(max_workers=1, thread_name_prefix="lab-run") as pool:
            future = pool.submit(work, progress)
            while not future.done():
                time.sleep(0.15)
                with progress.lock:
                    (done, total), waiting = progress.counts, progress.waiting
                if waiting is not None and waiting.for_memory:
                    bar.progress(0.0, text=t().render(
                        N_("{label:text}: waiting for memory: running deployments hold {in_use:count} MB of the server's "
                           "{budget:count} MB and this one needs about {need:count} MB; it waits at most {left:seconds} "
                           "for a run to end"),
                        label=label, in_use=round(waiting.in_use_mb), budget=round(waiting.budget_mb),
                        need=round(waiting.need_mb), left=waiting.expected_s))
                elif waiting is not None:
                    bar.progress(0.0, text=t().render(
                        N_("{label:text}: waiting for the deployment, {ahead:count} run(s) ahead of yours (about {expected:seconds})"),
                        label=label, ahead=waiting.position, expected=waiting.expected_s))
                elif total:
                    bar.progress(min(done / total, 1.0), text=t().render(N_("{label:text}: {done:count} of {total:count} requests answered"),
                                                                             label=label, done=done, total=total))
            return future.result()
    finally:
        bar.empty()
