"""Shared fixtures for the quiz engine tests: the fixture bank/lessons, a fake clock, and the class
database on both engines (an SQLite file, and a fresh database on the suite's real PostgreSQL)."""
from __future__ import annotations

import multiprocessing
import sys
import types
from datetime import datetime, timedelta, timezone
from pathlib import Path

import pytest

from app.content.lessons import Lesson, load_lessons
from app.lab.database import sqlite_url
from app.quiz.bank import Bank, load_bank
from app.quiz.store import ProgressStore

FIXTURES = Path(__file__).parent / "fixtures"


class FakeClock:
    """A clock the test moves by hand, so time limits are tested without sleeping."""

    def __init__(self) -> None:
        self.now = datetime(2025, 1, 1, 12, 0, tzinfo=timezone.utc)

    def __call__(self) -> datetime:
        return self.now

    def advance(self, seconds: float) -> None:
        self.now += timedelta(seconds=seconds)


@pytest.fixture
def fixture_lessons() -> list[Lesson]:
    return load_lessons(FIXTURES / "lessons")


@pytest.fixture
def bank(fixture_lessons: list[Lesson]) -> Bank:
    return load_bank(FIXTURES / "bank.yaml", fixture_lessons)


@pytest.fixture
def clock() -> FakeClock:
    return FakeClock()


ENGINES = ("sqlite", "postgresql")


@pytest.fixture(params=[pytest.param(e, marks=[pytest.mark.server] if e == "postgresql" else []) for e in ENGINES])
def database(request, tmp_path: Path) -> str:
    """A URL of an empty class database: every store test runs on both engines the app supports."""
    if request.param == "sqlite":
        return sqlite_url(tmp_path / "progress.sqlite3")
    return request.getfixturevalue("postgres_url")


@pytest.fixture
def store(database: str, clock: FakeClock) -> ProgressStore:
    return ProgressStore(database, clock=clock)


@pytest.fixture()
def spawn(monkeypatch) -> multiprocessing.context.SpawnContext:
    """multiprocessing's spawn context (no fork of a threaded pytest process), for processes of the
    app that each run a function of the test's module.

    A spawned child first runs its parent's __main__ again. In a test process that has run an
    AppTest, __main__ is the last page script Streamlit ran (its script runner installs each page
    as __main__), so every child would import the whole app and run that page before its function.
    The children get a bare __main__ instead and import only the test module they unpickle."""
    monkeypatch.setitem(sys.modules, "__main__", types.ModuleType("__main__"))
    return multiprocessing.get_context("spawn")
