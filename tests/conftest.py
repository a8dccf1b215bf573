"""Shared fixtures: one real Triton for the whole test session, never a mock.

Set TRITON_URL (and TRITON_TRACE_DIR, TRITON_METRICS_URL) to run the suite against a
server you started yourself; otherwise the embedded server is launched here and stopped
at the end.
"""
from __future__ import annotations

import os

import pytest

from app.lab.deployment import deployments
from app.lab.deployment.deployer import Deployer
from app.lab.server.connection import LabServer


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
