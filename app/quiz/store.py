"""Learner progress in the class database: attempts, graded answers, lab predictions.

The database is the class's (app/quiz/db.py): an SQLite file by default, PostgreSQL for a class
on several app replicas. Every method runs its own transaction, so one ProgressStore may be
shared by Streamlit sessions on different threads, and several processes (or replicas) may
write the same database. Each write is committed before the method returns: what a page says
was saved is saved. A database that cannot be used raises DatabaseError (app/lab/database).
"""
from __future__ import annotations

import csv
import io
import json
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from datetime import datetime, timedelta, timezone
from pathlib import Path
from typing import Any

import pandas as pd
import sqlalchemy as sa

from app.lab.database import schema as t
from app.lab.errors import BatchingLabError
from app.quiz import db
from app.quiz.bank import Item
from app.quiz.grading import Answer, Grade, grade, normalize_answer
from app.quiz.report import Summary, class_report_frame, summarize

FILE_NAME = db.FILE_NAME
ANSWER_TABLE_COLUMNS = ("attempt", "learner", "item", "topic", "type", "answer", "score", "correct", "answered_at")
CSV_COLUMNS = ("attempt", "item", "topic", "type", "answer", "score", "correct", "answered_at")


class AttemptClosed(BatchingLabError, RuntimeError):
    """The attempt was finished or its time limit ran out; no more answers."""


class AttemptNotFound(BatchingLabError, LookupError):
    """No attempt with that id (never started, or removed by reset)."""


def utc_now() -> datetime:
    return datetime.now(timezone.utc)


def _iso(moment: datetime) -> str:
    return moment.astimezone(timezone.utc).isoformat(timespec="microseconds")


def _parse(text: str | None) -> datetime | None:
    return datetime.fromisoformat(text) if text else None


@dataclass(frozen=True)
class Attempt:
    id: int
    learner: str
    seed: int
    timed: bool
    time_limit_s: float | None
    started_at: datetime
    finished_at: datetime | None

    @property
    def deadline(self) -> datetime | None:
        if not self.timed or self.time_limit_s is None:
            return None
        return self.started_at + timedelta(seconds=self.time_limit_s)

    def is_open(self, now: datetime) -> bool:
        return self.finished_at is None and (self.deadline is None or now <= self.deadline)


@dataclass(frozen=True)
class AnswerRecord:
    attempt_id: int
    item_id: str
    topic: str
    type: str
    answer: Any  # normalized: option key, sorted key list, or number; each page reads the kind its item type stores
    score: float
    correct: bool
    detail: str
    answered_at: datetime
    elapsed_s: float | None

    @property
    def grade(self) -> Grade:
        return Grade(self.score, self.correct, self.detail)


@dataclass(frozen=True)
class PredictionRecord:
    id: int
    learner: str
    exercise: str
    prediction: str
    outcome: str
    held: bool
    at: datetime


# SQLAlchemy types a Core select's rows as Row[Any]: these read them by column name.
def _attempt(found: Any) -> Attempt:
    row = found._mapping
    return Attempt(
        id=row["id"], learner=row["learner"], seed=row["seed"], timed=bool(row["timed"]),
        time_limit_s=row["time_limit_s"], started_at=_parse(row["started_at"]),  # type: ignore[arg-type]
        finished_at=_parse(row["finished_at"]),
    )


def _answer(found: Any) -> AnswerRecord:
    row = found._mapping
    return AnswerRecord(
        attempt_id=row["attempt_id"], item_id=row["item_id"], topic=row["topic"], type=row["item_type"],
        answer=json.loads(row["answer_json"]), score=row["score"], correct=bool(row["correct"]),
        detail=row["detail"], answered_at=_parse(row["answered_at"]),  # type: ignore[arg-type]
        elapsed_s=row["elapsed_s"],
    )


def _learner_name(learner: str) -> str:
    if not isinstance(learner, str) or not learner.strip():
        raise ValueError("learner must be a non-empty name")
    return learner.strip()


class ProgressStore:
    def __init__(self, where: Path | str | None = None, clock: Callable[[], datetime] = utc_now) -> None:
        """where: a database URL, an SQLite file's path, or None for the class database
        (app/quiz/db.py). Nothing connects until the first call, so a page can be built while
        the database is away and says so when it is used. The clock is injectable so timed
        attempts are testable without sleeping."""
        self.url = db.url_for(where)
        self.path = db.sqlite_path(self.url)  # the file, for an SQLite store; None on a server
        self._clock = clock

    # --- attempts -----------------------------------------------------------

    def start_attempt(self, learner: str, seed: int, timed: bool = False, time_limit_s: float | None = None) -> int:
        learner = _learner_name(learner)
        if isinstance(seed, bool) or not isinstance(seed, int):
            raise ValueError(f"seed must be an integer, got {seed!r}")
        if timed and (time_limit_s is None or time_limit_s <= 0):
            raise ValueError("a timed attempt needs time_limit_s > 0")
        if not timed and time_limit_s is not None:
            raise ValueError("time_limit_s only applies to timed attempts (timed=True)")
        now = _iso(self._clock())
        with db.writing(self.url) as conn:
            db.insert_ignore(conn, t.learners, name=learner, created_at=now)
            result = conn.execute(t.attempts.insert().values(
                learner=learner, seed=seed, timed=int(timed), time_limit_s=time_limit_s, started_at=now))
            key = result.inserted_primary_key
            assert key is not None  # an INSERT's result has the row's key
            return int(key[0])

    def attempt(self, attempt_id: int) -> Attempt:
        with db.reading(self.url) as conn:
            row = conn.execute(t.attempts.select().where(t.attempts.c.id == attempt_id)).first()
        if row is None:
            raise AttemptNotFound(f"no attempt {attempt_id}")
        return _attempt(row)

    def is_open(self, attempt_id: int) -> bool:
        return self.attempt(attempt_id).is_open(self._clock())

    def attempts(self, learner: str) -> list[Attempt]:
        learner = _learner_name(learner)
        with db.reading(self.url) as conn:
            rows = conn.execute(t.attempts.select().where(t.attempts.c.learner == learner).order_by(t.attempts.c.id)).all()
        return [_attempt(r) for r in rows]

    def latest_attempt(self, learner: str) -> Attempt | None:
        learner = _learner_name(learner)
        with db.reading(self.url) as conn:
            row = conn.execute(t.attempts.select().where(t.attempts.c.learner == learner)
                               .order_by(t.attempts.c.id.desc()).limit(1)).first()
        return _attempt(row) if row else None

    def finish_attempt(self, attempt_id: int) -> Attempt:
        """Close the attempt; finishing twice keeps the first finish time."""
        with db.writing(self.url) as conn:
            result = conn.execute(t.attempts.update().where(t.attempts.c.id == attempt_id).values(
                finished_at=sa.func.coalesce(t.attempts.c.finished_at, _iso(self._clock()))))
            if result.rowcount == 0:
                raise AttemptNotFound(f"no attempt {attempt_id}")
        return self.attempt(attempt_id)

    def reset(self, learner: str) -> int:
        """Start the learner over: delete their attempts and answers (predictions stay).

        Returns the number of attempts deleted.
        """
        learner = _learner_name(learner)
        theirs = sa.select(t.attempts.c.id).where(t.attempts.c.learner == learner)
        with db.writing(self.url) as conn:
            conn.execute(t.answers.delete().where(t.answers.c.attempt_id.in_(theirs)))
            return conn.execute(t.attempts.delete().where(t.attempts.c.learner == learner)).rowcount

    def rename_learner(self, old: str, new: str) -> int:
        """Move every attempt and prediction of learner old to learner new, in one transaction.

        Learner ids carry their access token (app/quiz/access_rules.py), so a new name is a new
        id; the progress moves with it. Returns the number of attempts moved. Raises ValueError
        when new already has progress of its own (two learners are never merged).
        """
        old, new = _learner_name(old), _learner_name(new)
        if old == new:
            return 0
        now = _iso(self._clock())
        with db.writing(self.url) as conn:
            taken = conn.execute(sa.union_all(
                sa.select(sa.literal(1)).where(t.attempts.c.learner == new),
                sa.select(sa.literal(1)).where(t.predictions.c.learner == new),
            )).first()
            if taken is not None:
                raise ValueError(f"learner {new!r} already has progress")
            known = conn.execute(sa.select(t.learners.c.created_at).where(t.learners.c.name == old)).first()
            if known is None:
                return 0  # nothing saved yet: the new id simply starts there
            db.insert_ignore(conn, t.learners, name=new, created_at=known.created_at or now)
            moved = conn.execute(t.attempts.update().where(t.attempts.c.learner == old).values(learner=new)).rowcount
            conn.execute(t.predictions.update().where(t.predictions.c.learner == old).values(learner=new))
            conn.execute(t.learners.delete().where(t.learners.c.name == old))
            return moved

    def learners(self) -> list[str]:
        with db.reading(self.url) as conn:
            return list(conn.execute(sa.select(t.learners.c.name).order_by(t.learners.c.name)).scalars())

    # --- answers ------------------------------------------------------------

    def record_answer(self, attempt_id: int, item: Item, answer: object, elapsed_s: float | None = None) -> Grade:
        """Grade and store an answer; an item already answered in this attempt keeps its first grade.

        elapsed_s defaults to the seconds since the attempt started or since its
        previous answer, whichever is later. Raises AttemptClosed when the
        attempt is finished or past its time limit, ValueError for a malformed answer.
        """
        value = normalize_answer(item, answer)  # ValueError before anything is written
        result = grade(item, value)
        now = self._clock()
        try:
            return self._record(attempt_id, item, value, result, now, elapsed_s)
        except sa.exc.IntegrityError:
            # Another writer stored this item first (two clicks racing on a server database,
            # where transactions do not queue on one lock as SQLite's do): its grade stands.
            return self._first_grade(attempt_id, item.id) or result

    def _first_grade(self, attempt_id: int, item_id: str) -> Grade | None:
        with db.reading(self.url) as conn:
            first = conn.execute(t.answers.select().where(t.answers.c.attempt_id == attempt_id,
                                                          t.answers.c.item_id == item_id)).first()
        return _answer(first).grade if first is not None else None

    def _record(self, attempt_id: int, item: Item, value: Answer, result: Grade, now: datetime,
                elapsed_s: float | None) -> Grade:
        with db.writing(self.url) as conn:
            row = conn.execute(t.attempts.select().where(t.attempts.c.id == attempt_id)).first()
            if row is None:
                raise AttemptNotFound(f"no attempt {attempt_id}")
            first = conn.execute(t.answers.select().where(t.answers.c.attempt_id == attempt_id,
                                                          t.answers.c.item_id == item.id)).first()
            if first is not None:
                return _answer(first).grade
            current = _attempt(row)
            if current.finished_at is not None:
                raise AttemptClosed(f"attempt {attempt_id} was finished at {_iso(current.finished_at)}")
            if not current.is_open(now):
                raise AttemptClosed(
                    f"attempt {attempt_id} is closed: its {current.time_limit_s:g} s time limit "
                    f"ran out at {_iso(current.deadline)}"  # type: ignore[arg-type]
                )
            earlier = conn.execute(sa.select(sa.func.max(t.answers.c.answered_at), sa.func.max(t.answers.c.seq))
                                   .where(t.answers.c.attempt_id == attempt_id)).one()
            if elapsed_s is None:
                since = max(current.started_at, _parse(earlier[0]) or current.started_at)
                elapsed_s = max(0.0, (now - since).total_seconds())
            conn.execute(t.answers.insert().values(
                attempt_id=attempt_id, item_id=item.id, topic=item.topic, item_type=item.type,
                answer_json=json.dumps(value), score=result.score, correct=int(result.correct), detail=result.detail,
                answered_at=_iso(now), elapsed_s=elapsed_s, seq=(earlier[1] or 0) + 1,
            ))
        return result

    def answers(self, attempt_id: int) -> list[AnswerRecord]:
        with db.reading(self.url) as conn:
            rows = conn.execute(t.answers.select().where(t.answers.c.attempt_id == attempt_id)
                                .order_by(t.answers.c.answered_at, t.answers.c.seq)).all()
        return [_answer(r) for r in rows]

    # --- reports ------------------------------------------------------------

    def summary(self, attempt_id: int, bank: Iterable[Item]) -> Summary:
        """Score out of one point per bank item, per-topic scores and topics under 70 %."""
        self.attempt(attempt_id)  # AttemptNotFound rather than an all-zero summary
        scores = {a.item_id: a.score for a in self.answers(attempt_id)}
        return summarize(attempt_id, scores, bank)

    def _class_answers(self, learner: str | None = None) -> list[Any]:
        """Every answer (of one learner, or of the class), oldest attempt first, with its learner."""
        query = (sa.select(t.answers, t.attempts.c.learner).join(t.attempts, t.attempts.c.id == t.answers.c.attempt_id)
                 .order_by(t.attempts.c.id, t.answers.c.answered_at, t.answers.c.seq))
        if learner is not None:
            query = query.where(t.attempts.c.learner == learner)
        with db.reading(self.url) as conn:
            return list(conn.execute(query).all())

    def export_csv(self, learner: str) -> str:
        """Every answered item of the learner, one row each, oldest attempt first."""
        rows = self._class_answers(_learner_name(learner))
        out = io.StringIO()
        writer = csv.writer(out, lineterminator="\n")
        writer.writerow(CSV_COLUMNS)
        for r in rows:
            writer.writerow([
                r.attempt_id, r.item_id, r.topic, r.item_type, r.answer_json,
                f"{r.score:g}", "true" if r.correct else "false", r.answered_at,
            ])
        return out.getvalue()

    def class_report(self, bank: Iterable[Item]) -> pd.DataFrame:
        """Instructor view across all learners: one row per bank item (see report.py)."""
        with db.reading(self.url) as conn:
            rows = conn.execute(sa.select(t.answers.c.item_id, t.answers.c.answer_json, t.answers.c.correct,
                                          t.answers.c.score)).all()
        return class_report_frame(((r.item_id, json.loads(r.answer_json), bool(r.correct), r.score) for r in rows), bank)

    def answer_table(self) -> pd.DataFrame:
        """Every stored answer of the class, one row each, oldest attempt first: what the
        instructor's item analysis reads (app/quiz/item_analysis.py)."""
        return pd.DataFrame.from_records(
            [(r.attempt_id, r.learner, r.item_id, r.topic, r.item_type, json.loads(r.answer_json), float(r.score),
              bool(r.correct), _parse(r.answered_at)) for r in self._class_answers()],
            columns=list(ANSWER_TABLE_COLUMNS),
        )

    # --- lab predictions ----------------------------------------------------

    def record_prediction(
        self, learner: str, exercise: str, prediction: str, outcome: str, held: bool | None = None
    ) -> int:
        """Store what the learner predicted a lab run would do and what it did.

        held defaults to prediction == outcome; pass it when 'held' needs judgement.
        """
        learner = _learner_name(learner)
        if held is None:
            held = prediction == outcome
        now = _iso(self._clock())
        with db.writing(self.url) as conn:
            db.insert_ignore(conn, t.learners, name=learner, created_at=now)
            result = conn.execute(t.predictions.insert().values(
                learner=learner, exercise=exercise, prediction=prediction, outcome=outcome, held=int(bool(held)), at=now))
            key = result.inserted_primary_key
            assert key is not None  # an INSERT's result has the row's key
            return int(key[0])

    def predictions(self, learner: str) -> list[PredictionRecord]:
        learner = _learner_name(learner)
        with db.reading(self.url) as conn:
            rows = conn.execute(t.predictions.select().where(t.predictions.c.learner == learner)
                                .order_by(t.predictions.c.id)).all()
        return [
            PredictionRecord(r.id, r.learner, r.exercise, r.prediction, r.outcome, bool(r.held), _parse(r.at))  # type: ignore[arg-type]
            for r in rows
        ]
