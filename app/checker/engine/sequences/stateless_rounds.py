"""The rounds of a check on a model without the sequence batcher (measure.py runs them on a
Measurement): every request alone, then all of them concurrently in two shuffled orders, then
alone again after that traffic; and the response cache's hits, which would make all of it moot.
"""
from __future__ import annotations

import functools
import threading
import time
from collections import deque
from collections.abc import Callable
from typing import TYPE_CHECKING

import numpy as np
from tritonclient.utils import InferenceServerException

from app.checker.engine import checks, witness
from app.lab.problems import LabError

if TYPE_CHECKING:
    from app.checker.engine.sequences.measurement import Measurement


def stateless(m: Measurement, model: str) -> None:
    requests = [(s, k) for s in range(len(m.lengths)) for k in range(m.lengths[s])]

    def alone(order: list[tuple[int, int]], phase: str, pass_: str) -> Callable[[], None]:
        def body() -> None:
            for s, k in order:
                m.send(model, phase, "alone", "alone", next(m.sequences), s, k, pass_=pass_)
        return body

    m.run_phase("reference", "alone", model, alone(requests, "reference", "a"))
    if not m.references:
        frame = m.recorder.frame()
        raise LabError("check_model_fails", model=m.facts.name, error=str(frame["error"].iloc[0]) if len(frame) else "-")
    cached = bool((m.facts.config.get("response_cache") or {}).get("enable"))
    hits_before = _cache_hits(m, model) if cached else None
    m.run_phase("reference", "alone", model, alone(requests, "reference", "b"))
    if cached and _answered_from_cache(m, model, hits_before, len(requests)):
        return
    batch = max(1, m.facts.max_batch_size)
    workers = min(len(m.lengths), max(4, min(32, 2 * batch * m.facts.instances)))
    rng = np.random.default_rng([m.options.seed, 3])
    if m.options.runs("concurrent", sequence=False):
        # the batch_composition check's witness: the batch sizes the server ran during both rounds
        counts_before = witness.batch_counts(m.server, model)
        for round_ in ("c1", "c2"):
            queue = deque(requests[i] for i in rng.permutation(len(requests)))
            lock = threading.Lock()

            def client(queue: deque[tuple[int, int]] = queue, lock: threading.Lock = lock, round_: str = round_, w: int = 0) -> None:
                pause = m.gaps("concurrent", w, 0)
                while True:
                    with lock:
                        if not queue:
                            return
                        s, k = queue.popleft()
                    m.send(model, "concurrent", "all_instances", round_, next(m.sequences), s, k)
                    gap = pause(0)
                    if gap:
                        time.sleep(gap)
            def clients(client: Callable[..., None] = client) -> None:
                m.pool([functools.partial(client, w=w) for w in range(workers)], workers)
            m.run_phase("concurrent", "all_instances", model, clients, 0, workers)
        ran = witness.ran_between(counts_before, witness.batch_counts(m.server, model))
        m.witnesses[("batch_composition", "all_instances")] = witness.batches(ran, m.facts.max_batch_size)
    if m.options.runs("after_traffic", sequence=False):
        shuffled = [requests[i] for i in rng.permutation(len(requests))]
        m.run_phase("after_traffic", "alone", model, alone(shuffled, "after_traffic", ""))


def _cache_hits(m: Measurement, model: str) -> int | None:
    """Requests the server has answered from its response cache for `model` so far (the statistics
    extension's inference_stats.cache_hit count, over its versions); None when it does not say."""
    try:
        with m.server.client(timeout_s=30) as client:
            stats = client.get_inference_statistics(model)
    except InferenceServerException:
        return None
    return sum(int((s.get("inference_stats", {}).get("cache_hit") or {}).get("count", 0)) for s in stats.get("model_stats", []))


def _answered_from_cache(m: Measurement, model: str, before: int | None, requests: int) -> bool:
    """Whether the second lone run was answered from the server's cache (or the server cannot say):
    then no repeated request reaches the model, and every stateless check is skipped."""
    after = _cache_hits(m, model) if before is not None else None
    if after is not None and after == before:
        return False  # the server has no cache: Triton ran the model for every request
    # the checks judged against the lone reference (golden and finite still judge the replies, cached or not)
    blind = [(c.code, s.variant) for c in checks.for_path(sequence=False) if c.judged_by == checks.REFERENCE for s in c.scopes]
    for check, variant in blind:
        if not m.options.wants(check):
            continue
        if after is None or before is None:
            m.skip(check, variant, "response_cache_unknown")
        else:
            m.skip(check, variant, "response_cache", cache_hits=after - before, requests=requests)
    return True


# -- the whole measurement -------------------------------------------------------------------------
