"""The outcome matrix: every preset deployment run against its traffic, several times, with
the verdicts the server's answers earned. On a machine with CUDA the recogniser's instances
are KIND_GPU (see app/lab/deployment/device.py), so this is also the GPU check.

Each run is judged as outcome_reliability.py judges it (the preset's specific evidence, read
from the model's STATE_OWNER). The script exits 1 when any run of any preset does not show
what the matrix teaches, or when the instances are not of the kind the lab chose, so a GPU
check that silently ran on the CPU, or a matrix that no longer holds, fails.

    python benchmarks/outcome_matrix.py [--repeats 3] [--url HOST:PORT]
"""
from __future__ import annotations

import argparse
import os
import sys
import time
from collections import Counter
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from app.lab.deployment import Deployer  # noqa: E402
from app.lab.server import LabServer  # noqa: E402
from app.recogniser.engine import presets
from benchmarks._common import torch_build  # noqa: E402
from benchmarks.outcome_reliability import last_words, preset_outcome, responsive, taught_outcome  # noqa: E402


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--url", default=None)
    args = parser.parse_args()
    started = time.perf_counter()
    server = LabServer(url=args.url).start()
    failures = []
    try:
        status = server.status()
        lab_kind = status["instance_kind"]
        kinds = {m["name"]: m["kind"] for m in status["models"]}
        print(f"{torch_build()}; {os.cpu_count()} cores; Triton {status['version']} ({status['mode']}), ready in "
              f"{time.perf_counter() - started:.1f} s; lab instance kind {lab_kind}; shipped kinds {kinds}")
        deployer = Deployer(server)
        print(f"{'preset':14} {'taught':9} {'runs as taught':>14}  outcomes; verdicts over all runs")
        for name in presets.PRESETS:
            taught = taught_outcome(name)
            outcomes, counts, held, applied = Counter(), Counter(), 0, None
            for _ in range(args.repeats):
                try:
                    applied, result = presets.run_preset(server, deployer, name)
                except Exception as err:  # a failed run fails the matrix; the others still run
                    outcomes[f"failed: {type(err).__name__}: {err}"] += 1
                    continue
                outcome = preset_outcome(result)
                outcomes[outcome] += 1
                counts.update(result.sessions["verdict"])
                held += outcome == taught
            model = applied.model if applied else "not deployed"
            try:
                kind = server.client().get_model_config(model)["instance_group"][0]["kind"] if applied else "none"
            except Exception as err:
                kind, applied = f"unknown ({type(err).__name__})", None
                failures.append(f"{name}: could not read {model}'s config: {err}")
            if not responsive(server):
                failures.append(f"{name}: the server stopped answering ({last_words(server)}); restarting it")
                server.restart()
                deployer.forget()
            print(f"{name:14} {taught:9} {held:>7}/{args.repeats:<6}  {dict(outcomes)}; {dict(counts)}  "
                  f"({model}, {kind})", flush=True)
            if held < args.repeats:
                failures.append(f"{name}: {held}/{args.repeats} runs showed {taught!r}: {dict(outcomes)}")
            if applied and kind != lab_kind:
                failures.append(f"{name}: {applied.model} runs {kind}, but the lab chose {lab_kind}")
    finally:
        server.stop()
    for line in failures:
        print(f"MATRIX DOES NOT HOLD: {line}")
    print("matrix holds" if not failures else f"{len(failures)} problem(s)")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
