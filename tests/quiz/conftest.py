"""Shared fixtures for the quiz engine tests: the fixture bank/lessons, a fake clock, and the class
database on both engines (an SQLite file, and a fresh database on the suite's real PostgreSQL)."""
from __future__ import annotations

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
