"""How long the live lab takes to rebuild every figure of a big run (32 sessions x 40 chunks).

The trace is synthesised (no server needed) to look like a direct-strategy run: each session
keeps one instance and slot, executions happen on every instance in turn, sessions that have
no chunk ready leave padding rows, and a share of letters come back wrong. Prints the median
of several rebuilds, building the plotly figures alone and building plus serialising them to
JSON (what Streamlit sends to the browser).

    python benchmarks/figures_rebuild.py [--sessions 32] [--chunks 40] [--rounds 7]
"""
from __future__ import annotations

import argparse
import statistics
import sys
import time
from pathlib import Path
from types import SimpleNamespace

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import numpy as np  # noqa: E402
import pandas as pd  # noqa: E402

from app.recogniser import figures  # noqa: E402
from app.recogniser.engine.judgement import analysis  # noqa: E402
from benchmarks._common import print_build  # noqa: E402

TARGET_S = 1.0


def synthesise(sessions: int, chunks: int, instances: int, slots: int, seed: int = 0) -> SimpleNamespace:
    """A RunResult-shaped object: requests, sessions and server tables of a plausible run."""
    rng = np.random.default_rng(seed)
    tags = [1_000 + s for s in range(sessions)]
    sent = [0] * sessions
    rows, batch_sizes, t = [], {}, 0.0
    while any(n < chunks for n in sent):
        for instance in range(instances):
            mine = [s for s in range(sessions) if s % instances == instance and sent[s] < chunks]
            ready = [s for s in mine if rng.random() < 0.7]
            if not ready:
                continue
            compute = rng.uniform(0.002, 0.006)
            batch = max(s // instances for s in ready) + 1  # padding fills the lower idle slots
            batch_sizes[batch] = batch_sizes.get(batch, 0) + 1
            for s in ready:
                k = sent[s]
                sent[s] += 1
                queued = rng.uniform(0.0005, 0.015)
                wrong = rng.random() < 0.1
                expected = int(rng.integers(0, 27))
                rows.append(
                    {
                        "session": s, "chunk": k, "corrid": str(tags[s]), "tag": tags[s],
                        "request_id": f"bench:{s}:{k}", "expected": expected,
                        "symbol": (expected + 1) % 27 if wrong else expected, "instance": instance,
                        "slot": s // instances, "batch": batch, "state_in": int(rng.integers(0, 27)),
                        "state_owner": tags[int(rng.integers(0, sessions))] if wrong else tags[s], "error": "",
                        "t_send": t - queued - 0.001, "t_recv": t + compute + 0.001,
                        "latency_ms": (queued + compute + 0.002) * 1000, "queue_ms": queued * 1000,
                        "compute_ms": compute * 1000, "exec_start": t, "exec_end": t + compute,
                        "queued_from": t - queued,
                    }
                )
            t += compute + 0.0005
        t += 0.004
    requests = pd.DataFrame(rows)
    session_rows = pd.DataFrame({"session": range(sessions), "tag": tags, "chunks": [chunks] * sessions})
    executed = sum(batch_sizes.values())
    server = {
        "batch_sizes": dict(sorted(batch_sizes.items())),
        "inference_count": len(requests),
        "execution_count": len(requests),
        "mean_executed_batch": sum(k * v for k, v in batch_sizes.items()) / executed,
        "mean_queue_us": requests["queue_ms"].mean() * 1000,
        "mean_compute_us": requests["compute_ms"].mean() * 1000,
        "metrics": {
            "nv_inference_request_success": float(len(requests)),
            "nv_inference_queue_duration_us": requests["queue_ms"].sum() * 1000,
            "nv_inference_compute_infer_duration_us": requests["compute_ms"].sum() * 1000,
        },
    }
    return SimpleNamespace(requests=requests, sessions=session_rows, server=server)


def timed(result, instances: int, slots: int, serialise: bool) -> float:
    start = time.perf_counter()
    built = figures.lab_figures(analysis.of_run(result, instances, slots), "direct")
    if serialise:
        for fig in built.values():
            fig.to_json()
    return time.perf_counter() - start


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sessions", type=int, default=32)
    parser.add_argument("--chunks", type=int, default=40)
    parser.add_argument("--rounds", type=int, default=7)
    args = parser.parse_args()
    print_build()
    instances, slots = 2, max(1, (args.sessions + 1) // 2)
    result = synthesise(args.sessions, args.chunks, instances, slots)
    timed(result, instances, slots, serialise=True)  # warm-up: imports and plotly's validators
    build = statistics.median(timed(result, instances, slots, False) for _ in range(args.rounds))
    full = statistics.median(timed(result, instances, slots, True) for _ in range(args.rounds))
    marks = len(result.requests)
    print(f"{args.sessions} sessions x {args.chunks} chunks = {marks} requests, {instances} instances x {slots} slots")
    print(f"rebuild all lab figures: median {build * 1000:.0f} ms (build), {full * 1000:.0f} ms (build + JSON) "
          f"over {args.rounds} rounds; target < {TARGET_S * 1000:.0f} ms")
    return 0 if full < TARGET_S else 1


if __name__ == "__main__":
    sys.exit(main())
