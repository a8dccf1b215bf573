"""Every page opened with ?lang=zh shows Chinese: no exception, and no English prose in any
title, text, message, widget label or option (code, config, names and Triton's text aside)."""
from __future__ import annotations

import pytest

from app.i18n import words
from tests.app_pages import view_names
from tests.exercises.conftest import show_result
from tests.i18n.text_checks import english_label, english_runs, has_cjk, shown_texts
from tests.views.conftest import RUN_TIMEOUT_S
from tests.views.learners import link_id

PAGES = view_names()  # every page of app/main.py's navigation, in its order


def untranslated(at) -> list[tuple[str, str, list[str]]]:
    return [(what, text[:90], runs) for what, text in shown_texts(at) if (runs := english_runs(text))]


@pytest.mark.parametrize("page", PAGES)
def test_page_in_chinese(open_page, page):
    at = open_page(page, lang="zh")
    assert not at.exception, [e.value for e in at.exception]
    texts = shown_texts(at)
    assert texts and any(has_cjk(t) for _, t in texts)
    assert at.title and not english_label(at.title[0].value), "the title is Chinese (or the product's name)"
    found = untranslated(at)
    assert not found, "\n".join(f"{w}: {t!r} -> {r}" for w, t, r in found[:30])


def test_the_english_page_is_english(open_page):
    at = open_page("home.py", lang="en")
    assert not at.exception
    assert not any(has_cjk(t) for what, t in shown_texts(at) if what != "selectbox option"), "only the language names"


def test_the_walk_sees_english_when_it_is_there(open_page):
    """The check itself: the English home page is full of English runs."""
    assert len(untranslated(open_page("home.py", lang="en"))) > 3


def test_switching_language_keeps_the_page_and_its_query(open_page):
    at = open_page("quiz.py", lang="en", seed="5")
    assert [t.value for t in at.title] == [words("en")("Quiz")]
    at.sidebar.selectbox(key="language").set_value("zh").run(timeout=RUN_TIMEOUT_S)
    assert not at.exception, [e.value for e in at.exception]
    assert at.query_params["lang"] in ("zh", ["zh"])
    assert at.query_params.get("seed") in ("5", ["5"])
    # Still the quiz: its own title, in Chinese, and nothing else's.
    assert [t.value for t in at.title] == [words("zh")("Quiz")] and has_cjk(at.title[0].value)


def test_a_lab_run_reads_in_chinese(open_page):
    """Results are where the engine's codes become words: verdicts, details, figures, the log panel."""
    at = open_page("lab.py", learner=link_id("zh-walk"), lang="zh", sessions="4")
    for preset in ("the_mistake", "the_fix"):
        at.button(key=f"lab.preset.{preset}").click().run(timeout=RUN_TIMEOUT_S)
        at.radio(key="lab.prediction").set_value("intact").run(timeout=RUN_TIMEOUT_S)
        at.button(key="lab.run").click().run(timeout=RUN_TIMEOUT_S)
        assert not at.exception, [e.value for e in at.exception]
        found = untranslated(at)
        assert not found, preset + "\n" + "\n".join(f"{w}: {t!r} -> {r}" for w, t, r in found[:30])


@pytest.mark.parametrize("name, choice", [("id_collision", "merged"), ("forgot_ready", "intact")])
def test_an_exercise_result_reads_in_chinese(open_page, exercise_result, name, choice):
    """The session's one real run of the exercise, where the page keeps a result after Run."""
    at = open_page("exercises.py", lang="zh")
    show_result(at, name, choice, exercise_result(name))
    assert len(at.dataframe) >= 1, "the measured table is shown"
    found = untranslated(at)
    assert not found, "\n".join(f"{w}: {t!r} -> {r}" for w, t, r in found[:30])
