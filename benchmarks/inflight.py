"""Static batching against in-flight batching, on the same seeded workload, in one run.

gen_static (dynamic batcher: a batch is generated to its longest request's end in one execution)
and gen_inflight (iterative sequences: one step per execution, requests join at any step) run the
same model.py at 20 ms a step with 4 rows and one instance. The workload: 24 requests of 2 to 16
tokens arriving 40 ms apart on average (exponential gaps, seed 0), sent on one gRPC stream. The two
alternate over rounds (A B, then B A, ...) after one warm-up each; the table gives each figure's
median over the rounds: tokens per second (tokens / first send to last response), time to first
token p50 and p95, and the mean fill of a model step (rows that made a token / 4), then
in-flight's figures over static's.

    python benchmarks/inflight.py [--rounds 3] [--seed 0]
"""
from __future__ import annotations

import argparse
import statistics
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from app.generation.engine import Workload, requests_table, run, run_figures  # noqa: E402
from app.lab.server import LabServer  # noqa: E402
from benchmarks._common import print_build  # noqa: E402

MODELS = ("gen_static", "gen_inflight")
FIGURES = ("tokens_per_s", "ttft_p50_ms", "ttft_p95_ms", "mean_fill")


def measure(server: LabServer, model: str, workload: Workload) -> dict[str, float]:
    result = run(server, model, workload)
    requests = requests_table(result.trace, result.plans)
    assert requests["correct"].all(), f"{model}: a stream differs from the token rule"
    figures = run_figures(requests, result.trace, result.max_batch_size)
    return {name: getattr(figures, name) for name in FIGURES}


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--rounds", type=int, default=3, help="alternating rounds after the warm-up")
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args()
    print_build()
    workload = Workload(requests=24, mean_gap_ms=40, min_tokens=2, max_tokens=16, seed=args.seed)
    plan = workload.plan()
    print(f"workload: {workload.requests} requests, {sum(p.max_tokens for p in plan)} tokens, 2 to 16 each, "
          f"arrivals {workload.mean_gap_ms:g} ms apart on average (seed {args.seed}), last at {plan[-1].arrival_s * 1000:.0f} ms")
    server = LabServer(preload=MODELS).start()
    try:
        for model in MODELS:
            measure(server, model, workload)  # warm-up
        rounds: dict[str, list[dict[str, float]]] = {m: [] for m in MODELS}
        for r in range(args.rounds):
            for model in (MODELS if r % 2 == 0 else tuple(reversed(MODELS))):
                rounds[model].append(measure(server, model, workload))
    finally:
        server.stop()
    med = {m: {k: statistics.median(x[k] for x in rounds[m]) for k in FIGURES} for m in MODELS}
    print(f"{'deployment':<14} {'tokens/s':>9} {'TTFT p50 ms':>12} {'TTFT p95 ms':>12} {'mean fill':>10}   (median of {args.rounds} rounds)")
    for model in MODELS:
        f = med[model]
        print(f"{model:<14} {f['tokens_per_s']:>9.1f} {f['ttft_p50_ms']:>12.1f} {f['ttft_p95_ms']:>12.1f} {f['mean_fill']:>10.2f}")
    s, i = med["gen_static"], med["gen_inflight"]
    print(f"{'in-flight/static':<14} {i['tokens_per_s'] / s['tokens_per_s']:>8.2f}x {i['ttft_p50_ms'] / s['ttft_p50_ms']:>11.2f}x "
          f"{i['ttft_p95_ms'] / s['ttft_p95_ms']:>11.2f}x {i['mean_fill'] / s['mean_fill']:>9.2f}x")


if __name__ == "__main__":
    main()
