"""Progress store: once-per-item grading, persistence, reset, exports, timed attempts."""
from __future__ import annotations

import csv
import io
import math
import sqlite3
from contextlib import closing

import pandas as pd
import pytest

from app.quiz.store import AttemptClosed, AttemptNotFound, ProgressStore


def test_default_file_lives_in_data_dir_and_uses_wal(tmp_path, monkeypatch):
    monkeypatch.setenv("TRITON_LAB_DATA", str(tmp_path / "data"))
    store = ProgressStore()
    assert store.path == tmp_path / "data" / "progress.sqlite3"
    assert not store.path.exists()  # nothing connects until the store is used
    assert store.learners() == []
    assert store.path.exists()
    with closing(sqlite3.connect(store.path)) as conn:
        assert conn.execute("PRAGMA journal_mode").fetchone()[0] == "wal"
        tables = {r[0] for r in conn.execute("SELECT name FROM sqlite_master WHERE type='table'")}
    assert {"learners", "attempts", "answers", "predictions"} <= tables


def test_item_is_graded_once_per_attempt(store, bank):
    attempt = store.start_attempt("ada", seed=11)
    item = bank["choose-sentiment"]
    first = store.record_answer(attempt, item, 1)  # wrong
    second = store.record_answer(attempt, item, 0)  # right, but too late
    assert first.score == second.score == 0.0
    assert second == first
    answers = store.answers(attempt)
    assert len(answers) == 1
    assert answers[0].answer == 1 and answers[0].correct is False
    # A new attempt grades afresh.
    again = store.start_attempt("ada", seed=12)
    assert store.record_answer(again, item, 0).correct


def test_malformed_answer_is_refused_and_not_stored(store, bank):
    attempt = store.start_attempt("ada", seed=1)
    with pytest.raises(ValueError, match="must be a number"):
        store.record_answer(attempt, bank["capacity-direct"], "eight")
    assert store.answers(attempt) == []
    assert store.record_answer(attempt, bank["capacity-direct"], "8").correct


def test_progress_survives_a_restart(tmp_path, bank, clock):
    path = tmp_path / "progress.sqlite3"
    before = ProgressStore(path, clock=clock)
    attempt = before.start_attempt("ada", seed=77)
    before.record_answer(attempt, bank["control-tensors-all"], [0, 1])
    before.record_prediction("ada", "the_mistake", "corrupted", "corrupted")
    del before
    after = ProgressStore(path, clock=clock)  # the app restarted
    latest = after.latest_attempt("ada")
    assert latest is not None and (latest.id, latest.seed) == (attempt, 77)
    [answer] = after.answers(attempt)
    assert answer.item_id == "control-tensors-all"
    assert answer.answer == [0, 1]
    assert answer.score == pytest.approx(2 / 3)
    assert after.record_answer(attempt, bank["control-tensors-all"], [0, 1, 2]).score == pytest.approx(2 / 3)
    assert [p.held for p in after.predictions("ada")] == [True]


def test_elapsed_defaults_to_time_since_previous_event(store, bank, clock):
    attempt = store.start_attempt("ada", seed=1)
    clock.advance(12)
    store.record_answer(attempt, bank["choose-sentiment"], 0)
    clock.advance(30)
    store.record_answer(attempt, bank["capacity-direct"], 8)
    store.record_answer(attempt, bank["queue-delay-ms"], 100, elapsed_s=4.5)
    assert [a.elapsed_s for a in store.answers(attempt)] == [12.0, 30.0, 4.5]


def test_summary_scores_topics_and_revisit(store, bank):
    attempt = store.start_attempt("ada", seed=3)
    store.record_answer(attempt, bank["choose-sentiment"], 0)          # choosing 1/1
    store.record_answer(attempt, bank["control-tensors-all"], [0, 1])  # control-tensors 2/3
    store.record_answer(attempt, bank["capacity-direct"], 8)           # capacity 1/1
    store.record_answer(attempt, bank["queue-delay-ms"], 50)           # mechanics 0/1
    # predict-mistake unanswered: failure-modes 0/1
    s = store.summary(attempt, bank)
    assert s.max == 5 and s.answered == 4
    assert s.score == pytest.approx(2 + 2 / 3)
    assert list(s.topics) == ["choosing", "mechanics", "control-tensors", "capacity", "failure-modes"]
    assert s.topics["control-tensors"].fraction == pytest.approx(2 / 3)
    assert s.revisit == ("mechanics", "control-tensors", "failure-modes")
    assert s.missed == ("control-tensors-all", "queue-delay-ms", "predict-mistake")
    with pytest.raises(AttemptNotFound):
        store.summary(999, bank)


def test_reset_starts_one_learner_over(store, bank):
    a1 = store.start_attempt("ada", seed=1)
    store.record_answer(a1, bank["choose-sentiment"], 0)
    a2 = store.start_attempt("ada", seed=2)
    store.record_answer(a2, bank["choose-sentiment"], 1)
    b1 = store.start_attempt("bob", seed=3)
    store.record_answer(b1, bank["choose-sentiment"], 0)
    store.record_prediction("ada", "the_fix", "intact", "intact")

    assert store.reset("ada") == 2
    assert store.latest_attempt("ada") is None
    assert store.answers(a1) == [] and store.answers(a2) == []
    assert "ada" not in store.export_csv("ada")
    assert len(store.answers(b1)) == 1  # other learners untouched
    assert len(store.predictions("ada")) == 1  # lab predictions are not quiz progress
    fresh = store.start_attempt("ada", seed=4)
    assert store.record_answer(fresh, bank["choose-sentiment"], 0).correct


def test_export_csv_one_row_per_answered_item(store, bank, clock):
    a1 = store.start_attempt("ada", seed=1)
    store.record_answer(a1, bank["choose-sentiment"], 2)
    clock.advance(5)
    store.record_answer(a1, bank["control-tensors-all"], {2, 0})
    a2 = store.start_attempt("ada", seed=2)
    store.record_answer(a2, bank["capacity-direct"], "8")
    store.record_answer(store.start_attempt("bob", seed=3), bank["choose-sentiment"], 0)

    rows = list(csv.DictReader(io.StringIO(store.export_csv("ada"))))
    assert list(rows[0]) == ["attempt", "item", "topic", "type", "answer", "score", "correct", "answered_at"]
    assert [(r["attempt"], r["item"], r["topic"], r["type"], r["answer"], r["score"], r["correct"]) for r in rows] == [
        (str(a1), "choose-sentiment", "choosing", "single", "2", "0", "false"),
        (str(a1), "control-tensors-all", "control-tensors", "multiple", "[0, 2]", "0.666667", "false"),
        (str(a2), "capacity-direct", "capacity", "numeric", "8.0", "1", "true"),
    ]
    assert rows[0]["answered_at"] == "2025-01-01T12:00:00.000000+00:00"
    assert rows[1]["answered_at"] == "2025-01-01T12:00:05.000000+00:00"


def test_class_report_aggregates_per_item(store, bank):
    picks = {"ada": 1, "bob": 1, "cyd": 0, "dee": 2}
    for learner, key in picks.items():
        attempt = store.start_attempt(learner, seed=1)
        store.record_answer(attempt, bank["choose-sentiment"], key)
        store.record_answer(attempt, bank["capacity-direct"], 7 if learner != "cyd" else 8)
        if learner in ("ada", "bob"):
            store.record_answer(attempt, bank["control-tensors-all"], [0, 3] if learner == "ada" else [0, 1, 2])
    report = store.class_report(bank).set_index("item")
    assert list(report.index) == [i.id for i in bank]
    single = report.loc["choose-sentiment"]
    assert single["attempts"] == 4
    assert single["share_correct"] == pytest.approx(0.25)
    assert single["most_chosen_wrong"] == "Sequence batcher"
    assert single["most_chosen_wrong_count"] == 2
    multi = report.loc["control-tensors-all"]
    assert (multi["attempts"], multi["share_correct"], multi["most_chosen_wrong"]) == (2, 0.5, "BATCH_SIZE")
    assert multi["mean_score"] == pytest.approx(0.5)  # (0 + 1) / 2
    numeric = report.loc["capacity-direct"]
    assert numeric["most_chosen_wrong"] == "7 sequences" and numeric["most_chosen_wrong_count"] == 3
    unanswered = report.loc["predict-mistake"]
    assert unanswered["attempts"] == 0 and math.isnan(unanswered["share_correct"])
    assert pd.isna(unanswered["most_chosen_wrong"])  # pandas stores the missing text as NaN


def test_timed_attempt_closes_at_its_limit(store, bank, clock):
    attempt = store.start_attempt("ada", seed=5, timed=True, time_limit_s=60)
    clock.advance(30)
    first = store.record_answer(attempt, bank["choose-sentiment"], 0)
    clock.advance(30)  # exactly at the limit still counts
    store.record_answer(attempt, bank["capacity-direct"], 8)
    assert store.is_open(attempt)
    clock.advance(0.5)
    assert not store.is_open(attempt)
    with pytest.raises(AttemptClosed, match=f"attempt {attempt} is closed: its 60 s time limit ran out"):
        store.record_answer(attempt, bank["queue-delay-ms"], 100)
    # Re-submitting an item graded in time still returns its first grade.
    assert store.record_answer(attempt, bank["choose-sentiment"], 1) == first
    assert {a.item_id for a in store.answers(attempt)} == {"choose-sentiment", "capacity-direct"}


def test_finished_attempt_refuses_answers(store, bank, clock):
    attempt = store.start_attempt("ada", seed=5)
    done = store.finish_attempt(attempt)
    clock.advance(10)
    assert store.finish_attempt(attempt).finished_at == done.finished_at  # idempotent
    with pytest.raises(AttemptClosed, match="was finished"):
        store.record_answer(attempt, bank["choose-sentiment"], 0)


def test_attempt_argument_checks(store, bank):
    with pytest.raises(ValueError, match="time_limit_s > 0"):
        store.start_attempt("ada", seed=1, timed=True)
    with pytest.raises(ValueError, match="only applies to timed"):
        store.start_attempt("ada", seed=1, time_limit_s=30)
    with pytest.raises(ValueError, match="learner"):
        store.start_attempt("  ", seed=1)
    with pytest.raises(AttemptNotFound):
        store.record_answer(12345, bank["choose-sentiment"], 0)
    with pytest.raises(AttemptNotFound):
        store.finish_attempt(12345)


def test_latest_attempt_and_learners(store):
    assert store.latest_attempt("ada") is None
    store.start_attempt("ada", seed=1)
    second = store.start_attempt("ada", seed=2, timed=True, time_limit_s=90)
    store.start_attempt("bob", seed=3)
    latest = store.latest_attempt("ada")
    assert latest.id == second and latest.timed and latest.time_limit_s == 90
    assert [a.seed for a in store.attempts("ada")] == [1, 2]
    assert store.learners() == ["ada", "bob"]


def test_predictions(store):
    store.record_prediction("ada", "oldest_wrong", "intact", "corrupted")
    store.record_prediction("ada", "forgot_ready", "stalls", "times out", held=True)
    store.record_prediction("bob", "the_fix", "intact", "intact")
    got = store.predictions("ada")
    assert [(p.exercise, p.prediction, p.outcome, p.held) for p in got] == [
        ("oldest_wrong", "intact", "corrupted", False),
        ("forgot_ready", "stalls", "times out", True),
    ]
    assert got[0].at.isoformat() == "2025-01-01T12:00:00+00:00"
