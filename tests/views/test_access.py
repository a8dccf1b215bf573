"""Instructor key and learner identity on the real pages (AppTest through app/main.py).

The key is set with the environment variable (monkeypatch), as a class server would be.
"""
from __future__ import annotations

import logging

import pytest
from streamlit import config

from app.quiz import access_rules as rules
from app.quiz.bank import load_bank
from app.quiz.store import ProgressStore
from tests.views.conftest import RUN_TIMEOUT_S

BANK = load_bank()
SINGLE = next(i for i in BANK if i.type == "single" and len(i.options) >= 3)
RIGHT = next(iter(SINGLE.correct_keys))
KEY = "staff-room-7"


def texts(at) -> str:
    return "\n".join(str(e.value) for kind in ("title", "markdown", "caption", "success", "warning", "error", "info",
                                               "metric", "text")
                     for e in getattr(at, kind))


def answer_right(open_page, learner: str):
    at = open_page("quiz.py", learner=learner, seed="7", item=SINGLE.id)
    attempt = at.session_state["quiz-attempt"]
    at.radio(key=f"quiz-{attempt}-{SINGLE.id}").set_value(RIGHT)
    at.button(key=f"quiz-{attempt}-{SINGLE.id}-submit").click().run(timeout=RUN_TIMEOUT_S)
    assert not at.exception
    return at


def score(at) -> str:
    return next(m.value for m in at.markdown if m.value.startswith("**Score"))


@pytest.fixture()
def address():
    """Set Streamlit's server.address for one test; the default (unset) listens everywhere."""
    before = config.get_option("server.address")

    def _set(value):
        config.set_option("server.address", value)

    yield _set
    config.set_option("server.address", before)


@pytest.fixture()
def class_with_two(open_page):
    ada, bob = rules.make_learner_id("ada"), rules.make_learner_id("bob")
    answer_right(open_page, ada)
    ProgressStore().record_prediction(bob, "quiz:predict-the-fix", "corrupted", "intact")
    return ada, bob


def test_locked_without_the_key_shows_no_names_scores_or_exports(open_page, class_with_two, monkeypatch):
    monkeypatch.setenv(rules.ENV_KEY, KEY)
    at = open_page("instructor.py")
    assert not at.exception
    assert not at.dataframe and not at.download_button and not at.metric
    assert "ada" not in texts(at) and "bob" not in texts(at)
    assert any("for the instructor" in i.value for i in at.info)
    assert at.text_input(key="instructor-access-input").proto.type == at.text_input(
        key="instructor-access-input").proto.PASSWORD
    assert "key" not in {k.lower() for k in at.query_params}  # nothing about the key in the link


def test_wrong_key_is_refused_with_a_clear_message(open_page, class_with_two, monkeypatch):
    monkeypatch.setenv(rules.ENV_KEY, KEY)
    at = open_page("instructor.py")
    at.text_input(key="instructor-access-input").input(KEY + "x")
    at.button(key="instructor-access-submit").click().run(timeout=RUN_TIMEOUT_S)
    assert not at.exception
    assert any("not the instructor key" in e.value for e in at.error)
    assert not at.dataframe and not at.download_button
    assert "ada" not in texts(at)


def test_right_key_opens_names_scores_and_exports_without_anyones_key(open_page, class_with_two, monkeypatch):
    ada, bob = class_with_two
    monkeypatch.setenv(rules.ENV_KEY, KEY)
    at = open_page("instructor.py")
    at.text_input(key="instructor-access-input").input(KEY)
    at.button(key="instructor-access-submit").click().run(timeout=RUN_TIMEOUT_S)
    assert not at.exception and not at.error
    per_item, per_learner, per_exercise, every = (d.value for d in at.dataframe[:4])
    assert list(per_learner["learner"]) == ["ada"]
    assert list(every["learner"]) == ["bob"]
    assert {b.key for b in at.download_button} == {"instructor-items-csv", "instructor-scores-csv",
                                                   "instructor-predictions-csv", "instructor-item-analysis-csv"}
    # The frames the exports are written from hold names only: an id is that learner's key.
    for frame in [d.value for d in at.dataframe]:
        assert not frame.astype(str).apply(lambda c: c.str.contains(rules.parse_learner_id(ada)[1])).any().any()
        assert not frame.astype(str).apply(lambda c: c.str.contains(rules.parse_learner_id(bob)[1])).any().any()
    # Unlocked for this browser session: a rerun stays open; the key never entered the URL.
    at.run(timeout=RUN_TIMEOUT_S)
    assert at.dataframe and KEY not in str(dict(at.query_params))
    # Locking again hides everything.
    at.button(key="instructor-access-lock").click().run(timeout=RUN_TIMEOUT_S)
    assert not at.dataframe and not at.download_button


def test_no_key_and_listening_everywhere_warns_on_the_page(open_page, class_with_two, address, monkeypatch):
    monkeypatch.delenv(rules.ENV_KEY, raising=False)
    address("0.0.0.0")
    at = open_page("instructor.py")
    assert not at.exception
    assert any("no instructor key is set" in w.value for w in at.warning)
    assert at.dataframe  # open, as on a laptop: the warning says so
    address("127.0.0.1")
    at = open_page("instructor.py")
    assert not any("no instructor key" in w.value for w in at.warning)
    assert at.dataframe
    monkeypatch.setenv(rules.ENV_KEY, KEY)
    address("0.0.0.0")
    at = open_page("instructor.py")
    assert not any("no instructor key" in w.value for w in at.warning)  # a key is set: nothing to warn about


def test_another_link_and_a_guessed_name_do_not_open_a_learners_quiz(open_page):
    ada = rules.make_learner_id("ada")
    mine = answer_right(open_page, ada)
    assert score(mine).startswith("**Score 1 / ")
    attempt = mine.session_state["quiz-attempt"]
    assert mine.query_params["learner"] == ada  # the link is ada's key to come back

    back = open_page("quiz.py", learner=ada)
    assert back.session_state["quiz-attempt"] == attempt and score(back).startswith("**Score 1 / ")

    for other in (rules.make_learner_id("bob"), rules.make_learner_id("ada"), "ada"):
        at = open_page("quiz.py", learner=other, item=SINGLE.id)
        assert not at.exception
        assert at.session_state["quiz-attempt"] != attempt
        assert score(at).startswith("**Score 0 / ") and "· 0 of " in score(at)
        assert not at.button(key=f"quiz-{at.session_state['quiz-attempt']}-{SINGLE.id}-submit").disabled
        assert at.query_params["learner"] != ada
    # The bare name got a fresh id under that name, and the page said why.
    assert rules.learner_name(at.query_params["learner"]) == "ada" and rules.is_learner_id(at.query_params["learner"])
    assert any("holds no key" in i.value for i in at.info)
    assert [a.id for a in ProgressStore().attempts(ada)] == [attempt]


def test_a_new_name_keeps_the_learners_progress_and_opens_no_one_elses(open_page):
    bob = rules.make_learner_id("bob")
    answer_right(open_page, bob)
    ada = rules.make_learner_id("ada")
    at = answer_right(open_page, ada)
    attempt = at.session_state["quiz-attempt"]
    assert at.text_input(key="quiz-name").value == "ada"  # the name, never the key

    at.text_input(key="quiz-name").input("bob").run(timeout=RUN_TIMEOUT_S)  # bob's name, not bob's key
    assert not at.exception
    link = at.query_params["learner"]
    assert rules.learner_name(link) == "bob" and rules.parse_learner_id(link)[1] == rules.parse_learner_id(ada)[1]
    assert at.session_state["quiz-attempt"] == attempt and score(at).startswith("**Score 1 / ")
    assert [a.id for a in ProgressStore().attempts(link)] == [attempt]
    assert len(ProgressStore().attempts(bob)) == 1  # the other bob's progress is untouched, and unseen


def test_an_open_server_is_logged_once_per_process(open_page, address, monkeypatch, caplog):
    from app.ui import access

    monkeypatch.delenv(rules.ENV_KEY, raising=False)
    address("0.0.0.0")
    monkeypatch.setattr(access, "_startup_warned", False)  # as in a fresh `streamlit run`
    with caplog.at_level(logging.WARNING, logger="app.access"):
        open_page("quiz.py")
        open_page("instructor.py")
    logged = [r.getMessage() for r in caplog.records if r.name == "app.access"]
    assert len(logged) == 1 and rules.ENV_KEY in logged[0] and "0.0.0.0" in logged[0]

    caplog.clear()
    monkeypatch.setenv(rules.ENV_KEY, KEY)
    monkeypatch.setattr(access, "_startup_warned", False)
    with caplog.at_level(logging.WARNING, logger="app.access"):
        open_page("quiz.py")
    assert not [r for r in caplog.records if r.name == "app.access"]


def test_the_key_form_and_its_refusal_read_in_chinese(open_page, monkeypatch, address):
    from tests.i18n.test_pages_in_chinese import untranslated

    monkeypatch.setenv(rules.ENV_KEY, KEY)
    at = open_page("instructor.py", lang="zh")
    assert at.text_input(key="instructor-access-input").label == "讲师密钥"
    at.text_input(key="instructor-access-input").input("nope")
    at.button(key="instructor-access-submit").click().run(timeout=RUN_TIMEOUT_S)
    assert at.error and not untranslated(at), untranslated(at)
    monkeypatch.delenv(rules.ENV_KEY)
    address("0.0.0.0")
    at = open_page("instructor.py", lang="zh")
    assert at.warning and not untranslated(at), untranslated(at)
