"""SQLite plumbing for the progress store: schema, connections, write transactions.

One short-lived connection per call keeps threads and processes independent
(a sqlite3.Connection must not be shared across threads). WAL lets readers run
during a write; BEGIN IMMEDIATE takes the write lock up front so two writers
queue on busy_timeout instead of failing with "database is locked" when a read
transaction tries to upgrade.
"""
from __future__ import annotations

import sqlite3
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

BUSY_TIMEOUT_S = 30.0
SCHEMA_VERSION = 1

SCHEMA = """
CREATE TABLE IF NOT EXISTS learners (
    name       TEXT PRIMARY KEY,
    created_at TEXT NOT NULL
);
CREATE TABLE IF NOT EXISTS attempts (
    id           INTEGER PRIMARY KEY AUTOINCREMENT,
    learner      TEXT NOT NULL REFERENCES learners(name) ON DELETE CASCADE,
    seed         INTEGER NOT NULL,
    timed        INTEGER NOT NULL DEFAULT 0,
    time_limit_s REAL,
    started_at   TEXT NOT NULL,
    finished_at  TEXT
);
CREATE INDEX IF NOT EXISTS attempts_by_learner ON attempts(learner, id);
CREATE TABLE IF NOT EXISTS answers (
    attempt_id  INTEGER NOT NULL REFERENCES attempts(id) ON DELETE CASCADE,
    item_id     TEXT NOT NULL,
    topic       TEXT NOT NULL,   -- copied from the bank so exports survive bank edits
    item_type   TEXT NOT NULL,
    answer_json TEXT NOT NULL,
    score       REAL NOT NULL,
    correct     INTEGER NOT NULL,
    detail      TEXT NOT NULL,
    answered_at TEXT NOT NULL,
    elapsed_s   REAL,
    UNIQUE (attempt_id, item_id)  -- an item is graded once per attempt
);
CREATE INDEX IF NOT EXISTS answers_by_item ON answers(item_id);
CREATE TABLE IF NOT EXISTS predictions (
    id         INTEGER PRIMARY KEY AUTOINCREMENT,
    learner    TEXT NOT NULL,
    exercise   TEXT NOT NULL,
    prediction TEXT NOT NULL,
    outcome    TEXT NOT NULL,
    held       INTEGER NOT NULL,
    at         TEXT NOT NULL
);
CREATE INDEX IF NOT EXISTS predictions_by_learner ON predictions(learner, id);
CREATE TABLE IF NOT EXISTS demo_polls (   -- the presenter's live class votes (votes.py)
    code        TEXT PRIMARY KEY,
    demo        TEXT NOT NULL,
    state       TEXT NOT NULL,
    opened_at   TEXT NOT NULL,
    closed_at   TEXT,
    revealed_at TEXT,
    right_json  TEXT            -- options the run showed to be right, set at the reveal
);
CREATE TABLE IF NOT EXISTS demo_votes (
    code   TEXT NOT NULL REFERENCES demo_polls(code) ON DELETE CASCADE,
    voter  TEXT NOT NULL,
    option TEXT NOT NULL,
    at     TEXT NOT NULL,
    PRIMARY KEY (code, voter)   -- one vote per voter per poll; the last one counts
);
"""


def connect(path: Path) -> sqlite3.Connection:
    # isolation_level=None: we issue BEGIN ourselves so the lock mode is ours to pick.
    conn = sqlite3.connect(path, timeout=BUSY_TIMEOUT_S, isolation_level=None)
    conn.row_factory = sqlite3.Row
    conn.execute(f"PRAGMA busy_timeout = {int(BUSY_TIMEOUT_S * 1000)}")
    conn.execute("PRAGMA foreign_keys = ON")
    return conn


@contextmanager
def reading(path: Path) -> Iterator[sqlite3.Connection]:
    conn = connect(path)
    try:
        yield conn
    finally:
        conn.close()


@contextmanager
def writing(path: Path) -> Iterator[sqlite3.Connection]:
    """A write transaction that holds the write lock from its first statement."""
    conn = connect(path)
    try:
        conn.execute("BEGIN IMMEDIATE")
        try:
            yield conn
        except BaseException:
            conn.execute("ROLLBACK")
            raise
        conn.execute("COMMIT")
    finally:
        conn.close()


_initialised: set[str] = set()  # files this process has set up: pages build stores on every rerun
_initialised_lock = threading.Lock()


def initialise(path: Path, attempts: int = 50) -> None:
    """Create the file, switch it to WAL and create tables; safe to race from many processes.
    Once per file and process (again if the file was removed): each run takes the write lock."""
    key = str(path.absolute())
    with _initialised_lock:
        if key in _initialised and path.exists():
            return
    _create(path, attempts)
    with _initialised_lock:
        _initialised.add(key)


def _create(path: Path, attempts: int) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    for attempt in range(attempts):
        try:
            conn = connect(path)
            try:
                # Switching journal mode needs a moment of exclusive access; a racing
                # process may get "locked" here, which the retry below absorbs.
                conn.execute("PRAGMA journal_mode = WAL")
                conn.execute("BEGIN IMMEDIATE")
                for statement in _statements(SCHEMA):
                    conn.execute(statement)
                conn.execute(f"PRAGMA user_version = {SCHEMA_VERSION}")
                conn.execute("COMMIT")
                return
            finally:
                conn.close()
        except sqlite3.OperationalError as exc:
            transient = "locked" in str(exc) or "busy" in str(exc)
            if not transient or attempt == attempts - 1:
                raise
            time.sleep(0.05 * (attempt + 1))


def _statements(script: str) -> list[str]:
    # executescript() would COMMIT our BEGIN IMMEDIATE first, so run statements one by one.
    out, buf = [], []
    for line in script.splitlines():
        buf.append(line.split("--", 1)[0])
        joined = "\n".join(buf)
        if sqlite3.complete_statement(joined):
            out.append(joined.strip())
            buf = []
    return [s for s in out if s.strip(" ;\n")]
