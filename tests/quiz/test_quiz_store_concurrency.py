"""Many writers on one progress file: no lost writes, no 'database is locked'."""
from __future__ import annotations

import multiprocessing
import threading
from pathlib import Path

import pytest
import sqlalchemy as sa

from app.lab.database import sqlite_url
from app.quiz.bank import Item, Option
from app.quiz.store import ProgressStore

ITEMS = [
    Item(
        id=f"q{n}", topic="mechanics", type="single", prompt=f"Question {n}?", lesson="x#y",
        options=(Option(0, "right", True, "because"), Option(1, "wrong", False, "because not")),
    )
    for n in range(20)
]


def _write_answers(store: ProgressStore, learner: str) -> int:
    attempt = store.start_attempt(learner, seed=len(learner))
    for n, item in enumerate(ITEMS):
        store.record_answer(attempt, item, n % 2)
    return attempt


def _count(where: Path | str, sql: str) -> int:
    """Counted by a connection of the test's own, not the store's."""
    url = where if isinstance(where, str) else sqlite_url(where)
    engine = sa.create_engine(url)
    try:
        with engine.connect() as conn:
            return int(conn.execute(sa.text(sql)).scalar_one())
    finally:
        engine.dispose()


def test_eight_threads_twenty_answers_each(database):
    store = ProgressStore(database)  # one instance shared, as Streamlit sessions would
    errors: list[BaseException] = []
    barrier = threading.Barrier(8)

    def worker(n: int) -> None:
        try:
            barrier.wait()
            _write_answers(store, f"thread-{n}")
        except BaseException as exc:  # surfaced below; a thread's exception is otherwise lost
            errors.append(exc)

    threads = [threading.Thread(target=worker, args=(n,)) for n in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert errors == []
    assert _count(database, "SELECT COUNT(*) FROM answers") == 160
    assert _count(database, "SELECT COUNT(*) FROM attempts") == 8
    for attempt in store.attempts("thread-3"):
        assert store.summary(attempt.id, ITEMS).score == 10


def test_racing_double_submit_grades_once(database):
    store = ProgressStore(database)
    attempt = store.start_attempt("ada", seed=1)
    barrier = threading.Barrier(8)
    grades = []

    def submit(key: int) -> None:
        barrier.wait()
        grades.append(store.record_answer(attempt, ITEMS[0], key))

    threads = [threading.Thread(target=submit, args=(n % 2,)) for n in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert len(grades) == 8 and len(set(grades)) == 1  # every caller sees the single stored grade
    assert len(store.answers(attempt)) == 1


def _process_writer(path: str, name: str, start: multiprocessing.synchronize.Event) -> None:
    start.wait()
    store = ProgressStore(Path(path))  # each process creates/opens the file itself
    for round_ in range(2):
        _write_answers(store, f"{name}-{round_}")


@pytest.mark.server  # other processes of the app
def test_two_processes_write_one_file(tmp_path, spawn):
    path = tmp_path / "progress.sqlite3"  # not created yet: the processes race to create it
    ctx = spawn
    start = ctx.Event()
    procs = [ctx.Process(target=_process_writer, args=(str(path), f"proc-{n}", start)) for n in range(2)]
    for p in procs:
        p.start()
    start.set()
    for p in procs:
        p.join(timeout=120)
    assert [p.exitcode for p in procs] == [0, 0]
    assert _count(path, "SELECT COUNT(*) FROM answers") == 2 * 2 * 20
    assert _count(path, "SELECT COUNT(DISTINCT attempt_id) FROM answers") == 4
