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
                    bar.progress(min(done / total, 1.0), text=f"{label}: {done} of {total} requests answered")
            return future.result()
    finally:
        bar.empty()
