"""Live class votes for the presenter's demos, in the class database beside learners' progress.

A poll is opened for one demo and named by a short code learners type or open as a link; each
voter has one vote per poll (voting again replaces it), and votes are accepted only while the
poll is open. Every call is its own committed transaction (app/quiz/db.py), so Streamlit sessions
on many threads, several app processes and, on PostgreSQL, app replicas on other hosts vote into
one poll at once, and the presenter on any replica counts every vote once.
"""
from __future__ import annotations

import json
import secrets
from dataclasses import dataclass
from datetime import datetime, timezone
from pathlib import Path

import sqlalchemy as sa

from app.lab.database import schema as t
from app.lab.errors import BatchingLabError
from app.quiz import db

# No 0/O, 1/I/L, 5/S or 2/Z: a code read off a projector is typed right the first time.
ALPHABET = "ABCDEFGHJKMNPQRTUVWXY346789"
CODE_LENGTH = 4
OPEN, CLOSED, REVEALED = "open", "closed", "revealed"

class PollNotFound(BatchingLabError, LookupError):
    """No poll has that code."""


class PollClosed(BatchingLabError, RuntimeError):
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
    def __init__(self, where: Path | str | None = None) -> None:
        self.url = db.url_for(where)  # the class database, as the progress store's (nothing connects yet)

    def open_demo(self, demo: str, attempts: int = 50) -> str:
        """A new open poll for `demo`; returns its code."""
        for _ in range(attempts):
            code = "".join(secrets.choice(ALPHABET) for _ in range(CODE_LENGTH))
            try:
                with db.writing(self.url) as conn:
                    conn.execute(t.demo_polls.insert().values(code=code, demo=demo, state=OPEN, opened_at=_now()))
                return code
            except sa.exc.IntegrityError:
                continue  # that code is taken: draw another
        raise RuntimeError("no free poll code")  # 27**4 codes: only a full table gets here

    def poll(self, code: str) -> Poll:
        with db.reading(self.url) as conn:
            row = conn.execute(t.demo_polls.select().where(t.demo_polls.c.code == normalise_code(code))).first()
        if row is None:
            raise PollNotFound(code)
        right = tuple(json.loads(row.right_json)) if row.right_json else None
        return Poll(row.code, row.demo, row.state, datetime.fromisoformat(row.opened_at), right)

    def vote(self, code: str, voter: str, option: str) -> None:
        """Record voter's choice (replacing an earlier one); PollClosed once the poll stopped.
        Returns only once the vote is committed: the page's acknowledgement is never ahead of it."""
        code = normalise_code(code)
        with db.writing(self.url) as conn:
            state = conn.execute(sa.select(t.demo_polls.c.state).where(t.demo_polls.c.code == code)).scalar()
            if state is None:
                raise PollNotFound(code)
            if state != OPEN:
                raise PollClosed(code)
            db.upsert(conn, t.demo_votes, ("code", "voter"), code=code, voter=voter, option=option, at=_now())

    def my_vote(self, code: str, voter: str) -> str | None:
        with db.reading(self.url) as conn:
            return conn.execute(sa.select(t.demo_votes.c.option).where(
                t.demo_votes.c.code == normalise_code(code), t.demo_votes.c.voter == voter)).scalar()

    def tally(self, code: str) -> dict[str, int]:
        """Votes per option (options nobody chose are absent)."""
        with db.reading(self.url) as conn:
            rows = conn.execute(sa.select(t.demo_votes.c.option, sa.func.count().label("n"))
                                .where(t.demo_votes.c.code == normalise_code(code)).group_by(t.demo_votes.c.option)).all()
        return {row.option: int(row.n) for row in rows}

    def close(self, code: str) -> Poll:
        """Stop taking votes (idempotent; a revealed poll stays revealed)."""
        with db.writing(self.url) as conn:
            conn.execute(t.demo_polls.update().where(t.demo_polls.c.code == normalise_code(code),
                                                     t.demo_polls.c.state == OPEN).values(state=CLOSED, closed_at=_now()))
        return self.poll(code)

    def reveal(self, code: str, right: tuple[str, ...] | list[str]) -> Poll:
        """Close the poll and record which options the run showed to be right."""
        now = _now()
        with db.writing(self.url) as conn:
            conn.execute(t.demo_polls.update().where(t.demo_polls.c.code == normalise_code(code)).values(
                state=REVEALED, closed_at=sa.func.coalesce(t.demo_polls.c.closed_at, now), revealed_at=now,
                right_json=json.dumps(list(right))))
        return self.poll(code)


def store(where: Path | str | None = None) -> VoteStore:
    """The votes in the class database (or `where`): what the presenter and learner pages use."""
    return VoteStore(where)
