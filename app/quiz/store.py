"""Learner progress in one SQLite file: attempts, graded answers, lab predictions.

Every method opens its own connection (see db.py), so one ProgressStore may be
shared by Streamlit sessions on different threads, and several processes may
write the same file.
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

from app.lab.paths import data_dir
from app.quiz import db
from app.quiz.bank import Item
from app.quiz.grading import Grade, grade, normalize_answer
from app.quiz.report import Summary, class_report_frame, summarize

FILE_NAME = "progress.sqlite3"
ANSWER_TABLE_COLUMNS = ("attempt", "learner", "item", "topic", "type", "answer", "score", "correct", "answered_at")
CSV_COLUMNS = ("attempt", "item", "topic", "type", "answer", "score", "correct", "answered_at")


class AttemptClosed(RuntimeError):
    """The attempt was finished or its time limit ran out; no more answers."""


class AttemptNotFound(LookupError):
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
    answer: Any  # normalized: option key, sorted key list, or number
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


def _attempt(row: Any) -> Attempt:
    return Attempt(
        id=row["id"], learner=row["learner"], seed=row["seed"], timed=bool(row["timed"]),
        time_limit_s=row["time_limit_s"], started_at=_parse(row["started_at"]),  # type: ignore[arg-type]
        finished_at=_parse(row["finished_at"]),
    )


def _answer(row: Any) -> AnswerRecord:
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
    def __init__(self, path: Path | str | None = None, clock: Callable[[], datetime] = utc_now) -> None:
        # The clock is injectable so timed attempts are testable without sleeping.
        self.path = Path(path) if path is not None else data_dir() / FILE_NAME
        self._clock = clock
        db.initialise(self.path)

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
        with db.writing(self.path) as conn:
            conn.execute("INSERT OR IGNORE INTO learners(name, created_at) VALUES (?, ?)", (learner, now))
            cur = conn.execute(
                "INSERT INTO attempts(learner, seed, timed, time_limit_s, started_at) VALUES (?, ?, ?, ?, ?)",
                (learner, seed, int(timed), time_limit_s, now),
            )
            return int(cur.lastrowid)  # type: ignore[arg-type]

    def attempt(self, attempt_id: int) -> Attempt:
        with db.reading(self.path) as conn:
            row = conn.execute("SELECT * FROM attempts WHERE id = ?", (attempt_id,)).fetchone()
        if row is None:
            raise AttemptNotFound(f"no attempt {attempt_id}")
        return _attempt(row)

    def is_open(self, attempt_id: int) -> bool:
        return self.attempt(attempt_id).is_open(self._clock())

    def attempts(self, learner: str) -> list[Attempt]:
        learner = _learner_name(learner)
        with db.reading(self.path) as conn:
            rows = conn.execute("SELECT * FROM attempts WHERE learner = ? ORDER BY id", (learner,)).fetchall()
        return [_attempt(r) for r in rows]

    def latest_attempt(self, learner: str) -> Attempt | None:
        learner = _learner_name(learner)
        with db.reading(self.path) as conn:
            row = conn.execute(
                "SELECT * FROM attempts WHERE learner = ? ORDER BY id DESC LIMIT 1", (learner,)
            ).fetchone()
        return _attempt(row) if row else None

    def finish_attempt(self, attempt_id: int) -> Attempt:
        """Close the attempt; finishing twice keeps the first finish time."""
        with db.writing(self.path) as conn:
            cur = conn.execute(
                "UPDATE attempts SET finished_at = COALESCE(finished_at, ?) WHERE id = ?",
                (_iso(self._clock()), attempt_id),
            )
            if cur.rowcount == 0:
                raise AttemptNotFound(f"no attempt {attempt_id}")
        return self.attempt(attempt_id)

    def reset(self, learner: str) -> int:
        """Start the learner over: delete their attempts and answers (predictions stay).

        Returns the number of attempts deleted.
        """
        learner = _learner_name(learner)
        with db.writing(self.path) as conn:
            conn.execute(
                "DELETE FROM answers WHERE attempt_id IN (SELECT id FROM attempts WHERE learner = ?)", (learner,)
            )
            return conn.execute("DELETE FROM attempts WHERE learner = ?", (learner,)).rowcount

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
        with db.writing(self.path) as conn:
            taken = conn.execute(
                "SELECT 1 FROM attempts WHERE learner = ? UNION ALL SELECT 1 FROM predictions WHERE learner = ?",
                (new, new),
            ).fetchone()
            if taken is not None:
                raise ValueError(f"learner {new!r} already has progress")
            known = conn.execute("SELECT created_at FROM learners WHERE name = ?", (old,)).fetchone()
            if known is None:
                return 0  # nothing saved yet: the new id simply starts there
            conn.execute("INSERT OR IGNORE INTO learners(name, created_at) VALUES (?, ?)",
                         (new, known["created_at"] or now))
            moved = conn.execute("UPDATE attempts SET learner = ? WHERE learner = ?", (new, old)).rowcount
            conn.execute("UPDATE predictions SET learner = ? WHERE learner = ?", (new, old))
            conn.execute("DELETE FROM learners WHERE name = ?", (old,))
            return moved

    def learners(self) -> list[str]:
        with db.reading(self.path) as conn:
            return [r["name"] for r in conn.execute("SELECT name FROM learners ORDER BY name")]

    # --- answers ------------------------------------------------------------

    def record_answer(self, attempt_id: int, item: Item, answer: Any, elapsed_s: float | None = None) -> Grade:
        """Grade and store an answer; an item already answered in this attempt keeps its first grade.

        elapsed_s defaults to the seconds since the attempt started or since its
        previous answer, whichever is later. Raises AttemptClosed when the
        attempt is finished or past its time limit, ValueError for a malformed answer.
        """
        value = normalize_answer(item, answer)  # ValueError before anything is written
        result = grade(item, value)
        now = self._clock()
        with db.writing(self.path) as conn:
            row = conn.execute("SELECT * FROM attempts WHERE id = ?", (attempt_id,)).fetchone()
            if row is None:
                raise AttemptNotFound(f"no attempt {attempt_id}")
            first = conn.execute(
                "SELECT * FROM answers WHERE attempt_id = ? AND item_id = ?", (attempt_id, item.id)
            ).fetchone()
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
            if elapsed_s is None:
                last = conn.execute(
                    "SELECT MAX(answered_at) AS t FROM answers WHERE attempt_id = ?", (attempt_id,)
                ).fetchone()["t"]
                since = max(current.started_at, _parse(last) or current.started_at)
                elapsed_s = max(0.0, (now - since).total_seconds())
            conn.execute(
                "INSERT INTO answers(attempt_id, item_id, topic, item_type, answer_json, score, correct, detail,"
                " answered_at, elapsed_s) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
                (attempt_id, item.id, item.topic, item.type, json.dumps(value), result.score, int(result.correct),
                 result.detail, _iso(now), elapsed_s),
            )
        return result

    def answers(self, attempt_id: int) -> list[AnswerRecord]:
        with db.reading(self.path) as conn:
            rows = conn.execute(
                "SELECT * FROM answers WHERE attempt_id = ? ORDER BY answered_at, rowid", (attempt_id,)
            ).fetchall()
        return [_answer(r) for r in rows]

    # --- reports ------------------------------------------------------------

    def summary(self, attempt_id: int, bank: Iterable[Item]) -> Summary:
        """Score out of one point per bank item, per-topic scores and topics under 70 %."""
        self.attempt(attempt_id)  # AttemptNotFound rather than an all-zero summary
        scores = {a.item_id: a.score for a in self.answers(attempt_id)}
        return summarize(attempt_id, scores, bank)

    def export_csv(self, learner: str) -> str:
        """Every answered item of the learner, one row each, oldest attempt first."""
        learner = _learner_name(learner)
        with db.reading(self.path) as conn:
            rows = conn.execute(
                "SELECT a.* FROM answers a JOIN attempts t ON t.id = a.attempt_id"
                " WHERE t.learner = ? ORDER BY t.id, a.answered_at, a.rowid",
                (learner,),
            ).fetchall()
        out = io.StringIO()
        writer = csv.writer(out, lineterminator="\n")
        writer.writerow(CSV_COLUMNS)
        for r in rows:
            writer.writerow([
                r["attempt_id"], r["item_id"], r["topic"], r["item_type"], r["answer_json"],
                f"{r['score']:g}", "true" if r["correct"] else "false", r["answered_at"],
            ])
        return out.getvalue()

    def class_report(self, bank: Iterable[Item]) -> pd.DataFrame:
        """Instructor view across all learners: one row per bank item (see report.py)."""
        with db.reading(self.path) as conn:
            rows = conn.execute("SELECT item_id, answer_json, correct, score FROM answers").fetchall()
        return class_report_frame(
            ((r["item_id"], json.loads(r["answer_json"]), bool(r["correct"]), r["score"]) for r in rows), bank
        )

    def answer_table(self) -> pd.DataFrame:
        """Every stored answer of the class, one row each, oldest attempt first: what the
        instructor's item analysis reads (app/quiz/item_analysis.py)."""
        with db.reading(self.path) as conn:
            rows = conn.execute(
                "SELECT a.attempt_id, t.learner, a.item_id, a.topic, a.item_type, a.answer_json, a.score, a.correct,"
                " a.answered_at FROM answers a JOIN attempts t ON t.id = a.attempt_id ORDER BY t.id, a.answered_at, a.rowid"
            ).fetchall()
        return pd.DataFrame.from_records(
            [(r["attempt_id"], r["learner"], r["item_id"], r["topic"], r["item_type"], json.loads(r["answer_json"]),
              float(r["score"]), bool(r["correct"]), _parse(r["answered_at"])) for r in rows],
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
        with db.writing(self.path) as conn:
            conn.execute("INSERT OR IGNORE INTO learners(name, created_at) VALUES (?, ?)", (learner, now))
            cur = conn.execute(
                "INSERT INTO predictions(learner, exercise, prediction, outcome, held, at) VALUES (?, ?, ?, ?, ?, ?)",
                (learner, exercise, prediction, outcome, int(bool(held)), now),
            )
            return int(cur.lastrowid)  # type: ignore[arg-type]

    def predictions(self, learner: str) -> list[PredictionRecord]:
        learner = _learner_name(learner)
        with db.reading(self.path) as conn:
            rows = conn.execute("SELECT * FROM predictions WHERE learner = ? ORDER BY id", (learner,)).fetchall()
        return [
            PredictionRecord(r["id"], r["learner"], r["exercise"], r["prediction"], r["outcome"], bool(r["held"]),
                             _parse(r["at"]))  # type: ignore[arg-type]
            for r in rows
        ]
