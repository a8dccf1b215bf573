"""The session driver's own throughput against a minimal loop of plain tritonclient calls
sending the same chunks with the same sequence flags at the same concurrency, in one run.

    python benchmarks/driver_overhead.py [--sessions 8] [--chunks 60] [--rounds 3]

Failures are counted and printed with their messages, grouped; the figures then cover the
rounds that finished. A failure it reports "no answer from the server (HTTPConnectionClosed: ...)"
means the server went away with a request unanswered (see app/lab/traffic/transports.py); the script
then says whether the server is still running and quotes its log's last lines.
"""
from __future__ import annotations

import argparse
import re
import statistics
import sys
import threading
import time
from collections import Counter
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import numpy as np  # noqa: E402
import tritonclient.http as http  # noqa: E402

from app.lab.scenario.ids import unique_ids  # noqa: E402
from app.lab.scenario.scenario import Scenario, random_texts  # noqa: E402
from app.lab.server import LabServer  # noqa: E402
from app.recogniser.engine import driver  # noqa: E402
from benchmarks._common import torch_build  # noqa: E402

MODEL = "asr_sequence_direct"


def plain_loop(server, plans, failures: Counter) -> float:
    """Requests per second of bare infer calls: no recording, no tracing, no judging. A session
    that fails stops there; its failure is counted in `failures` by message."""
    ids = unique_ids(len(plans))
    lock = threading.Lock()

    def session(plan, corrid):
        try:
            client = http.InferenceServerClient(plan.url)
            tag = http.InferInput("SESSION", [1, 1], "UINT64")
            tag.set_data_from_numpy(np.array([[corrid]], dtype=np.uint64))
            last = len(plan.symbols) - 1
            for k in range(len(plan.symbols)):
                audio = http.InferInput("AUDIO", [1, 160], "FP32")
                audio.set_data_from_numpy(plan.audio[k : k + 1])
                client.infer(MODEL, [audio, tag], sequence_id=corrid, sequence_start=k == 0, sequence_end=k == last)
            client.close()
        except Exception as err:
            with lock:
                failures[f"plain loop: {type(err).__name__}: {err}"] += 1

    threads = [threading.Thread(target=session, args=(p, c)) for p, c in zip(plans, ids, strict=True)]
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
        print(torch_build())
        failures: Counter = Counter()
        ours, plain = [], []
        for round_ in range(args.rounds + 1):  # alternate, so drift in the machine hits both alike
            try:
                result = driver.run(server, scenario)
            except Exception as err:  # reported, not raised: the figures cover what finished
                failures[f"driver: {type(err).__name__}: {err}"] += 1
                continue
            errors = [e for e in result.requests["error"] if e]
            failures.update(f"driver: {e}" for e in errors)
            broken = int((result.sessions["verdict"] != "intact").sum())
            if broken:
                failures[f"driver: {broken} of {len(result.sessions)} sessions not intact in one round"] += 1
            if round_ == 0:
                continue  # warm-up
            if not errors:
                ours.append(len(result.requests) / result.wall_s)
            before = sum(failures.values())
            rate = plain_loop(server, plans, failures)
            if sum(failures.values()) == before:
                plain.append(rate)
        print(f"concurrency {args.sessions}, {args.sessions * args.chunks} requests per round, {args.rounds} rounds (median)")
        if ours and plain:
            d, p = statistics.median(ours), statistics.median(plain)
            print(f"driver {d:.1f} req/s over {len(ours)} clean rounds, plain tritonclient loop {p:.1f} req/s over "
                  f"{len(plain)}, ratio {d / p:.2f}")
        report_failures(server, failures)
    finally:
        server.stop()


def report_failures(server, failures: Counter) -> None:
    """Every failure with its message, grouped (long IDs folded so alike messages group)."""
    grouped = Counter()
    for message, n in failures.items():
        grouped[re.sub(r"\b\d{6,}\b", "<id>", message)] += n
    print(f"failures: {sum(grouped.values())}")
    for message, n in grouped.most_common():
        print(f"  {n} x {message}")
    if grouped and server.is_embedded and server.embedded is not None:
        print(f"server still running: {server.embedded.running}")
        if not server.embedded.running:
            print(server.embedded.log_tail(10))


if __name__ == "__main__":
    main()
