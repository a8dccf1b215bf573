"""Live class votes for the presenter's demos, in the progress store's SQLite file.

A poll is opened for one demo and named by a short code learners type or open as a link; each
voter has one vote per poll (voting again replaces it), and votes are accepted only while the
poll is open. Every call opens its own connection (app/quiz/db.py), so Streamlit sessions on
many threads and several app processes can vote into one file at once.
"""
from __future__ import annotations

import json
import secrets
import sqlite3
from dataclasses import dataclass
from datetime import datetime, timezone
from pathlib import Path

from app.lab.paths import data_dir
from app.quiz import db
from app.quiz.store import FILE_NAME

# No 0/O, 1/I/L, 5/S or 2/Z: a code read off a projector is typed right the first time.
ALPHABET = "ABCDEFGHJKMNPQRTUVWXY346789"
CODE_LENGTH = 4
OPEN, CLOSED, REVEALED = "open", "closed", "revealed"

class PollNotFound(LookupError):
    """No poll has that code."""


class PollClosed(RuntimeError):
    """The poll no longer takes votes (the run was shown, or the presenter closed it)."""


@dataclass(frozen=True)
class Poll:
    code: str
    demo: str
    state: str
    opened_at: datetime
    right: tuple[str, ...] | None  # set when revealed

    @property
    def is_open(self) -> bool:
        return self.state == OPEN


def normalise_code(text: str | None) -> str:
    """What a learner typed, as a code: upper case, spaces and dashes dropped."""
    return "".join(c for c in (text or "").upper() if c.isalnum())


def _now() -> str:
    return datetime.now(timezone.utc).isoformat(timespec="microseconds")


class VoteStore:
    def __init__(self, path: Path | str | None = None) -> None:
        self.path = Path(path) if path is not None else data_dir() / FILE_NAME
        db.initialise(self.path)  # the store's one schema, polls and votes included; safe to race

    def open_demo(self, demo: str, attempts: int = 50) -> str:
        """A new open poll for `demo`; returns its code."""
        for _ in range(attempts):
            code = "".join(secrets.choice(ALPHABET) for _ in range(CODE_LENGTH))
            try:
                with db.writing(self.path) as conn:
                    conn.execute("INSERT INTO demo_polls (code, demo, state, opened_at) VALUES (?, ?, ?, ?)",
                                 (code, demo, OPEN, _now()))
                return code
            except sqlite3.IntegrityError:
                continue  # that code is taken: draw another
        raise RuntimeError("no free poll code")  # 27**4 codes: only a full table gets here

    def poll(self, code: str) -> Poll:
        with db.reading(self.path) as conn:
            row = conn.execute("SELECT * FROM demo_polls WHERE code = ?", (normalise_code(code),)).fetchone()
        if row is None:
            raise PollNotFound(code)
        right = tuple(json.loads(row["right_json"])) if row["right_json"] else None
        return Poll(row["code"], row["demo"], row["state"], datetime.fromisoformat(row["opened_at"]), right)

    def vote(self, code: str, voter: str, option: str) -> None:
        """Record voter's choice (replacing an earlier one); PollClosed once the poll stopped."""
        code = normalise_code(code)
        with db.writing(self.path) as conn:
            row = conn.execute("SELECT state FROM demo_polls WHERE code = ?", (code,)).fetchone()
            if row is None:
                raise PollNotFound(code)
            if row["state"] != OPEN:
                raise PollClosed(code)
            conn.execute(
                "INSERT INTO demo_votes (code, voter, option, at) VALUES (?, ?, ?, ?) "
                "ON CONFLICT (code, voter) DO UPDATE SET option = excluded.option, at = excluded.at",
                (code, voter, option, _now()),
            )

    def my_vote(self, code: str, voter: str) -> str | None:
        with db.reading(self.path) as conn:
            row = conn.execute("SELECT option FROM demo_votes WHERE code = ? AND voter = ?",
                               (normalise_code(code), voter)).fetchone()
        return row["option"] if row else None

    def tally(self, code: str) -> dict[str, int]:
        """Votes per option (options nobody chose are absent)."""
        with db.reading(self.path) as conn:
            rows = conn.execute("SELECT option, COUNT(*) AS n FROM demo_votes WHERE code = ? GROUP BY option",
                                (normalise_code(code),)).fetchall()
        return {row["option"]: int(row["n"]) for row in rows}

    def close(self, code: str) -> Poll:
        """Stop taking votes (idempotent; a revealed poll stays revealed)."""
        with db.writing(self.path) as conn:
            conn.execute("UPDATE demo_polls SET state = ?, closed_at = ? WHERE code = ? AND state = ?",
                         (CLOSED, _now(), normalise_code(code), OPEN))
        return self.poll(code)

    def reveal(self, code: str, right: tuple[str, ...] | list[str]) -> Poll:
        """Close the poll and record which options the run showed to be right."""
        now = _now()
        with db.writing(self.path) as conn:
            conn.execute("UPDATE demo_polls SET state = ?, closed_at = COALESCE(closed_at, ?), revealed_at = ?, "
                         "right_json = ? WHERE code = ?", (REVEALED, now, now, json.dumps(list(right)), normalise_code(code)))
        return self.poll(code)


def store(path: Path | str | None = None) -> VoteStore:
    """The votes in the default progress file (or `path`): what the presenter and learner pages use."""
    return VoteStore(path)
