"""A class on the paged engine: N learners press Run at once on the same engine deployment.

Each learner runs a seeded workload of its own (PagedWorkload(seed=i)) through the call the lab
makes (app.generation.paged.engine.run). Runs on one deployment take turns through the run queue,
so each learner's trace holds its own requests only; the script proves it from the engine's own
outputs (every engine step a learner's tokens came from lists only that learner's TAGs) and
prints, per learner, the place it was told while waiting, how long it waited, its run's time and
its figures, then the class's p50 / p95 time to result, and the server's peak resident memory.

    python benchmarks/kv_class.py [--learners 10]
"""
from __future__ import annotations

import argparse
import sys
import threading
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import numpy as np  # noqa: E402

from app.generation.paged.engine import PagedSettings, PagedWorkload, analysis, run  # noqa: E402
from app.lab.server.connection import LabServer  # noqa: E402
from benchmarks._common import group_rss_mb, print_build  # noqa: E402


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--learners", type=int, default=10)
    args = parser.parse_args()
    print_build()
    import transformers
    print(f"transformers {transformers.__version__}")
    settings = PagedSettings()
    server = LabServer().start()
    peak = [0.0]
    stop = threading.Event()

    def sample() -> None:
        while not stop.wait(0.2):
            peak[0] = max(peak[0], group_rss_mb(server.embedded.process.pid))

    sampler = threading.Thread(target=sample, daemon=True)
    sampler.start()
    try:
        run(server, settings, PagedWorkload(requests=1))  # loaded and warm, as after the first learner
        results: dict[int, dict] = {}
        barrier = threading.Barrier(args.learners)

        def learner(i: int) -> None:
            waits: list[int] = []
            barrier.wait()
            pressed = time.perf_counter()
            began: list[float] = []

            def on_wait(wait) -> None:
                waits.append(wait.position)
            try:
                result = run(server, settings, PagedWorkload(seed=i), on_wait=on_wait)
            except Exception as err:  # reported, never raised
                results[i] = {"error": f"{type(err).__name__}: {err}"}
                return
            done = time.perf_counter() - pressed
            began.append(done - result.stream.wall_s)
            trace = result.stream.trace
            own = {p.tag for p in result.stream.plans}
            tokens = analysis.token_rows(trace)
            foreign = {t for tags in tokens["step_tags"] for t in tags} - own
            requests = analysis.requests_table(trace, result.stream.plans)
            figures = analysis.figures(trace, requests, 32, settings.block_size)
            results[i] = {"to_result_s": done, "run_s": result.stream.wall_s, "places": waits,
                          "foreign_tags": len(foreign), "complete": figures.complete, "requests": figures.requests,
                          "ttft_p50_ms": figures.ttft_p50_ms, "blocks_used_after": result.gauges_after.get("kv_blocks_used")}

        threads = [threading.Thread(target=learner, args=(i,)) for i in range(args.learners)]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        if any("error" in r for r in results.values()):
            print("server log, last lines:\n" + server.embedded.log_tail(40))
    finally:
        stop.set()
        sampler.join()
        server.stop()
    print(f"{'learner':>7} {'to result s':>11} {'run s':>6} {'places told':>20} {'foreign tags':>12} "
          f"{'complete':>8} {'TTFT p50 ms':>11} {'blocks used after':>17}")
    for i in sorted(results):
        r = results[i]
        if "error" in r:
            print(f"{i:>7} {r['error']}")
            continue
        places = ",".join(str(p) for p in sorted(set(r["places"]), reverse=True)) or "-"
        print(f"{i:>7} {r['to_result_s']:>11.2f} {r['run_s']:>6.2f} {places:>20} {r['foreign_tags']:>12} "
              f"{r['complete']:>4}/{r['requests']:<3} {r['ttft_p50_ms']:>11.0f} {r['blocks_used_after']!s:>17}")
    times = [r["to_result_s"] for r in results.values() if "error" not in r]
    errors = sum("error" in r for r in results.values())
    print(f"{args.learners} learners: time to result p50 {np.percentile(times, 50):.2f} s, "
          f"p95 {np.percentile(times, 95):.2f} s; failures {errors}; "
          f"runs with another learner's requests in their steps: "
          f"{sum(r.get('foreign_tags', 0) > 0 for r in results.values())}; "
          f"server peak resident memory {peak[0]:.0f} MB")


if __name__ == "__main__":
    main()
