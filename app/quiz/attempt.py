"""One learner's quiz attempt as plain Python: seeded order, answers, timing, review.

The Streamlit page keeps only the attempt id and the item on screen; everything
else is read back from the ProgressStore on each rerun, so a browser reload or an
app restart shows exactly what the database holds, and a double click cannot
grade an item twice (the store keeps the first grade).
"""
from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from datetime import datetime
from functools import cached_property

from app.quiz.bank import Bank, Item, Option
from app.quiz.grading import Grade
from app.quiz.report import Summary
from app.quiz.shuffle import new_seed, shuffled_quiz
from app.quiz.store import AnswerRecord, Attempt, AttemptClosed, ProgressStore, utc_now

# What the page shows: still answering, every item answered, closed by the
# learner, or closed by the clock.
ANSWERING, COMPLETE, FINISHED, TIMED_OUT = "answering", "complete", "finished", "timed_out"


@dataclass(frozen=True)
class Submission:
    grade: Grade | None  # None when the attempt was closed
    first: bool  # False when the item already had a grade (double click, rerun)
    closed: str | None = None  # why nothing was recorded


@dataclass(frozen=True)
class ReviewEntry:
    number: int  # 1-based position in this seed's order
    item: Item
    options: list[Option]  # display order
    record: AnswerRecord | None


def chosen_keys(answer: object) -> set[int]:
    """Option keys in a stored answer (an int, or a list for multiple); empty for numbers."""
    if isinstance(answer, list):
        return set(answer)
    if isinstance(answer, int) and not isinstance(answer, bool):
        return {answer}
    return set()


class QuizAttempt:
    def __init__(self, store: ProgressStore, bank: Bank, attempt: Attempt,
                 clock: Callable[[], datetime] = utc_now) -> None:
        # Give the store's clock here too, so tests can move time for both.
        self.store = store
        self.bank = bank
        self.attempt = attempt
        self.clock = clock

    # --- opening an attempt ---------------------------------------------------

    @classmethod
    def start(cls, store: ProgressStore, bank: Bank, learner: str, seed: int | None = None,
              time_limit_s: float | None = None, clock: Callable[[], datetime] = utc_now) -> QuizAttempt:
        """A new attempt; history is kept. time_limit_s makes it a timed practice attempt."""
        seed = new_seed() if seed is None else seed
        attempt_id = store.start_attempt(learner, seed, timed=time_limit_s is not None, time_limit_s=time_limit_s)
        return cls(store, bank, store.attempt(attempt_id), clock)

    @classmethod
    def resume(cls, store: ProgressStore, bank: Bank, learner: str, seed: int | None = None,
               time_limit_s: float | None = None, clock: Callable[[], datetime] = utc_now) -> QuizAttempt:
        """The learner's latest attempt if it used `seed` (any seed when None), else a new one.

        A finished or timed-out attempt is resumed too, so its score stays on screen
        until the learner asks for a new attempt.
        """
        latest = store.latest_attempt(learner)
        if latest is not None and (seed is None or latest.seed == seed):
            return cls(store, bank, latest, clock)
        return cls.start(store, bank, learner, seed, time_limit_s, clock)

    @classmethod
    def load(cls, store: ProgressStore, bank: Bank, attempt_id: int,
             clock: Callable[[], datetime] = utc_now) -> QuizAttempt:
        return cls(store, bank, store.attempt(attempt_id), clock)

    def reset(self, seed: int | None = None, time_limit_s: float | None = None) -> QuizAttempt:
        """Delete this learner's attempts and answers, then start again (same seed by default)."""
        self.store.reset(self.learner)
        return QuizAttempt.start(self.store, self.bank, self.learner,
                                 self.seed if seed is None else seed, time_limit_s, self.clock)

    # --- what the attempt is ------------------------------------------------

    @property
    def id(self) -> int:
        return self.attempt.id

    @property
    def learner(self) -> str:
        return self.attempt.learner

    @property
    def seed(self) -> int:
        return self.attempt.seed

    @cached_property
    def order(self) -> list[tuple[Item, list[Option]]]:
        """Items and their options in the order this seed shows them."""
        return shuffled_quiz(self.bank, self.seed)

    @cached_property
    def _position(self) -> dict[str, int]:
        return {item.id: i for i, (item, _) in enumerate(self.order)}

    def number(self, item_id: str) -> int:
        """1-based question number of item_id in this attempt."""
        return self._position[item_id] + 1

    def options(self, item_id: str) -> list[Option]:
        return self.order[self._position[item_id]][1]

    def item_at(self, index: int) -> Item:
        return self.order[index][0]

    def step(self, item_id: str, delta: int) -> str:
        """The item delta places away, clamped to the first and last item."""
        index = min(max(self._position[item_id] + delta, 0), len(self.order) - 1)
        return self.item_at(index).id

    def first_unanswered(self) -> str:
        """Where to put a learner who comes back: the first item without an answer."""
        done = self.answers()
        return next((item.id for item, _ in self.order if item.id not in done), self.item_at(0).id)

    # --- answers ------------------------------------------------------------

    def answers(self) -> dict[str, AnswerRecord]:
        return {a.item_id: a for a in self.store.answers(self.id)}

    def answer(self, item_id: str) -> AnswerRecord | None:
        return self.answers().get(item_id)

    def submit(self, item: Item, answer: object) -> Submission:
        """Grade and store once; later submissions of the same item return the first grade.

        ValueError (a malformed answer) propagates: the page should have prevented it.
        """
        before = self.answer(item.id)
        if before is not None:
            return Submission(before.grade, first=False)
        try:
            result = self.store.record_answer(self.id, item, answer)
        except AttemptClosed as closed:
            self.refresh()
            return Submission(None, first=False, closed=str(closed))
        return Submission(result, first=True)

    # --- time and phase -----------------------------------------------------

    def refresh(self) -> None:
        self.attempt = self.store.attempt(self.id)

    def remaining_s(self) -> float | None:
        """Seconds left in a timed attempt (0 once over); None when untimed."""
        deadline = self.attempt.deadline
        if deadline is None:
            return None
        return max(0.0, (deadline - self.clock()).total_seconds())

    def phase(self) -> str:
        if self.attempt.finished_at is not None:
            return FINISHED
        if not self.attempt.is_open(self.clock()):
            return TIMED_OUT
        if len(self.answers()) >= len(self.order):
            return COMPLETE
        return ANSWERING

    def accepting(self) -> bool:
        """Whether a new answer can still be recorded."""
        return self.phase() == ANSWERING

    def finish(self) -> None:
        self.attempt = self.store.finish_attempt(self.id)

    # --- results ------------------------------------------------------------

    def summary(self) -> Summary:
        return self.store.summary(self.id, self.bank)

    def review(self) -> list[ReviewEntry]:
        """Every item in this seed's order with the learner's stored answer (or None)."""
        done = self.answers()
        return [ReviewEntry(i + 1, item, opts, done.get(item.id)) for i, (item, opts) in enumerate(self.order)]

    def export_csv(self) -> str:
        return self.store.export_csv(self.learner)
