"""A third language that is only files: the pseudo-locale (tests/i18n/pseudo.py) is built from the
English sources into a language pack, named in TRITON_LAB_LOCALES, and every page is walked in it.
No Python module names it; any ASCII word of the English sources left on a page (code, fields,
quoted Triton text and the names every translation keeps aside) fails, naming the word, the text
and the page."""
from __future__ import annotations

import pytest

from app.content.glossary import load_glossary
from app.content.lessons import load_lessons, load_translated
from app.i18n import LOCALES_ENV, catalogs, languages, words
from app.quiz.bank import load_bank
from app.quiz.translation import translate
from tests.app_pages import view_names
from tests.exercises.conftest import show_result
from tests.i18n.pseudo import LANG, english_left, pseudo
from tests.i18n.text_checks import shown_texts
from tests.views.conftest import RUN_TIMEOUT_S
from tests.views.learners import link_id

PAGES = view_names()


@pytest.fixture()
def in_pseudo(pseudo_locales, monkeypatch):
    monkeypatch.setenv(LOCALES_ENV, str(pseudo_locales))
    return LANG


def english_on(at, page: str) -> list[str]:
    """'page: what: [words] in text' for every shown text with English left."""
    return [f"{page}: {what}: {left} in {text[:100]!r}" for what, text in shown_texts(at) if (left := english_left(text))]


def test_the_pseudo_locale_is_a_language_of_files_only(in_pseudo):
    assert LANG in languages() and languages()[0] == "en"
    translated = load_translated(LANG)
    assert not translated.fallback and not translated.problems, (translated.fallback, translated.problems)
    assert [lesson.anchors for lesson in translated.lessons] == [lesson.anchors for lesson in load_lessons()]
    assert [i.id for i in translate(load_bank(), LANG)] == [i.id for i in load_bank()]
    assert all(term.word(LANG) != term.en for term in load_glossary())
    assert words(LANG)("Quiz") != "Quiz" and words(LANG).render("{n:count} of {total:count}", n=3, total=1204).startswith("[3 ")


def test_without_the_pack_it_is_gone(pseudo_locales, monkeypatch):
    monkeypatch.delenv(LOCALES_ENV, raising=False)
    assert LANG not in languages()


def test_pseudo_keeps_every_field_and_code_span():
    for message in catalogs.read(catalogs.TEMPLATE):
        for english in message.id if isinstance(message.id, tuple) else (message.id,):
            if english:
                assert catalogs.fields(pseudo(english)) == catalogs.fields(english), english
                assert english_left(pseudo(english)) == [], english


def test_the_check_sees_english_when_it_is_there(open_page):
    """The check itself: the English home page is full of English words."""
    assert len(english_on(open_page("home.py", lang="en"), "home.py")) > 3


@pytest.mark.parametrize("page", PAGES)
def test_every_page_in_the_pseudo_locale(in_pseudo, open_page, page):
    at = open_page(page, lang=LANG)
    assert not at.exception, [e.value for e in at.exception]
    assert shown_texts(at)
    found = english_on(at, page)
    assert not found, f"{len(found)} texts with English left:\n" + "\n".join(found[:40])


def test_a_lab_run_in_the_pseudo_locale(in_pseudo, open_page):
    """The lab's results are words built from the engine's codes: verdicts, details, the log panel."""
    at = open_page("lab.py", learner=link_id("qps-walk"), lang=LANG, sessions="4")
    at.button(key="lab.preset.the_mistake").click().run(timeout=RUN_TIMEOUT_S)
    at.radio(key="lab.prediction").set_value("intact").run(timeout=RUN_TIMEOUT_S)
    at.button(key="lab.run").click().run(timeout=RUN_TIMEOUT_S)
    assert not at.exception, [e.value for e in at.exception]
    found = english_on(at, "lab.py after a run")
    assert not found, "\n".join(found[:40])


def test_an_exercise_result_in_the_pseudo_locale(in_pseudo, open_page, exercise_result):
    at = open_page("exercises.py", lang=LANG)
    show_result(at, "id_collision", "merged", exercise_result("id_collision"))
    assert len(at.dataframe) >= 1
    found = english_on(at, "exercises.py with a result")
    assert not found, "\n".join(found[:40])


def test_a_phrase_of_the_english_left_in_a_translation_is_found_in_any_script():
    from tests.i18n.text_checks import kept_english

    english = "The server refused the request. Nothing runs."
    assert kept_english("服务器拒绝了：The server refused the request", english) == ["The server refused the request"]
    assert kept_english("[Ţĥé šéŕṽéŕ ŕéƒûšéð ţĥé ŕéǫûéšţ ~~] `the server refused the request`", english) == []
    assert kept_english("max_batch_size 为 8", "max_batch_size is 8") == []
