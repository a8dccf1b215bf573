"""Class votes: codes, one vote per voter, closing, and many writers on one class database (both
engines: an SQLite file and a real PostgreSQL; the processes racing to create a file are SQLite's own case)."""
from __future__ import annotations

import sqlite3
import threading
from contextlib import closing
from pathlib import Path

import pytest

from app.quiz import votes
from app.quiz.store import ProgressStore
from app.quiz.votes import ALPHABET, PollClosed, PollNotFound, VoteStore


def test_codes_are_short_unambiguous_and_distinct(database):
    store = VoteStore(database)
    codes = [store.open_demo("state_key") for _ in range(200)]
    assert len(set(codes)) == 200
    for code in codes:
        assert 4 <= len(code) <= 6 and set(code) <= set(ALPHABET)
    assert not set("0O1IL") & set(ALPHABET)
    assert store.poll(codes[0]).demo == "state_key" and store.poll(codes[0]).is_open


def test_last_vote_counts_and_codes_are_forgiving(database):
    store = VoteStore(database)
    code = store.open_demo("ready")
    store.vote(code, "ada", "intact")
    store.vote(code, "ada", "garbage")  # changed her mind
    store.vote(code.lower(), "bob", "foreign")  # typed in lower case
    store.vote(" " + code[:2] + "-" + code[2:], "cy", "garbage")
    assert store.tally(code) == {"garbage": 2, "foreign": 1}
    assert store.my_vote(code, "ada") == "garbage" and store.my_vote(code, "zed") is None
    other = store.open_demo("ready")
    assert store.tally(other) == {}


def test_closed_and_revealed_polls_refuse_votes(database):
    store = VoteStore(database)
    code = store.open_demo("scheduler")
    store.vote(code, "ada", "foreign")
    assert store.close(code).state == votes.CLOSED
    with pytest.raises(PollClosed):
        store.vote(code, "bob", "intact")
    poll = store.reveal(code, ["foreign"])
    assert poll.state == votes.REVEALED and poll.right == ("foreign",)
    assert store.close(code).state == votes.REVEALED  # closing again does not undo the reveal
    with pytest.raises(PollNotFound):
        store.vote("ZZZZ", "ada", "intact")
    with pytest.raises(PollNotFound):
        store.poll("ZZZZ")
    assert store.tally(code) == {"foreign": 1}


def test_votes_live_beside_the_progress_tables(tmp_path):
    path = tmp_path / "progress.sqlite3"
    progress = ProgressStore(path)
    attempt = progress.start_attempt("ada", seed=1)
    code = VoteStore(path).open_demo("state_key")
    VoteStore(path).vote(code, "ada", "intact")
    assert progress.attempt(attempt).learner == "ada"
    with closing(sqlite3.connect(path)) as conn:
        tables = {r[0] for r in conn.execute("SELECT name FROM sqlite_master WHERE type = 'table'")}
    assert {"attempts", "answers", "demo_polls", "demo_votes"} <= tables


def test_forty_threads_vote_at_once(database):
    store = VoteStore(database)  # shared, as Streamlit sessions share it
    code = store.open_demo("state_key")
    options = ("intact", "foreign", "garbage", "lost")
    barrier = threading.Barrier(40)
    errors: list[BaseException] = []

    def voter(n: int) -> None:
        try:
            barrier.wait()
            for round_ in range(3):  # each voter changes their mind twice; the last vote counts
                store.vote(code, f"learner-{n}", options[(n + round_) % 4])
        except BaseException as exc:
            errors.append(exc)

    threads = [threading.Thread(target=voter, args=(n,)) for n in range(40)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert errors == []
    expected: dict[str, int] = {}
    for n in range(40):
        expected[options[(n + 2) % 4]] = expected.get(options[(n + 2) % 4], 0) + 1
    assert store.tally(code) == expected and sum(expected.values()) == 40


def _process_voter(path: str, code: str, name: str, start) -> None:
    start.wait()
    store = VoteStore(Path(path))
    for n in range(10):
        store.vote(code, f"{name}-{n}", "foreign" if n % 2 else "intact")


@pytest.mark.server  # other processes of the app
def test_three_processes_vote_into_one_file(tmp_path, spawn):
    path = tmp_path / "progress.sqlite3"
    code = VoteStore(path).open_demo("scheduler")
    ctx = spawn
    start = ctx.Event()
    procs = [ctx.Process(target=_process_voter, args=(str(path), code, f"proc-{n}", start)) for n in range(3)]
    for p in procs:
        p.start()
    start.set()
    for p in procs:
        p.join(timeout=120)
    assert [p.exitcode for p in procs] == [0, 0, 0]
    assert VoteStore(path).tally(code) == {"intact": 15, "foreign": 15}


def _process_opener(path: str, out, start) -> None:
    start.wait()
    out.put([VoteStore(Path(path)).open_demo("ready") for _ in range(20)])


@pytest.mark.server  # other processes of the app
def test_processes_racing_to_create_the_file_get_distinct_codes(tmp_path, spawn):
    path = tmp_path / "fresh" / "progress.sqlite3"  # not there yet
    ctx = spawn
    start, out = ctx.Event(), ctx.Queue()
    procs = [ctx.Process(target=_process_opener, args=(str(path), out, start)) for n in range(3)]
    for p in procs:
        p.start()
    start.set()
    codes = [c for _ in procs for c in out.get(timeout=120)]
    for p in procs:
        p.join(timeout=120)
    assert [p.exitcode for p in procs] == [0, 0, 0]
    assert len(codes) == 60 == len(set(codes))
