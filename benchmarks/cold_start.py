"""Seconds from launch to every shipped model ready, and peak memory of the server and its
Python-backend stubs during start-up and one 8-session run.

    python benchmarks/cold_start.py
"""
from __future__ import annotations

import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from app.lab import driver  # noqa: E402
from app.lab.scenario import Scenario, random_texts  # noqa: E402
from app.lab.server.connection import LabServer  # noqa: E402
from benchmarks._common import PeakMemory, torch_build  # noqa: E402


def main() -> None:
    server = LabServer()
    started = time.perf_counter()
    server.start()
    ready_s = time.perf_counter() - started
    try:
        with PeakMemory(server.embedded.pid) as peak:
            driver.run(server, Scenario("asr_sequence_direct", random_texts(8, 30, seed=2)))
            driver.run(server, Scenario("asr_dynamic", random_texts(8, 30, seed=2)))
        models = [m["name"] for m in server.status()["models"] if m["state"] == "READY"]
        print(torch_build())
        print(f"cold start: {ready_s:.1f} s from launch to {len(models)} models ready ({', '.join(models)})")
        print(f"server ready (health) after {server.embedded.ready_after_s:.1f} s; models loaded in the rest")
        print(f"peak memory of tritonserver + stubs during two 8-session runs: {peak.peak_mb:.0f} MB")
    finally:
        server.stop()


if __name__ == "__main__":
    main()
