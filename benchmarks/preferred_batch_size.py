"""The sentiment model with and without `preferred_batch_size`, side by side in one run.

Two deployments of the same code and config, differing only in preferred_batch_size
([16, 32] against none; max_batch_size 64 and max_queue_delay_microseconds 2000 in both), are
measured in alternating rounds (A B, then B A, ...) at concurrency 1, 8 and 32: closed-loop
clients, one request per review. Per round: requests per second, client latency p50/p95 and
the server's mean batch (inference_count / execution_count). The table gives the median of
the rounds. Triton's batcher.md advises against preferred sizes for most models. Note that
Triton 2.51 fills an unset preferred_batch_size with max_batch_size ([64] here, core
model_config_utils.cc), which is what "no preferred" means on the server.

    python benchmarks/preferred_batch_size.py [--seconds 3] [--rounds 3]
"""
from __future__ import annotations

import argparse
import statistics
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from app.lab.observation import server_stats
from app.lab.server import LabServer  # noqa: E402
from app.live.sentiment import engine as sentiment  # noqa: E402
from benchmarks._common import print_build, run_workers  # noqa: E402

PREFERRED = (16, 32)
VARIANTS = {
    "preferred [16, 32]": ("sentiment_preferred", lambda c: _set_preferred(c, PREFERRED)),
    "no preferred": ("sentiment_no_preferred", lambda c: _set_preferred(c, ())),
}
CONCURRENCY = (1, 8, 32)


def _set_preferred(config, sizes) -> None:
    del config.dynamic_batching.preferred_batch_size[:]
    config.dynamic_batching.preferred_batch_size.extend(sizes)


def measure(server, model: str, concurrency: int, seconds: float) -> dict:
    """Closed loop: `concurrency` clients, each sending its next review when the last returns."""
    texts = sentiment.reviews(64, seed=concurrency)
    stop = time.perf_counter() + seconds
    latencies: list[list[float]] = [[] for _ in range(concurrency)]

    def worker(i: int) -> None:
        client = server.client()
        k = i
        while time.perf_counter() < stop:
            start = time.perf_counter()
            sentiment.classify(client, model, texts[k % len(texts)])
            latencies[i].append((time.perf_counter() - start) * 1000)
            k += concurrency
        client.close()

    control = server.client()
    before = server_stats.snapshot(control, server.metrics_url, model)
    wall = run_workers(worker, concurrency)
    done = [x for per in latencies for x in per]
    after = server_stats.snapshot_after(control, server.metrics_url, model, before, len(done))
    return {
        "rps": len(done) / wall,
        "p50": float(np.percentile(done, 50)),
        "p95": float(np.percentile(done, 95)),
        "batch": server_stats.delta(before, after)["average_batch_size"],
    }


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--seconds", type=float, default=3.0, help="length of one measurement")
    parser.add_argument("--rounds", type=int, default=3, help="alternating rounds per concurrency")
    args = parser.parse_args()
    print_build()
    server = LabServer(preload=()).start()
    try:
        models = {label: sentiment.load_variant(server, name, change) for label, (name, change) in VARIANTS.items()}
        print(f"{'concurrency':>11}  {'variant':<18} {'rps':>7} {'p50 ms':>8} {'p95 ms':>8} {'mean batch':>10}")
        for concurrency in CONCURRENCY:
            rounds: dict[str, list[dict]] = {label: [] for label in models}
            for model in models.values():
                measure(server, model, concurrency, 1.0)  # warm-up
            for r in range(args.rounds):
                labels = list(models) if r % 2 == 0 else list(reversed(models))
                for label in labels:
                    rounds[label].append(measure(server, models[label], concurrency, args.seconds))
            for label, results in rounds.items():
                med = {k: statistics.median(x[k] for x in results) for k in ("rps", "p50", "p95", "batch")}
                print(f"{concurrency:>11}  {label:<18} {med['rps']:>7.1f} {med['p50']:>8.1f} {med['p95']:>8.1f} {med['batch']:>10.2f}", flush=True)
    finally:
        server.stop()


if __name__ == "__main__":
    main()
