"""Fixtures for the claims tests (helpers live in tests/claims/helpers.py)."""
from __future__ import annotations

import pytest

from tests.claims.helpers import Gate, Loader


@pytest.fixture()
def client(lab_server):
    with lab_server.client() as client:
        yield client


@pytest.fixture()
def load(lab_server):
    """load(config, code=None, versions=(1,)) -> name: a test-only model on the session's server,
    unloaded when the test ends, pass or fail (tests.claims.helpers.Loader)."""
    loader = Loader(lab_server)
    yield loader.load
    loader.unload_all()


@pytest.fixture()
def gate(tmp_path):
    """The test's side of the gate probe's barrier (tests/claims/models/gate_probe.py)."""
    folder = tmp_path / "gate"
    folder.mkdir()
    return Gate(folder)
