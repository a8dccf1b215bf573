"""Run a workload on a paged-engine deployment with the generation driver, and read the engine's
gauges. The driver (app/generation/engine/driver.py) sends and records; PAGED tells it what the
engine takes and answers. A run holds its deployment alone (the run queue), so the engine's steps
and blocks in its trace are its own requests' only: a learner's run is never mixed with another's.
"""
from __future__ import annotations

import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

import numpy as np
import pandas as pd

from app.generation.engine import GenerationRun, StreamShape, infer_inputs
from app.generation.engine import run as run_stream
from app.generation.engine.workload import PlannedRequest
from app.generation.paged.engine.settings import PagedSettings, ensure
from app.generation.paged.engine.workload import PagedWorkload
from app.lab.observation import server_stats
from app.lab.progress import Progress
from app.lab.traffic import OnWait, ServerView, run_queue

if TYPE_CHECKING:
    import tritonclient.grpc as grpcclient

SCALARS = ("TOKEN", "POSITION", "STEP", "STEP_TOKENS", "PREFIX_BLOCKS", "FREE_BLOCKS", "CACHED_BLOCKS", "WAITING", "RUNNING")
LISTS = ("STEP_TAGS", "BLOCKS", "SHARED_BLOCKS")
GAUGES = ("kv_blocks_used", "kv_blocks_free", "kv_blocks_cached", "kv_requests_running", "kv_requests_waiting",
          "kv_prefix_blocks_reused_total", "kv_preemptions_total")


def _inputs(plan: PlannedRequest) -> list[grpcclient.InferInput]:
    """PROMPT (any length), MAX_TOKENS and TAG; the engine's batching is its own (max_batch_size 0)."""
    return infer_inputs({
        "PROMPT": (np.array(plan.prompt, dtype=np.int32), "INT32"),
        "MAX_TOKENS": (np.array([plan.max_tokens], dtype=np.int32), "INT32"),
        "TAG": (np.array([plan.tag], dtype=np.uint64), "UINT64"),
    })


def _inferences(trace: pd.DataFrame, floor: int) -> int:
    # Triton hands each request to execute once (its batcher is off): one inference per request.
    return floor


PAGED = StreamShape(outputs=SCALARS, inputs=_inputs, inferences=_inferences, list_outputs=LISTS)


@dataclass
class PagedRun:
    settings: PagedSettings
    stream: GenerationRun  # the trace (PAGED.trace_columns), plans and Triton's statistics
    gauges_after: dict[str, float]  # the engine's gauges once the run's requests are gone

    @property
    def model(self) -> str:
        return self.stream.model


def run(server: ServerView, settings: PagedSettings, workload: PagedWorkload | Sequence[PlannedRequest], *,
        cancel_after: Mapping[int, int] | None = None, progress: Progress | None = None,
        on_wait: OnWait | None = None, timeout_s: float = 60.0) -> PagedRun:
    """Load the deployment `settings` make (once per set-up), run the workload on it alone, and
    read its gauges after. Raises what the generation driver raises."""
    plans = workload.plan() if isinstance(workload, PagedWorkload) else list(workload)
    model = ensure(server, settings)  # type: ignore[arg-type]
    with run_queue.hold(server, model, on_wait):
        stream = run_stream(server, model, plans, cancel_after=cancel_after, progress=progress, hold=False,
                            timeout_s=timeout_s, shape=PAGED)
        gauges = settle(server.metrics_url, model)
    return PagedRun(settings=settings, stream=stream, gauges_after=gauges)


def alone(server: ServerView, settings: PagedSettings, plans: Sequence[PlannedRequest],
          timeout_s: float = 60.0) -> dict[int, list[int]]:
    """Each request's tokens when it runs by itself on the same deployment: one at a time."""
    model = ensure(server, settings)  # type: ignore[arg-type]
    out: dict[int, list[int]] = {}
    with run_queue.hold(server, model):
        for plan in plans:
            single = PlannedRequest(index=plan.index, tag=plan.tag, arrival_s=0.0, prompt=plan.prompt,
                                    max_tokens=plan.max_tokens)
            stream = run_stream(server, model, [single], hold=False, timeout_s=timeout_s, shape=PAGED)
            trace = stream.trace
            tokens = trace[(~trace["empty"].astype(bool)) & (trace["error"] == "")]
            out[plan.index] = [int(t) for t in tokens.sort_values("position")["token"]]
    return out


def gauges(metrics_url: str, model: str, timeout_s: float = 5.0) -> dict[str, float]:
    """The engine's gauges for `model` now ({} when the endpoint does not answer)."""
    text = server_stats.scrape(metrics_url, timeout_s)
    if text is None:
        return {}
    return {name: sample.value for name, sample in server_stats.model_samples(text, model, set(GAUGES))}


def settle(metrics_url: str, model: str, timeout_s: float = 5.0) -> dict[str, float]:
    """The gauges once no request runs or waits and no block is in use (the model refreshes them
    every few tens of milliseconds), or as they stand after `timeout_s`."""
    deadline = time.monotonic() + timeout_s
    while True:
        now = gauges(metrics_url, model)
        idle = now and all(now.get(k, 1) == 0 for k in ("kv_blocks_used", "kv_requests_running", "kv_requests_waiting"))
        if idle or time.monotonic() >= deadline:
            return now
        time.sleep(0.05)
