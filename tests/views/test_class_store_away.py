"""The class database away: the pages that need it say so in the learner's words and offer to try
again; the rest of the app works; once it is back, Try again carries on. A real PostgreSQL (the
suite's) and a port where none listens, never a mock."""
from __future__ import annotations

from streamlit.testing.v1 import AppTest

from app.lab import database
from app.lab.server import free_ports
from tests.app_pages import switch_to
from tests.views.conftest import MAIN, RUN_TIMEOUT_S

AWAY = "cannot be reached"


def _open(page: str) -> AppTest:
    at = AppTest.from_file(str(MAIN), default_timeout=RUN_TIMEOUT_S)
    at.run(timeout=RUN_TIMEOUT_S)
    return switch_to(at, page).run(timeout=RUN_TIMEOUT_S)


def test_the_quiz_says_the_database_is_away_the_lessons_work_and_try_again_recovers(server_env, data_dir, monkeypatch,
                                                                                   postgres_url, own_lab_cache):
    away = f"postgresql+psycopg://lab:secret@127.0.0.1:{free_ports(1)[0]}/lab"
    monkeypatch.setenv(database.URL_ENV, away)
    quiz = _open("quiz.py")
    assert not quiz.exception
    [shown] = [e.value for e in quiz.error if AWAY in e.value]
    assert ":secret@" not in shown and "127.0.0.1" in shown  # the address, never its password (the next step names secrets.toml)
    assert quiz.button(key="class-store-retry").label == "Try again"

    lesson = _open("lesson_01")
    assert not lesson.exception and not [e for e in lesson.error if AWAY in e.value]
    assert lesson.markdown, "the lesson still reads"

    monkeypatch.setenv(database.URL_ENV, postgres_url)  # the database is back
    quiz.button(key="class-store-retry").click().run(timeout=RUN_TIMEOUT_S)
    assert not quiz.exception and not [e for e in quiz.error if AWAY in e.value]
    assert quiz.radio, "the quiz's first question is on the page"
