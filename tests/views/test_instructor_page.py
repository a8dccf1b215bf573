"""The instructor page aggregates what learners did on the quiz page."""
from __future__ import annotations

import pytest

from app.quiz.access_rules import ENV_KEY
from app.quiz.bank import load_bank
from app.quiz.store import ProgressStore
from app.quiz.translation import translate, translation_path
from tests.views.conftest import RUN_TIMEOUT_S
from tests.views.learners import link_id

BANK = load_bank()
SINGLE = next(i for i in BANK if i.type == "single" and len(i.options) >= 3)
RIGHT = next(iter(SINGLE.correct_keys))
WRONG = [o for o in SINGLE.options if not o.correct]


@pytest.fixture(autouse=True)
def no_instructor_key(monkeypatch):
    """These tests read the open page, as on a laptop; tests/views/test_access.py covers the key."""
    monkeypatch.delenv(ENV_KEY, raising=False)


def answer_on_the_quiz_page(open_page, learner: str, key: int) -> None:
    at = open_page("quiz.py", learner=link_id(learner), seed="7", item=SINGLE.id)
    attempt = at.session_state["quiz-attempt"]
    at.radio(key=f"quiz-{attempt}-{SINGLE.id}").set_value(key)
    at.button(key=f"quiz-{attempt}-{SINGLE.id}-submit").click().run(timeout=RUN_TIMEOUT_S)
    assert not at.exception


def test_empty_class_shows_no_attempts(open_page):
    at = open_page("instructor.py")
    assert not at.exception and not at.error
    assert any("No quiz attempts yet" in i.value for i in at.info)


def test_aggregates_every_learner_per_item(open_page):
    answer_on_the_quiz_page(open_page, "ins-ada", RIGHT)
    answer_on_the_quiz_page(open_page, "ins-bob", WRONG[0].key)
    answer_on_the_quiz_page(open_page, "ins-cy", WRONG[0].key)
    ProgressStore().record_prediction(link_id("ins-bob"), "quiz:predict-the-fix", "corrupted", "intact")

    at = open_page("instructor.py")
    assert not at.exception and not at.error
    per_item, per_learner, per_exercise = (d.value for d in at.dataframe[:3])
    row = per_item.set_index("item").loc[SINGLE.id]
    assert row["attempts"] == 3 and abs(row["share_correct"] - 1 / 3) < 1e-9
    assert row["most_chosen_wrong"] == WRONG[0].text and row["most_chosen_wrong_count"] == 2
    assert len(per_item) == 1  # only answered items, by default

    scores = per_learner.set_index("learner")
    assert list(scores.index) == ["ins-ada", "ins-bob", "ins-cy"]
    assert scores.loc["ins-ada", "score"] == 1 and scores.loc["ins-bob", "score"] == 0
    assert (scores["max"] == len(BANK)).all() and (scores["answered"] == 1).all()

    exercise = per_exercise.set_index("exercise").loc["quiz:predict-the-fix"]
    assert exercise["runs"] == 1 and exercise["held"] == 0

    assert [m.value for m in at.metric] == ["3", f"1 of {len(BANK)}", "3"]
    assert {b.key for b in at.download_button} >= {"instructor-items-csv", "instructor-scores-csv",
                                                    "instructor-predictions-csv"}
    # Every item, answered or not, once the toggle is off.
    at.toggle(key="instructor-only-answered").set_value(False).run(timeout=RUN_TIMEOUT_S)
    assert len(at.dataframe[0].value) == len(BANK)


def test_answers_given_in_either_language_count_together_in_chinese(open_page):
    answer_on_the_quiz_page(open_page, "ins-en", RIGHT)
    at = open_page("quiz.py", learner=link_id("ins-zh"), seed="7", item=SINGLE.id, lang="zh")
    attempt = at.session_state["quiz-attempt"]
    at.radio(key=f"quiz-{attempt}-{SINGLE.id}").set_value(WRONG[0].key)
    at.button(key=f"quiz-{attempt}-{SINGLE.id}-submit").click().run(timeout=RUN_TIMEOUT_S)
    assert not at.exception

    at = open_page("instructor.py", lang="zh")
    assert not at.exception, [e.value for e in at.exception]
    assert at.title[0].value == "讲师视图"
    per_item = at.dataframe[0].value
    row = per_item.set_index("item").loc[SINGLE.id]
    assert row["attempts"] == 2 and abs(row["share_correct"] - 0.5) < 1e-9
    # The page's bank is in the instructor's language: the prompt and the wrong option read in it.
    words = translate(BANK, "zh") if translation_path("zh").exists() else BANK
    assert row["prompt"] == words[SINGLE.id].prompt
    assert row["most_chosen_wrong"] == words[SINGLE.id].option(WRONG[0].key).text
    assert [m.label for m in at.metric] == ["学员", "至少被作答过一次的题目", "作答"]
