"""Throughput and p95 latency of the three transports (HTTP, gRPC calls, gRPC stream) on the
same scenario, in one run: rounds alternate between transports so drift in a shared machine
hits all alike, and each figure is the median over rounds.

    python benchmarks/transports.py [--sessions 8] [--chunks 60] [--rounds 5] [--in-flight 1]
"""
from __future__ import annotations

import argparse
import statistics
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from app.i18n import words  # noqa: E402
from app.lab.scenario.scenario import Scenario, random_texts  # noqa: E402
from app.lab.scenario.transport import Transport  # noqa: E402
from app.lab.server import LabServer  # noqa: E402
from app.recogniser.engine import driver  # noqa: E402
from app.recogniser.words.transports import transport as transport_words  # noqa: E402
from benchmarks._common import torch_build  # noqa: E402

MODEL = "asr_sequence_direct"


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--sessions", type=int, default=8)
    parser.add_argument("--chunks", type=int, default=60)
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--in-flight", type=int, default=1, help="chunks in flight per session (the stream keeps order at any value)")
    parser.add_argument("--think-ms", type=float, default=0.0)
    args = parser.parse_args()
    server = LabServer(preload=(MODEL,)).start()
    try:
        texts = random_texts(args.sessions, args.chunks, seed=1)

        def scenario(transport: Transport) -> Scenario:
            return Scenario(MODEL, texts, think_ms=args.think_ms, jitter_ms=0, transport=transport, in_flight=args.in_flight)

        for transport in Transport:  # warm-up: connections, the model's first batches
            driver.run(server, scenario(transport))
        rate: dict[Transport, list[float]] = {t: [] for t in Transport}
        p95: dict[Transport, list[float]] = {t: [] for t in Transport}
        broken: dict[Transport, int] = {t: 0 for t in Transport}
        for _ in range(args.rounds):
            for transport in Transport:
                result = driver.run(server, scenario(transport))
                broken[transport] += int((result.sessions["verdict"] != "intact").sum())
                rate[transport].append(len(result.requests) / result.wall_s)
                p95[transport].append(float(result.requests["latency_ms"].quantile(0.95)))
        print(torch_build() + f"; server {server.status()['version']}")
        print(
            f"{MODEL}: {args.sessions} sessions x {args.chunks} chunks, think {args.think_ms:g} ms, "
            f"{args.in_flight} in flight per session, {args.rounds} alternating rounds (median)"
        )
        print(f"{'transport':28} {'req/s':>8} {'p95 ms':>8} {'sessions not intact':>20}")
        for transport in Transport:
            print(
                f"{transport_words(transport, words()):28} {statistics.median(rate[transport]):8.1f} "
                f"{statistics.median(p95[transport]):8.1f} {broken[transport]:>20}"
            )
    finally:
        server.stop()


if __name__ == "__main__":
    main()
