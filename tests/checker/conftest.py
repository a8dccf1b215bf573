"""The zoo on the session's real server: models loaded (in parallel) for one test module and
unloaded when it is done, and each model checked once per module, its result cached."""
from __future__ import annotations

import contextlib
import json
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest

from app.checker.engine import CheckOptions, run
from app.checker.engine import target as targets
from app.lab.deployment import deployments
from tests.server_calls import ask
from tests.waiting import wait_for

ZOO = Path(__file__).parent / "zoo"
# The abandon round's checks: their witness needs a later session on the reaped slot, so a sound
# model's whole-check tests accept them held or not exercised, never broken.
ABANDON_ROUND = ("abandoned/", "cancelled/")
REVIEW_CONFIGS = Path(__file__).parent / "review_configs"  # configs the offline review reads; never loaded
UNLOAD_WAIT_S = 60.0
TEST_STEPS = 6  # short sessions keep the suite quick; every check still has steps to compare


def zoo_files(name: str) -> dict[str, bytes]:
    return targets.repository_files(ZOO / name)


def load_zoo(server, names) -> None:
    """Load zoo models on `server` under their own names, with their files, all at once."""
    def load(name: str) -> None:
        config = deployments.place_instances(deployments.read_config(name, ZOO))
        ask(server, "load_model", name, config=deployments.to_json(config), files=zoo_files(name), timeout_s=300)

    with ThreadPoolExecutor(max_workers=len(names) or 1) as pool:
        for future in [pool.submit(load, n) for n in names]:
            future.result()


def unload(server, names) -> None:
    """Unload and wait until the server serves none of them (a finalizer's job)."""
    with server.client(timeout_s=60) as client:
        for name in names:
            with contextlib.suppress(Exception):  # never loaded (its load failed): nothing to unload
                client.unload_model(name)
        wait_for(lambda: not any(ready(server, n) for n in names), f"the server to serve none of {', '.join(names)}", UNLOAD_WAIT_S)


def ready(server, name: str) -> bool:
    try:
        return bool(ask(server, "is_model_ready", name, timeout_s=10))
    except Exception:
        return False


def check_copies_gone(server) -> list[str]:
    """Names of one-instance copies the server still serves (there must be none)."""
    index = ask(server, "get_model_repository_index", timeout_s=10)
    return [e["name"] for e in index if targets.COPY_SUFFIX in e["name"] and e.get("state") == "READY"]


class Zoo:
    """Checks of the module's zoo models, each run once and kept."""

    def __init__(self, server):
        self.server = server
        self.results: dict = {}

    def check(self, name: str, key: str = "", files: bool = True, **options):
        if (name, key) not in self.results:
            target = targets.on_server(self.server, name, files=zoo_files(name) if files else None)
            self.results[(name, key)] = run.run_check(target, CheckOptions(steps=options.pop("steps", TEST_STEPS), **options))
        return self.results[(name, key)]


def zoo_fixture(*names: str):
    """A module-scoped fixture: `names` loaded on the session's server for the module."""
    @pytest.fixture(scope="module")
    def fixture(lab_server):
        load_zoo(lab_server, names)
        try:
            yield Zoo(lab_server)
        finally:
            unload(lab_server, names)
    return fixture


def verdicts(result) -> dict[str, str]:
    return {v.id: v.verdict for v in result.verdicts}


def read_report(path: Path) -> dict:
    """A report the CLI wrote; a check's (kind "check") validated against the package's JSON Schema,
    every judged verdict with its witness."""
    from app.checker.engine import report_schema

    data = json.loads(Path(path).read_text())
    if data.get("kind") == "check":
        report_schema.validate(data)
        # a measured check: every verdict that was judged carries the evidence that its situation happened
        unwitnessed = [f"{c['check']}/{c['variant']}" for c in data["checks"] if c["verdict"] != "skipped" and "witness" not in c["values"]]
        assert not unwitnessed, unwitnessed
    return data


def as_json(result) -> dict:
    from app.checker.engine.reports import report

    return json.loads(report.dumps(result))
