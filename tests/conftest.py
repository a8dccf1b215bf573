"""Shared fixtures: one real Triton for the whole test session, never a mock.

Set TRITON_URL (and TRITON_TRACE_DIR, TRITON_METRICS_URL) to run the suite against a
server you started yourself; otherwise the embedded server is launched here and stopped
at the end.
"""
from __future__ import annotations

import os

import pytest

from app.lab import exercises
from app.lab.deployment import deployments
from app.lab.deployment.deployer import Deployer
from app.lab.server.connection import LabServer
from tests.postgres import postgres_server, postgres_url  # noqa: F401  (fixtures for every test folder)


@pytest.fixture(scope="session", autouse=True)
def _private_data_dir(tmp_path_factory):
    # Learner progress written by tests must never land in a real user's data folder.
    os.environ["TRITON_LAB_DATA"] = str(tmp_path_factory.mktemp("lab-data"))


@pytest.fixture(scope="session")
def lab_server():
    server = LabServer.from_env(preload=deployments.SHIPPED).start()
    yield server
    server.stop()


@pytest.fixture(scope="session")
def deployer(lab_server):
    return Deployer(lab_server)


@pytest.fixture()
def server_env(lab_server, monkeypatch):
    """Point code that builds its own LabServer (pages, CLI) at the session's server."""
    for key, value in lab_server.environment().items():
        monkeypatch.setenv(key, value)
    return lab_server.environment()


class ExerciseResults:
    """exercise_result(name): one real run of the exercise per test session, for every test that
    reads a result (the exercise's own tests, the page, the CLI's printing, the language tests).

    No retries: a learner runs an exercise once, so the tests pin the outcome of one run, and
    benchmarks/outcome_reliability.py measures how often one run shows it."""

    def __init__(self, server, deployer):
        self.server, self.deployer = server, deployer
        self._cache: dict = {}

    def __call__(self, name: str):
        if name not in self._cache:
            self._cache[name] = exercises.run(name, self.server, self.deployer)
        return self._cache[name]

    def keep(self, name: str, result) -> None:
        """A real run a test made anyway (the page test that presses Run): later readers reuse it."""
        self._cache.setdefault(name, result)


@pytest.fixture(scope="session")
def exercise_result(lab_server, deployer) -> ExerciseResults:
    return ExerciseResults(lab_server, deployer)
