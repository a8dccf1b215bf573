"""The recogniser's own account of the state it holds, read from Triton's Prometheus endpoint.

The recogniser (model_repository/asr_dynamic/1/model.py) exports two custom metrics through
the Python backend's metrics API, labelled by model, version and instance: a gauge of the
state cells an instance holds and a counter of the cells it dropped by its own idle
eviction. Triton's reaper never tells the model a sequence died, so these are the only
view of state the model still keeps for sessions that are gone.
"""
from __future__ import annotations

import threading
import time

import pandas as pd

from app.lab.observation import server_stats

CELLS = "asr_state_cells"  # gauge: cells held now
EVICTED = "asr_state_cells_evicted"  # counter: cells dropped by the model's idle eviction
COLUMNS = ["instance", "cells", "evicted"]


def parse(text: str, model: str) -> pd.DataFrame:
    """One row per instance of `model` (summed over versions) from Prometheus exposition text."""
    columns = {CELLS: "cells", EVICTED: "evicted"}
    values: dict[int, dict[str, float]] = {}
    for name, sample in server_stats.model_samples(text, model, columns):
        row = values.setdefault(int(sample.labels.get("instance", 0)), {"cells": 0.0, "evicted": 0.0})
        row[columns[name]] += sample.value
    rows = [{"instance": i, "cells": int(v["cells"]), "evicted": int(v["evicted"])} for i, v in sorted(values.items())]
    return pd.DataFrame(rows, columns=COLUMNS)


def read(metrics_url: str, model: str, timeout_s: float = 5.0) -> pd.DataFrame:
    """The cells each instance of `model` holds now; empty when the endpoint or metric is missing."""
    text = server_stats.scrape(metrics_url, timeout_s)
    return pd.DataFrame(columns=COLUMNS) if text is None else parse(text, model)


class Sampler:
    """Reads the cells of one model every `every_s` in a background thread while a run goes on.

    frame(): one row per (sample, instance): t (seconds since start), instance, cells, evicted.
    mark(label): records an event at the current time (for figures), frame() has no rows for it;
    marks() returns them.
    """

    def __init__(self, metrics_url: str, model: str, every_s: float = 0.2):
        self.metrics_url, self.model, self.every_s = metrics_url, model, every_s
        self._rows: list[dict[str, object]] = []  # t, then the columns of read()
        self._marks: list[dict[str, float | str]] = []
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None
        self.t0 = time.perf_counter()

    def __enter__(self) -> Sampler:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()

    def start(self) -> Sampler:
        self.t0 = time.perf_counter()
        self._sample()
        self._thread = threading.Thread(target=self._loop, name="state-cells", daemon=True)
        self._thread.start()
        return self

    def stop(self) -> None:
        if self._thread is not None:
            self._stop.set()
            self._thread.join()
            self._thread = None
            self._sample()  # the state the run left behind

    def mark(self, label: str) -> None:
        self._marks.append({"t": time.perf_counter() - self.t0, "label": label})

    def _loop(self) -> None:
        while not self._stop.wait(self.every_s):
            self._sample()

    def _sample(self) -> None:
        t = time.perf_counter() - self.t0
        # A short timeout: an unreachable metrics port must not hold up the run it samples.
        for row in read(self.metrics_url, self.model, timeout_s=1.0).to_dict("records"):
            self._rows.append({"t": t, **row})

    def frame(self) -> pd.DataFrame:
        return pd.DataFrame(self._rows, columns=["t", *COLUMNS])

    def marks(self) -> pd.DataFrame:
        return pd.DataFrame(self._marks, columns=["t", "label"])


def totals(frame: pd.DataFrame, by: tuple[str, ...] = ()) -> pd.DataFrame:
    """Cells and evictions summed over instances at each sample time (per `by` columns too)."""
    keys = [*by, "t"]
    if frame.empty:
        return pd.DataFrame(columns=[*keys, "cells", "evicted"])
    return frame.groupby(keys, as_index=False)[["cells", "evicted"]].sum()
