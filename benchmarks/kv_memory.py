"""Memory decides the batch: the paged engine (kv_engine) on one seeded workload, in one run.

Three experiments on Triton's embedded server, every stream compared token by token with the same
request run alone on the same deployment:

1. blocks: 8 requests sharing a 32-token system prompt, 4 to 24 tokens of their own and 8 to 32
   to generate, arriving 20 ms apart on average (exponential gaps, seed 0), on caches of 64, 32,
   16 and 8 blocks of 16 tokens: tokens per second (tokens / first send to last response), time
   to first token p50 and p95, the most requests computing in one engine step (STEP_TAGS) and
   waiting in one step, preemptions (the engine's counter, per run).
2. prefix sharing off and on (64 blocks): the share of the shared prefix's blocks a later request
   found in the cache (every request but the first could find system_tokens // block_size), the
   prompt tokens the engine computed (each prompt's tokens after the blocks it found in the cache,
   PREFIX_BLOCKS), time to first token.
3. a long prompt (448 tokens) arriving 100 ms in, among the same 8 generations (128 blocks, so
   memory does not interfere), with a step budget of 1024 (the whole prompt in one step: no
   chunking) and of 64 (chunked prefill), and with no long prompt at all: the running requests'
   time between tokens p50 and p99 (the long request's own gaps left out). 3a paces the steps as
   the shipped deployment does (at least 10 ms each, as a larger model's would take); 3b does not
   (step_ms 0), so a step lasts what the toy model's compute takes and a whole 448-token prefill
   stands out from the decode steps around it.

Goals (issue 49): with sharing on, at least 75 % of the shared prefix's blocks come from the cache;
chunked prefill keeps the running requests' p99 time between tokens within 2x their p99 with no
long prompt arriving; every stream equal to its alone run at every block count.

    python benchmarks/kv_memory.py [--rounds 3] [--long-rounds 5] [--seed 0]
"""
from __future__ import annotations

import argparse
import statistics
import sys
from dataclasses import replace
from pathlib import Path
from typing import Any

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from app.generation.paged.engine import PagedSettings, PagedWorkload, alone, analysis, ensure, gauges, run  # noqa: E402
from app.lab.server import LabServer  # noqa: E402
from benchmarks._common import print_build  # noqa: E402

BLOCK_COUNTS = (64, 32, 16, 8)
WORKLOAD = PagedWorkload(requests=8, mean_gap_ms=20, system_tokens=32, min_user_tokens=4, max_user_tokens=24,
                         min_answer_tokens=8, max_answer_tokens=32)
LONG_PROMPT = 448
LONG_AT_MS = 100.0
BUDGET_WHOLE, BUDGET_CHUNKED = 1024, 64
SHARE_GOAL, TBT_GOAL = 0.75, 2.0
WARM_UP_SEED = 1000


def print_builds() -> None:
    """torch's build (benchmarks/_common) and transformers', whose engine every figure here is."""
    import transformers

    print_build()
    print(f"transformers {transformers.__version__}", flush=True)


class Bench:
    def __init__(self, server: LabServer):
        self.server = server
        self._alone: dict[tuple[PagedSettings, tuple[int, ...], int], list[int]] = {}
        self.unequal: list[str] = []

    def alone(self, settings: PagedSettings, plans: list[Any]) -> dict[int, list[int]]:
        """Alone references, once per (deployment, prompt, answer length)."""
        def key(p: Any) -> tuple[PagedSettings, tuple[int, ...], int]:
            return settings, tuple(p.prompt), p.max_tokens
        missing = [p for p in plans if key(p) not in self._alone]
        if missing:
            by_index = {p.index: p for p in missing}
            for index, tokens in alone(self.server, settings, missing).items():
                self._alone[key(by_index[index])] = tokens
        return {p.index: self._alone[key(p)] for p in plans}

    def measure(self, label: str, settings: PagedSettings, workload: PagedWorkload) -> dict[str, Any]:
        """One run; its figures, the streams' equality with their alone runs and the engine's counters."""
        plans = workload.plan()
        shared = workload.system_tokens // settings.block_size
        before = gauges(self.server.metrics_url, ensure(self.server, settings))
        result = run(self.server, settings, plans)
        trace = result.stream.trace
        requests = analysis.requests_table(trace, plans)
        figures = analysis.figures(trace, requests, workload.system_tokens, settings.block_size)
        equal = analysis.equal_alone(requests, self.alone(settings, plans))
        if len(equal) != len(plans) or not all(equal.values()):
            self.unequal.append(f"{label}: {sum(equal.values())}/{len(plans)} streams equal to their alone runs")
        long_index = workload.requests if workload.long_prompt_tokens else None
        others = analysis.token_rows(trace)
        others = others[others["index"] != long_index]
        gaps = np.concatenate([np.diff(np.sort(g["t_recv"].to_numpy(dtype=float))) * 1000.0
                               for _, g in others.groupby("index")])
        return {
            "figures": figures, "equal": sum(equal.values()), "requests": len(plans),
            # Requests that computed tokens in one engine step (STEP_TAGS): the batch memory allowed.
            "most_in_a_step": int(analysis.steps_table(trace)["requests"].max()),
            # The engine starts a prompt after the blocks it found in the cache (PREFIX_BLOCKS).
            "prompt_tokens_computed": int((requests["prompt_tokens"] - requests["prefix_blocks"] * settings.block_size).sum()),
            # Of the shared prefix's whole blocks, those a request found in the cache (its own
            # tokens' blocks are not the shared prefix's); every request but the first could.
            "prefix_from_cache": int(requests["prefix_blocks"].clip(upper=shared).sum()),
            "prefix_possible": max(len(plans) - 1, 0) * shared,
            "prompt_tokens": int(sum(len(p.prompt) for p in plans)),
            "others_tbt_p50_ms": float(np.percentile(gaps, 50)), "others_tbt_p99_ms": float(np.percentile(gaps, 99)),
            # The engine's counter counts since its deployment loaded: this run's is its rise.
            "preemptions": result.gauges_after.get("kv_preemptions_total", float("nan"))
            - before.get("kv_preemptions_total", float("nan")),
            "blocks_used_after": result.gauges_after.get("kv_blocks_used", float("nan")),
        }

    def rounds(self, cases: list[tuple[str, PagedSettings, PagedWorkload]], count: int) -> list[dict[str, Any]]:
        """Per case, the median of each figure over `count` rounds after one warm-up run each (a
        deployment's first run pays for its load and its first steps). The cases take turns within
        a round, in reverse order every other round, so that a drift in the machine's load falls on
        all of them alike. Round r draws each workload with seed + r, the same in every case, and
        the warm-up with seed + WARM_UP_SEED: fresh prompts every run, since a cache that kept
        blocks of an earlier run's prompts would serve more than the shared prefix from it."""
        for label, settings, workload in cases:
            self.measure(label, settings, replace(workload, seed=workload.seed + WARM_UP_SEED))
        runs: list[list[dict[str, Any]]] = [[] for _ in cases]
        for r in range(count):
            order = list(enumerate(cases)) if r % 2 == 0 else list(reversed(list(enumerate(cases))))
            for i, (label, settings, workload) in order:
                runs[i].append(self.measure(label, settings, replace(workload, seed=workload.seed + r)))
        return [self._summary(case_runs) for case_runs in runs]

    @staticmethod
    def _summary(runs: list[dict[str, Any]]) -> dict[str, Any]:
        out: dict[str, Any] = {"equal": min(r["equal"] for r in runs), "requests": runs[0]["requests"],
                               "blocks_used_after": max(r["blocks_used_after"] for r in runs)}
        for key in ("prompt_tokens_computed", "prompt_tokens", "others_tbt_p50_ms", "others_tbt_p99_ms", "most_in_a_step",
                    "prefix_from_cache", "prefix_possible", "preemptions"):
            out[key] = statistics.median(r[key] for r in runs)
        for key in ("tokens_per_s", "ttft_p50_ms", "ttft_p95_ms", "peak_running", "peak_waiting", "steps"):
            out[key] = statistics.median(getattr(r["figures"], key) for r in runs)
        return out


def blocks(bench: Bench, count: int) -> None:
    print(f"\n1. blocks: {WORKLOAD.requests} requests, system prompt {WORKLOAD.system_tokens} tokens, "
          f"block size 16, budget 128, fifo, sharing on (median of {count} rounds)")
    print(f"{'blocks':>6} {'tokens/s':>9} {'TTFT p50':>9} {'TTFT p95':>9} {'in a step':>9} {'peak wait':>9} "
          f"{'preemptions':>11} {'steps':>6} {'equal alone':>11} {'blocks used after':>17}")
    cases = [(f"{n} blocks", PagedSettings(num_blocks=n), WORKLOAD) for n in BLOCK_COUNTS]
    for num_blocks, r in zip(BLOCK_COUNTS, bench.rounds(cases, count), strict=True):
        print(f"{num_blocks:>6} {r['tokens_per_s']:>9.1f} {r['ttft_p50_ms']:>7.0f}ms {r['ttft_p95_ms']:>7.0f}ms "
              f"{r['most_in_a_step']:>9.0f} {r['peak_waiting']:>9.0f} {r['preemptions']:>11.1f} {r['steps']:>6.0f} "
              f"{r['equal']:>5}/{r['requests']:<5} {r['blocks_used_after']:>17.0f}")


def sharing(bench: Bench, count: int) -> None:
    print(f"\n2. prefix sharing (64 blocks, same workload; median of {count} rounds)")
    print(f"{'sharing':>7} {'prefix blocks from cache':>25} {'prompt tokens computed':>23} {'TTFT p50':>9} "
          f"{'TTFT p95':>9} {'equal alone':>11}")
    share_on = float("nan")
    cases = [(f"sharing {on}", PagedSettings(prefix_sharing=on), WORKLOAD) for on in (False, True)]
    for on, r in zip((False, True), bench.rounds(cases, count), strict=True):
        ratio = r["prefix_from_cache"] / r["prefix_possible"]
        share = f"{r['prefix_from_cache']:.0f}/{r['prefix_possible']:.0f} ({ratio:.0%})"
        print(f"{'on' if on else 'off':>7} {share:>25} {r['prompt_tokens_computed']:>10.0f} of {r['prompt_tokens']:<10.0f} "
              f"{r['ttft_p50_ms']:>7.0f}ms {r['ttft_p95_ms']:>7.0f}ms {r['equal']:>5}/{r['requests']:<5}")
        if on:
            share_on = ratio
    verdict = "met" if share_on >= SHARE_GOAL else "NOT met"
    print(f"goal: sharing on serves >= {SHARE_GOAL:.0%} of the shared prefix's blocks from the cache: {verdict} "
          f"({share_on:.0%})")


def long_prompt(bench: Bench, count: int, step_ms: float, part: str) -> None:
    pacing = f"steps of at least {step_ms:g} ms" if step_ms else "no pacing: a step lasts what its compute takes"
    print(f"\n{part}. a {LONG_PROMPT}-token prompt arriving at {LONG_AT_MS:g} ms among the {WORKLOAD.requests} generations "
          f"(128 blocks, {pacing}; median of {count} rounds): the running requests' time between tokens")
    print(f"{'case':<34} {'TBT p50':>8} {'TBT p99':>8} {'steps':>6} {'equal alone':>11}")
    cases = [("no long prompt (budget 1024)", BUDGET_WHOLE, 0), ("no long prompt (budget 64)", BUDGET_CHUNKED, 0),
             (f"long prompt, budget {BUDGET_WHOLE} (whole)", BUDGET_WHOLE, LONG_PROMPT),
             (f"long prompt, budget {BUDGET_CHUNKED} (chunked)", BUDGET_CHUNKED, LONG_PROMPT)]
    p99: dict[tuple[int, int], float] = {}
    runs = [(label, PagedSettings(num_blocks=128, max_batch_tokens=budget, step_ms=step_ms),
             replace(WORKLOAD, long_prompt_tokens=tokens, long_at_ms=LONG_AT_MS)) for label, budget, tokens in cases]
    for (label, budget, tokens), r in zip(cases, bench.rounds(runs, count), strict=True):
        p99[(budget, tokens)] = r["others_tbt_p99_ms"]
        print(f"{label:<34} {r['others_tbt_p50_ms']:>6.1f}ms {r['others_tbt_p99_ms']:>6.1f}ms {r['steps']:>6.0f} "
              f"{r['equal']:>5}/{r['requests']:<5}")
    for budget, name in ((BUDGET_CHUNKED, "chunked"), (BUDGET_WHOLE, "whole")):
        ratio = p99[(budget, LONG_PROMPT)] / p99[(budget, 0)]
        goal = f"; goal <= {TBT_GOAL:g}x: {'met' if ratio <= TBT_GOAL else 'NOT met'}" if name == "chunked" else ""
        print(f"{name} prefill: p99 with the long prompt / p99 without = {ratio:.2f}x{goal}")


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--rounds", type=int, default=3, help="runs per set-up after one warm-up")
    parser.add_argument("--long-rounds", type=int, default=5,
                        help="runs per set-up for the long prompt, whose p99 needs more than the rest")
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args()
    global WORKLOAD
    WORKLOAD = replace(WORKLOAD, seed=args.seed)
    print_builds()
    server = LabServer().start()
    try:
        bench = Bench(server)
        blocks(bench, args.rounds)
        sharing(bench, args.rounds)
        long_prompt(bench, args.long_rounds, step_ms=10.0, part="3a")
        long_prompt(bench, args.long_rounds, step_ms=0.0, part="3b")
    finally:
        server.stop()
    print()
    if bench.unequal:
        print("streams that differ from their alone runs:\n  " + "\n  ".join(bench.unequal))
    else:
        print("goal: every stream equal to its alone run, in every run of every set-up: met")


if __name__ == "__main__":
    main()
