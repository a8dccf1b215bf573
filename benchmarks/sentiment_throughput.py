"""Requests per second of the stateless sentiment model with dynamic batching versus the same
model and code with batching off, at concurrency 1, 8 and 32, measured side by side in one run.

    python benchmarks/sentiment_throughput.py [--seconds 4]
"""
from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from app.lab.server import LabServer  # noqa: E402
from app.live.sentiment import engine as sentiment  # noqa: E402
from benchmarks._common import run_workers, torch_build  # noqa: E402

REVIEWS = [
    "great product and friendly staff", "terrible service and slow refund", "good value would recommend",
    "awful noisy room", "lovely view perfect breakfast", "broken lift and rude desk",
]


def measure(server, model: str, concurrency: int, seconds: float) -> float:
    stop = time.perf_counter() + seconds
    counts = [0] * concurrency

    def worker(i: int) -> None:
        client = server.client()
        k = i
        while time.perf_counter() < stop:
            sentiment.classify(client, model, REVIEWS[k % len(REVIEWS)])
            counts[i] += 1
            k += 1
        client.close()

    wall = run_workers(worker, concurrency)
    return sum(counts) / wall


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--seconds", type=float, default=4.0)
    args = parser.parse_args()
    server = LabServer(preload=("sentiment",)).start()
    try:
        unbatched = sentiment.load_unbatched(server)
        print(torch_build())
        print(f"{'concurrency':>11} {'dynamic rps':>12} {'unbatched rps':>14} {'ratio':>6}")
        for concurrency in (1, 8, 32):
            measure(server, "sentiment", concurrency, 1.0)  # warm-up
            dynamic = measure(server, "sentiment", concurrency, args.seconds)
            measure(server, unbatched, concurrency, 1.0)
            plain = measure(server, unbatched, concurrency, args.seconds)
            print(f"{concurrency:>11} {dynamic:>12.1f} {plain:>14.1f} {dynamic / plain:>6.2f}", flush=True)
    finally:
        server.stop()


if __name__ == "__main__":
    main()
