"""What each model instance costs: private (USS) and resident (RSS) memory of every shipped
deployment's Python-backend stubs, idle right after its load and again after a run on it.

Every instance is a stub process of its own, so its imports are paid once per instance. Private
memory is what a stub gives back when it ends (what the lab's memory budget adds up); resident
also counts the shared libraries every stub maps once. Prints the torch build first (README's
install pulls torch's CUDA build, CI's test venv the CPU one), then one row per deployment and a
check of the goal: a CPU recogniser instance at most GOAL_RECOGNISER_MB private.

    python benchmarks/stub_memory.py
"""
from __future__ import annotations

import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from app.generation.engine import Workload  # noqa: E402
from app.generation.engine import run as generate  # noqa: E402
from app.lab.deployment import GENERATOR_DEPLOYMENTS, Deployer, deployments  # noqa: E402
from app.lab.scenario.scenario import Scenario, random_texts  # noqa: E402
from app.lab.server import LabServer, memory  # noqa: E402
from app.live.sentiment import engine as sentiment  # noqa: E402
from app.recogniser.engine import driver  # noqa: E402
from benchmarks._common import print_build  # noqa: E402

SETTLE_S = 2.0  # stubs finish starting after the load returns
GOAL_RECOGNISER_MB = 60.0


def stubs(server: LabServer, name: str) -> list[memory.ProcessMemory]:
    assert server.embedded is not None and server.embedded.pid is not None
    return [p for p in memory.processes(server.embedded.pid, [name]) if p.model == name]


def exercise(server: LabServer, name: str) -> None:
    """One ordinary run on the deployment, as a learner's would be."""
    if name in deployments.RECOGNISER_DEPLOYMENTS:
        driver.run(server, Scenario(name, random_texts(8, 30, seed=2)))
    elif name in GENERATOR_DEPLOYMENTS:
        generate(server, name, Workload(requests=8, seed=0))
    else:
        with server.client() as client:
            for text in ("great product and friendly staff", "terrible service and slow refund") * 16:
                sentiment.classify(client, name, text)


def row(name: str, idle: list[memory.ProcessMemory], after: list[memory.ProcessMemory]) -> str:
    def per(found: list[memory.ProcessMemory], field: str) -> float:
        return max((getattr(p, field) for p in found), default=0.0)
    return (f"{name:<22} {len(idle):>9} {per(idle, 'private_mb'):>12.0f} {per(idle, 'resident_mb'):>13.0f} "
            f"{per(after, 'private_mb'):>13.0f} {per(after, 'resident_mb'):>14.0f} "
            f"{sum(p.private_mb for p in after):>14.0f}")


def main() -> None:
    print_build()
    names = [*deployments.SHIPPED, *GENERATOR_DEPLOYMENTS]
    server = LabServer().start()
    recogniser_mb = 0.0
    try:
        assert server.embedded is not None and server.embedded.pid is not None
        print(f"{'deployment':<22} {'instances':>9} {'private MB':>12} {'resident MB':>13} "
              f"{'private, run':>13} {'resident, run':>14} {'all, private':>14}")
        print(f"{'':<22} {'':>9} {'(per instance, idle)':>26} {'(per instance, after a run)':>28} {'(after a run)':>14}")
        deployer = Deployer(server)
        for name in names:
            deployer.ensure(name)
            time.sleep(SETTLE_S)
            idle = stubs(server, name)
            exercise(server, name)
            after = stubs(server, name)
            print(row(name, idle, after), flush=True)
            if name in deployments.RECOGNISER_DEPLOYMENTS:
                recogniser_mb = max([recogniser_mb, *(p.private_mb for p in after)])
            server.models.unload(name)  # one deployment at a time: each row is its own
        server_only = [p for p in memory.processes(server.embedded.pid) if p.model is None]
        print(f"tritonserver and its guardian, private: {sum(p.private_mb for p in server_only):.0f} MB")
    finally:
        server.stop()
    verdict = "met" if recogniser_mb <= GOAL_RECOGNISER_MB else "NOT met"
    print(f"goal, a CPU recogniser instance at most {GOAL_RECOGNISER_MB:.0f} MB private: {recogniser_mb:.0f} MB, {verdict}")


if __name__ == "__main__":
    main()
