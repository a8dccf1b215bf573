"""Run slow lab work in a worker thread while the script thread moves an st.progress bar.

The driver reports progress from its own session threads, which have no Streamlit
context; so the work only updates a counter and this (the script) thread draws it.
"""
from __future__ import annotations

import threading
import time
from concurrent.futures import ThreadPoolExecutor
from typing import Callable, TypeVar

import streamlit as st

from app.i18n import N_
from app.ui.language import t

T = TypeVar("T")


def run_with_progress(work: Callable[[Callable[[int, int], None]], T], label: str) -> T:
    bar = st.progress(0.0, text=label)
    counts = [0, 0]
    lock = threading.Lock()

    def progress(done: int, total: int) -> None:
        with lock:
            counts[0], counts[1] = done, total

    try:
        with ThreadPoolExecutor(max_workers=1, thread_name_prefix="lab-run") as pool:
            future = pool.submit(work, progress)
            while not future.done():
                time.sleep(0.15)
                with lock:
                    done, total = counts
                if total:
                    bar.progress(min(done / total, 1.0), text=t().render(N_("{label:text}: {done:count} of {total:count} requests answered"),
                                                                             label=label, done=done, total=total))
            return future.result()
    finally:
        bar.empty()
