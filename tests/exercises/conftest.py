"""Helpers for the exercise page tests. Each exercise runs ONCE per test session on the real
server (the session fixture exercise_result, tests/conftest.py); one page test presses Run end to
end, the others hand the page that cached result where it keeps one and read what it draws.
"""
from __future__ import annotations

from pathlib import Path

import pytest
from streamlit.testing.v1 import AppTest

PAGE = Path(__file__).resolve().parents[2] / "app" / "views" / "exercises.py"
TIMEOUT_S = 180
RESULT_KEY = "exercise-result-{}"  # app/views/exercises.py RESULT_KEY: where the page keeps a result


@pytest.fixture()
def page(server_env, tmp_path, monkeypatch):
    """The exercises page in AppTest, with a private progress store, on the session's server."""
    monkeypatch.setenv("TRITON_LAB_DATA", str(tmp_path / "lab-data"))
    at = AppTest.from_file(str(PAGE), default_timeout=TIMEOUT_S).run(timeout=TIMEOUT_S)
    assert not at.exception, [e.value for e in at.exception]
    return at


def predict_and_run(at, name: str, choice: str) -> AppTest:
    """Choose the exercise, predict and press Run: the exercise runs on the server."""
    at.selectbox(key="exercise-name").set_value(name).run()
    at.radio(key=f"exercise-{name}-prediction").set_value(choice).run()
    at.button(key=f"exercise-{name}-run").click().run(timeout=TIMEOUT_S)
    assert not at.exception, [e.value for e in at.exception]
    return at


def show_result(at, name: str, choice: str, result, bugs: bool = False) -> AppTest:
    """The page with `result` where a run would have left it, for the prediction `choice`; with
    bugs, the page may show a bug's traceback box (a test that breaks a part of the page on purpose)."""
    at.selectbox(key="exercise-name").set_value(name).run()
    at.session_state[RESULT_KEY.format(name)] = (choice, result)
    at.run(timeout=TIMEOUT_S)
    assert bugs or not at.exception, [e.value for e in at.exception]
    return at


def judgement(at, name: str, choice: str, result, _) -> tuple[list[str], str]:
    """(what the page says about the prediction, what it should say), the latter from the result
    and the words: held, or not, and what the server did."""
    from app.i18n import N_
    from app.registry import exercise_words as text

    seen = text.option(name, result.outcome, _)
    if result.held(choice):
        return [s.value for s in at.success], _.render(N_("Your prediction held. The server did this: {seen:text}"), seen=seen)
    return [w.value for w in at.warning], _.render(N_("Your prediction did not hold. The server did this: {seen:text}"), seen=seen)
