"""Instructor tables: latest score per learner and the predictions overview."""
from __future__ import annotations

from app.quiz import instructor


def test_learner_scores_use_each_learners_latest_attempt(store, bank):
    first = store.start_attempt("ada", seed=1)
    store.record_answer(first, bank["choose-sentiment"], 0)  # right
    latest = store.start_attempt("ada", seed=2)
    store.record_answer(latest, bank["choose-sentiment"], 1)  # wrong
    store.start_attempt("bob", seed=3)
    store.record_prediction("cy", "the_mistake", "intact", "corrupted")  # lab only: no score row
    scores = instructor.learner_scores(store, bank).set_index("learner")
    assert list(scores.index) == ["ada", "bob"]
    assert scores.loc["ada", "attempts"] == 2 and scores.loc["ada", "latest_attempt"] == latest
    assert scores.loc["ada", "answered"] == 1 and scores.loc["ada", "score"] == 0
    assert scores.loc["ada", "max"] == len(bank)
    assert "choosing" in scores.loc["ada", "revisit"]


def test_predictions_overview_per_exercise(store):
    store.record_prediction("ada", "quiz:predict-x", "corrupted", "corrupted")
    store.record_prediction("bob", "quiz:predict-x", "intact", "corrupted")
    store.record_prediction("bob", "the_fix", "intact", "intact")
    frame = instructor.predictions(store)
    assert list(frame.columns) == instructor.PREDICTION_COLUMNS and len(frame) == 3
    per = instructor.predictions_by_exercise(frame).set_index("exercise")
    assert per.loc["quiz:predict-x", "runs"] == 2 and per.loc["quiz:predict-x", "learners"] == 2
    assert per.loc["quiz:predict-x", "held"] == 1 and per.loc["quiz:predict-x", "share_held"] == 0.5
    assert per.loc["quiz:predict-x", "observed_corrupted"] == 2
    assert per.loc["the_fix", "observed_corrupted"] == 0


def test_empty_store_gives_empty_tables(store, bank):
    assert instructor.learner_scores(store, bank).empty
    assert instructor.predictions_by_exercise(instructor.predictions(store)).empty


def test_the_class_report_counts_answers_by_key_and_words_them_in_the_banks_language(store, bank):
    from dataclasses import replace

    from app.quiz.bank import Bank

    item = bank["choose-sentiment"]
    wrong = next(o for o in item.options if not o.correct)
    for learner in ("ada", "bob"):  # one answered in English, one in another language: the same key
        store.record_answer(store.start_attempt(learner, seed=1), item, wrong.key)
    other = Bank(tuple(replace(i, options=tuple(replace(o, text=f"[xx] {o.text}") for o in i.options))
                       if i.id == item.id else i for i in bank), bank.path)
    english = store.class_report(bank).set_index("item").loc[item.id]
    translated = store.class_report(other).set_index("item").loc[item.id]
    assert english["most_chosen_wrong"] == wrong.text and english["most_chosen_wrong_count"] == 2
    assert translated["most_chosen_wrong"] == f"[xx] {wrong.text}" and translated["most_chosen_wrong_count"] == 2
    assert (translated["attempts"], translated["share_correct"]) == (english["attempts"], english["share_correct"])
