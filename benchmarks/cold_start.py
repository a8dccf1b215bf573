"""Cold start and memory of the embedded server, as the app uses it: the server starts with
nothing loaded, and each deployment loads the first time something needs it.

Prints, after the torch build: seconds to a ready server with nothing loaded; idle memory
(tritonserver, its guardian and Python-backend stubs: RSS summed over the server's process
group); for each shipped deployment, the seconds its first use took to load it and the memory
after; memory with all loaded; and the peak during two 8-session runs.

    python benchmarks/cold_start.py
"""
from __future__ import annotations

import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from app.lab.deployment import Deployer, deployments  # noqa: E402
from app.lab.scenario.scenario import Scenario, random_texts  # noqa: E402
from app.lab.server import LabServer  # noqa: E402
from app.recogniser.engine import driver
from benchmarks._common import PeakMemory, group_rss_mb, print_build  # noqa: E402

SETTLE_S = 2.0  # memory is read this long after the last load, once the stubs have finished starting


def settled_rss_mb(pgid: int) -> float:
    time.sleep(SETTLE_S)
    return group_rss_mb(pgid)


def ready_models(server: LabServer) -> list[str]:
    return [m["name"] for m in server.status()["models"] if m["state"] == "READY"]


def main() -> None:
    print_build()
    server = LabServer()
    started = time.perf_counter()
    server.start()
    ready_s = time.perf_counter() - started
    try:
        pgid = server.embedded.pid
        loaded = ready_models(server)
        print(f"server ready: {ready_s:.1f} s from launch, {len(loaded)} models loaded"
              + (f" ({', '.join(loaded)})" if loaded else ""))
        print(f"idle memory (tritonserver + guardian + stubs): {settled_rss_mb(pgid):.0f} MB")
        deployer = Deployer(server)
        for name in deployments.SHIPPED:
            before = time.perf_counter()
            deployer.ensure(name)  # what a run, a lesson or an exercise does first
            load_s = time.perf_counter() - before
            print(f"first use of {name}: loaded in {load_s:.1f} s; memory then {settled_rss_mb(pgid):.0f} MB")
        loaded = ready_models(server)
        print(f"all loaded ({len(loaded)} models): {group_rss_mb(pgid):.0f} MB")
        with PeakMemory(pgid) as peak:
            driver.run(server, Scenario("asr_sequence_direct", random_texts(8, 30, seed=2)))
            driver.run(server, Scenario("asr_dynamic", random_texts(8, 30, seed=2)))
        print(f"peak memory during two 8-session runs: {peak.peak_mb:.0f} MB")
    finally:
        server.stop()


if __name__ == "__main__":
    main()
