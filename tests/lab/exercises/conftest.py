"""Helpers for the exercise tests: each exercise runs ONCE per test session on the real server.

No retries: a learner runs an exercise once, so the tests pin the outcome of one run, and
benchmarks/outcome_reliability.py measures how often one run shows it.
"""
from __future__ import annotations

from pathlib import Path

import pytest
from streamlit.testing.v1 import AppTest

from app.lab import exercises

PAGE = Path(__file__).resolve().parents[3] / "app" / "views" / "exercises.py"
TIMEOUT_S = 180


@pytest.fixture(scope="session")
def exercise_result(lab_server, deployer):
    """One run per registered exercise per test session, shared by tests that only read a result."""
    cache = {}

    def _result(name: str):
        if name not in cache:
            cache[name] = exercises.run(name, lab_server, deployer)
        return cache[name]

    return _result


@pytest.fixture()
def page(server_env, tmp_path, monkeypatch):
    """The exercises page in AppTest, with a private progress store, on the session's server."""
    monkeypatch.setenv("TRITON_LAB_DATA", str(tmp_path / "lab-data"))
    at = AppTest.from_file(str(PAGE), default_timeout=TIMEOUT_S).run(timeout=TIMEOUT_S)
    assert not at.exception, [e.value for e in at.exception]
    return at


def predict_and_run(at, name: str, choice: str) -> AppTest:
    at.selectbox(key="exercise-name").set_value(name).run()
    at.radio(key=f"exercise-{name}-prediction").set_value(choice).run()
    at.button(key=f"exercise-{name}-run").click().run(timeout=TIMEOUT_S)
    assert not at.exception, [e.value for e in at.exception]
    return at
