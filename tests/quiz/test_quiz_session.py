"""QuizSession: the attempt state machine the quiz page drives (no Streamlit)."""
from __future__ import annotations

import pytest

from app.quiz.links import lesson_ref
from app.quiz.session import ANSWERING, COMPLETE, FINISHED, TIMED_OUT, QuizSession, chosen_keys
from app.quiz.shuffle import shuffled_quiz


def right_answer(item):
    if item.type == "numeric":
        return item.answer
    if item.type == "multiple":
        return sorted(item.correct_keys)
    return next(iter(item.correct_keys))


@pytest.fixture
def session(store, bank, clock):
    return QuizSession.start(store, bank, "ada", seed=42, clock=clock)


def test_order_follows_the_seed(session, bank):
    assert [(i.id, [o.key for o in opts]) for i, opts in session.order] == [
        (i.id, [o.key for o in opts]) for i, opts in shuffled_quiz(bank, 42)
    ]
    first = session.item_at(0).id
    assert session.number(first) == 1
    assert session.step(first, -1) == first  # clamped at the start
    assert session.step(first, 1) == session.item_at(1).id


def test_a_second_submission_keeps_the_first_grade(session, bank):
    item = session.item_at(0)
    wrong = next(o.key for o in item.options if not o.correct) if item.options else item.answer + 99
    answer = [wrong] if item.type == "multiple" else wrong
    first = session.submit(item, answer)
    again = session.submit(item, right_answer(item))
    assert first.first and not again.first
    assert again.grade == first.grade
    assert session.summary().score == first.grade.score
    assert session.summary().answered == 1


def test_resume_returns_the_same_attempt_unless_the_seed_changes(session, store, bank, clock):
    item = session.item_at(0)
    session.submit(item, right_answer(item))
    again = QuizSession.resume(store, bank, "ada", clock=clock)
    assert again.id == session.id and again.answer(item.id) is not None
    assert QuizSession.resume(store, bank, "ada", seed=42, clock=clock).id == session.id
    other = QuizSession.resume(store, bank, "ada", seed=7, clock=clock)
    assert other.id != session.id and other.seed == 7 and other.answers() == {}


def test_first_unanswered_skips_answered_items(session):
    first = session.item_at(0)
    session.submit(first, right_answer(first))
    assert session.first_unanswered() == session.item_at(1).id


def test_phases_answering_complete_finished(session, bank):
    assert session.phase() == ANSWERING and session.accepting()
    for item, _ in session.order:
        session.submit(item, right_answer(item))
    assert session.phase() == COMPLETE and not session.accepting()
    assert session.summary().score == len(bank)
    session.finish()
    assert session.phase() == FINISHED


def test_finish_early_refuses_further_answers(session):
    session.finish()
    item = session.item_at(0)
    result = session.submit(item, right_answer(item))
    assert result.grade is None and "finished" in result.closed
    assert session.answers() == {}


def test_timed_attempt_runs_out(store, bank, clock):
    timed = QuizSession.start(store, bank, "bob", seed=1, time_limit_s=60, clock=clock)
    assert timed.remaining_s() == 60
    clock.advance(45)
    assert timed.remaining_s() == 15 and timed.phase() == ANSWERING
    clock.advance(30)
    assert timed.remaining_s() == 0 and timed.phase() == TIMED_OUT
    item = timed.item_at(0)
    assert timed.submit(item, right_answer(item)).closed
    assert QuizSession.start(store, bank, "bob", seed=1, clock=clock).remaining_s() is None


def test_reset_deletes_history_and_keeps_the_seed(session, store, bank):
    item = session.item_at(0)
    session.submit(item, right_answer(item))
    fresh = session.reset()
    assert fresh.seed == session.seed and fresh.id != session.id
    assert fresh.answers() == {} and [a.id for a in store.attempts("ada")] == [fresh.id]


def test_review_lists_every_item_with_the_learners_choices(session):
    item, options = next((i, o) for i, o in session.order if i.type == "multiple")
    picked = sorted(item.correct_keys)[:1]
    session.submit(item, picked)
    entries = session.review()
    assert [e.number for e in entries] == list(range(1, len(session.order) + 1))
    entry = next(e for e in entries if e.item.id == item.id)
    assert entry.options == options
    assert {o.key for o in entry.options if o.key in chosen_keys(entry.record.answer)} == set(picked)
    assert all(e.record is None for e in entries if e.item.id != item.id)


def test_chosen_keys_reads_every_answer_shape():
    assert chosen_keys(2) == {2}
    assert chosen_keys([0, 3]) == {0, 3}
    assert chosen_keys(8.0) == set() and chosen_keys(True) == set()


def test_lesson_ref_names_lesson_and_section(fixture_lessons, bank):
    item = bank["choose-sentiment"]
    ref = lesson_ref(item.lesson, fixture_lessons)
    assert ref.lesson_id == "dynamic-batching" and ref.anchor == "why-batch-at-all"
    assert ref.section.lower().startswith("why batch")
    assert ref.title in ref.label and ref.section in ref.label
    unknown = lesson_ref("nowhere#some-heading", fixture_lessons)
    assert (unknown.title, unknown.section) == ("nowhere", "some-heading")
