"""QuizAttempt: the attempt state machine the quiz page drives (no Streamlit)."""
from __future__ import annotations

import pytest

from app.quiz.attempt import ANSWERING, COMPLETE, FINISHED, TIMED_OUT, QuizAttempt, chosen_keys
from app.quiz.links import lesson_ref
from app.quiz.shuffle import shuffled_quiz


def right_answer(item):
    if item.type == "numeric":
        return item.answer
    if item.type == "multiple":
        return sorted(item.correct_keys)
    return next(iter(item.correct_keys))


@pytest.fixture
def quiz(store, bank, clock):
    return QuizAttempt.start(store, bank, "ada", seed=42, clock=clock)


def test_order_follows_the_seed(quiz, bank):
    assert [(i.id, [o.key for o in opts]) for i, opts in quiz.order] == [
        (i.id, [o.key for o in opts]) for i, opts in shuffled_quiz(bank, 42)
    ]
    first = quiz.item_at(0).id
    assert quiz.number(first) == 1
    assert quiz.step(first, -1) == first  # clamped at the start
    assert quiz.step(first, 1) == quiz.item_at(1).id


def test_a_second_submission_keeps_the_first_grade(quiz, bank):
    item = quiz.item_at(0)
    wrong = next(o.key for o in item.options if not o.correct) if item.options else item.answer + 99
    answer = [wrong] if item.type == "multiple" else wrong
    first = quiz.submit(item, answer)
    again = quiz.submit(item, right_answer(item))
    assert first.first and not again.first
    assert again.grade == first.grade
    assert quiz.summary().score == first.grade.score
    assert quiz.summary().answered == 1


def test_resume_returns_the_same_attempt_unless_the_seed_changes(quiz, store, bank, clock):
    item = quiz.item_at(0)
    quiz.submit(item, right_answer(item))
    again = QuizAttempt.resume(store, bank, "ada", clock=clock)
    assert again.id == quiz.id and again.answer(item.id) is not None
    assert QuizAttempt.resume(store, bank, "ada", seed=42, clock=clock).id == quiz.id
    other = QuizAttempt.resume(store, bank, "ada", seed=7, clock=clock)
    assert other.id != quiz.id and other.seed == 7 and other.answers() == {}


def test_first_unanswered_skips_answered_items(quiz):
    first = quiz.item_at(0)
    quiz.submit(first, right_answer(first))
    assert quiz.first_unanswered() == quiz.item_at(1).id


def test_phases_answering_complete_finished(quiz, bank):
    assert quiz.phase() == ANSWERING and quiz.accepting()
    for item, _ in quiz.order:
        quiz.submit(item, right_answer(item))
    assert quiz.phase() == COMPLETE and not quiz.accepting()
    assert quiz.summary().score == len(bank)
    quiz.finish()
    assert quiz.phase() == FINISHED


def test_finish_early_refuses_further_answers(quiz):
    quiz.finish()
    item = quiz.item_at(0)
    result = quiz.submit(item, right_answer(item))
    assert result.grade is None and "finished" in result.closed
    assert quiz.answers() == {}


def test_timed_attempt_runs_out(store, bank, clock):
    timed = QuizAttempt.start(store, bank, "bob", seed=1, time_limit_s=60, clock=clock)
    assert timed.remaining_s() == 60
    clock.advance(45)
    assert timed.remaining_s() == 15 and timed.phase() == ANSWERING
    clock.advance(30)
    assert timed.remaining_s() == 0 and timed.phase() == TIMED_OUT
    item = timed.item_at(0)
    assert timed.submit(item, right_answer(item)).closed
    assert QuizAttempt.start(store, bank, "bob", seed=1, clock=clock).remaining_s() is None


def test_reset_deletes_history_and_keeps_the_seed(quiz, store, bank):
    item = quiz.item_at(0)
    quiz.submit(item, right_answer(item))
    fresh = quiz.reset()
    assert fresh.seed == quiz.seed and fresh.id != quiz.id
    assert fresh.answers() == {} and [a.id for a in store.attempts("ada")] == [fresh.id]


def test_review_lists_every_item_with_the_learners_choices(quiz):
    item, options = next((i, o) for i, o in quiz.order if i.type == "multiple")
    picked = sorted(item.correct_keys)[:1]
    quiz.submit(item, picked)
    entries = quiz.review()
    assert [e.number for e in entries] == list(range(1, len(quiz.order) + 1))
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
