"""The session driver's own throughput against a minimal loop of plain tritonclient calls
sending the same chunks with the same sequence flags at the same concurrency, in one run.

    python benchmarks/driver_overhead.py [--sessions 8] [--chunks 60] [--rounds 3]
"""
from __future__ import annotations

import argparse
import statistics
import sys
import threading
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import numpy as np  # noqa: E402
import tritonclient.http as http  # noqa: E402

from app.lab import driver  # noqa: E402
from app.lab.ids import unique_ids  # noqa: E402
from app.lab.scenario import Scenario, random_texts  # noqa: E402
from app.lab.server.connection import LabServer  # noqa: E402
from benchmarks._common import torch_build  # noqa: E402

MODEL = "asr_sequence_direct"


def plain_loop(server, plans) -> float:
    """Requests per second of bare infer calls: no recording, no tracing, no judging."""
    ids = unique_ids(len(plans))

    def session(plan, corrid):
        client = http.InferenceServerClient(plan.url)
        tag = http.InferInput("SESSION", [1, 1], "UINT64")
        tag.set_data_from_numpy(np.array([[corrid]], dtype=np.uint64))
        last = len(plan.symbols) - 1
        for k in range(len(plan.symbols)):
            audio = http.InferInput("AUDIO", [1, 160], "FP32")
            audio.set_data_from_numpy(plan.audio[k : k + 1])
            client.infer(MODEL, [audio, tag], sequence_id=corrid, sequence_start=k == 0, sequence_end=k == last)
        client.close()

    threads = [threading.Thread(target=session, args=(p, c)) for p, c in zip(plans, ids)]
    start = time.perf_counter()
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    return sum(len(p.symbols) for p in plans) / (time.perf_counter() - start)


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--sessions", type=int, default=8)
    parser.add_argument("--chunks", type=int, default=60)
    parser.add_argument("--rounds", type=int, default=3)
    args = parser.parse_args()
    server = LabServer(preload=(MODEL,)).start()
    try:
        scenario = Scenario(MODEL, random_texts(args.sessions, args.chunks, seed=1), think_ms=0, jitter_ms=0)
        plans = driver.plan_sessions(scenario, server.url)
        driver.run(server, scenario)  # warm-up
        ours, plain = [], []
        for _ in range(args.rounds):  # alternate, so drift in the machine hits both alike
            result = driver.run(server, scenario)
            assert result.all_intact
            ours.append(len(result.requests) / result.wall_s)
            plain.append(plain_loop(server, plans))
        d, p = statistics.median(ours), statistics.median(plain)
        print(torch_build())
        print(f"concurrency {args.sessions}, {args.sessions * args.chunks} requests per round, {args.rounds} rounds (median)")
        print(f"driver {d:.1f} req/s, plain tritonclient loop {p:.1f} req/s, ratio {d / p:.2f}")
    finally:
        server.stop()


if __name__ == "__main__":
    main()
