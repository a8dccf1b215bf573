"""Helpers for the exercise tests: each exercise runs ONCE per test session on the real server.

No retries: a learner runs an exercise once, so the tests pin the outcome of one run, and
benchmarks/outcome_reliability.py measures how often one run shows it.
"""
from __future__ import annotations

import pytest

from app.lab import exercises


@pytest.fixture(scope="session")
def exercise_result(lab_server, deployer):
    """One run per registered exercise per test session, shared by tests that only read a result."""
    cache = {}

    def _result(name: str):
        if name not in cache:
            cache[name] = exercises.run(name, lab_server, deployer)
        return cache[name]

    return _result
