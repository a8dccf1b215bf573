"""The outcome matrix: every preset deployment run against its traffic, several times, with
the verdicts the server's answers earned. On a machine with CUDA the recogniser's instances
are KIND_GPU (see app/lab/device.py), so this is also the GPU check.

    python benchmarks/outcome_matrix.py [--repeats 3] [--url HOST:PORT]
"""
from __future__ import annotations

import argparse
import sys
import time
from collections import Counter
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from app.lab import presets  # noqa: E402
from app.lab.deployer import Deployer  # noqa: E402
from app.lab.server.connection import LabServer  # noqa: E402


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--url", default=None)
    args = parser.parse_args()
    started = time.perf_counter()
    server = LabServer(url=args.url).start()
    try:
        status = server.status()
        kinds = {m["name"]: m["kind"] for m in status["models"]}
        print(f"Triton {status['version']} ({status['mode']}), ready in {time.perf_counter() - started:.1f} s; "
              f"lab instance kind {status['instance_kind']}; shipped kinds {kinds}")
        deployer = Deployer(server)
        print(f"{'preset':14} {'expect':9} {'runs as expected':>16}  verdicts over all runs")
        for name, preset in presets.PRESETS.items():
            counts, as_expected = Counter(), 0
            for _ in range(args.repeats):
                applied, result = presets.run_preset(server, deployer, name, owner="matrix")
                counts.update(result.sessions["verdict"])
                as_expected += ("intact" if result.all_intact else "corrupted") == preset.expect
            kind = server.client().get_model_config(applied.model)["instance_group"][0]["kind"]
            print(f"{name:14} {preset.expect:9} {as_expected:>9}/{args.repeats:<6}  {dict(counts)}  ({applied.model}, {kind})", flush=True)
    finally:
        server.stop()


if __name__ == "__main__":
    main()
