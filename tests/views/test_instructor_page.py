"""The instructor page aggregates what learners did on the quiz page."""
from __future__ import annotations

import pytest

from app.i18n import words
from app.quiz.access_rules import ENV_KEY
from app.quiz.bank import load_bank
from app.quiz.store import ProgressStore
from app.quiz.translation import translate, translation_path
from app.ui.quiz_feedback import TOPIC_WORDS
from tests.i18n.test_pages_in_chinese import untranslated
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

    assert [m.value for m in at.metric[:3]] == ["3", f"1 of {len(BANK)}", "3"]  # then the server's memory
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
    assert [m.label for m in at.metric[:3]] == ["学员", "至少被作答过一次的题目", "作答"]
    assert [m.label for m in at.metric[3:]] == ["内存预算", "已加载部署占用", "模型进程"]


def record(learner: str, item, answer) -> None:
    """One answer in the learner's own attempt, straight into the page's store."""
    store = ProgressStore()
    latest = store.latest_attempt(link_id(learner))
    attempt_id = latest.id if latest else store.start_attempt(link_id(learner), seed=1)
    store.record_answer(attempt_id, item, answer)


def frame_with(at, column: str):
    return next(d.value for d in at.dataframe if column in d.value.columns)


def test_the_item_analysis_shows_facility_discrimination_and_option_counts(open_page):
    multiple = next(i for i in BANK if i.type == "multiple" and i.topic != SINGLE.topic)
    wrong_pick = next(o.key for o in multiple.options if not o.correct)
    record("ia-ada", SINGLE, RIGHT)
    record("ia-ada", multiple, sorted(multiple.correct_keys))  # all right: 1 point
    record("ia-bob", SINGLE, WRONG[0].key)
    record("ia-bob", multiple, [wrong_pick])  # only a wrong pick: 0 points
    record("ia-cy", SINGLE, WRONG[0].key)  # cy leaves the multiple item unanswered

    at = open_page("instructor.py")
    assert not at.exception, [e.value for e in at.exception]
    assert "Item analysis" in [s.value for s in at.subheader]
    items = frame_with(at, "facility").set_index("item")
    assert list(items.index) == [i.id for i in BANK if i.id in (SINGLE.id, multiple.id)]  # only answered ones
    single = items.loc[SINGLE.id]
    assert single["answered"] == 3 and abs(single["facility"] - 1 / 3) < 1e-9
    # SINGLE's scores [1, 0, 0] against the rest (the multiple item) [1, 0, 0]: the same pattern, r = 1.
    assert abs(single["discrimination"] - 1) < 1e-9 and single["flags"] == ""
    counts = {RIGHT: 1, WRONG[0].key: 2}
    letters = "ABCDEFGH"
    assert single["options"] == ", ".join(f"{letters[k]}{' ✓' if o.correct else ''}: {counts.get(o.key, 0)}"
                                          for k, o in enumerate(SINGLE.options))
    assert items.loc[multiple.id, "answered"] == 2 and items.loc[multiple.id, "facility"] == 0.5

    options = frame_with(at, "letter")
    picked = options[options["item"] == multiple.id].set_index("option")["chosen"]
    assert picked[multiple.option(wrong_pick).text] == 1
    assert all(picked[multiple.option(k).text] == 1 for k in multiple.correct_keys)

    topics = frame_with(at, "mastery").set_index("topic")
    # Three counted attempts; SINGLE's topic has its share of points per learner (1/n, 0, 0) over its n items.
    n = sum(1 for i in BANK if i.topic == SINGLE.topic)
    assert abs(topics.loc[TOPIC_WORDS[SINGLE.topic], "mastery"] - (1 / n) / 3) < 1e-9
    assert "instructor-item-analysis-csv" in {b.key for b in at.download_button}


def test_the_item_analysis_reads_in_chinese(open_page):
    record("ia-zh-ada", SINGLE, WRONG[0].key)
    record("ia-zh-bob", SINGLE, WRONG[-1].key)
    at = open_page("instructor.py", lang="zh")
    assert not at.exception, [e.value for e in at.exception]
    zh = words("zh")
    assert zh("Item analysis") in [s.value for s in at.subheader] and zh("Item analysis") != "Item analysis"
    row = frame_with(at, "facility").set_index("item").loc[SINGLE.id]
    assert row["facility"] == 0 and row["flags"] == zh("too hard")  # nobody right: at most 10 %
    found = untranslated(at)
    assert not found, found[:20]


def test_the_page_shows_the_servers_memory_budget_and_what_it_unloaded(open_page):
    at = open_page("instructor.py")
    assert not at.exception and not at.error
    assert "The server's memory" in [s.value for s in at.subheader]
    metrics = {m.label: m.value for m in at.metric}
    assert metrics["Memory budget"].endswith(" MB") and int(metrics["Memory budget"][:-3].replace(",", "")) > 0
    assert "Held by loaded deployments" in metrics and "Model processes" in metrics
    assert any("Unloaded to make room" in m.value for m in at.markdown)
