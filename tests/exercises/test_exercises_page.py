"""The exercises page in AppTest, against the session's real Triton server. One test presses Run
(the whole path, the prediction stored); the others read a cached result (conftest.show_result)."""
from __future__ import annotations

from streamlit.testing.v1 import AppTest

from app.i18n import words
from app.lab.server import proxy
from app.quiz.store import ProgressStore
from app.registry import exercise_figures as exercise_charts
from app.registry import exercise_words as text
from app.registry import families
from tests.exercises.conftest import PAGE, RESULT_KEY, TIMEOUT_S, predict_and_run


def test_page_lists_every_exercise_and_asks_for_a_prediction_first(page):
    assert page.selectbox(key="exercise-name").options == [text.title(n, words("en")) for n in families.names()]
    name = page.selectbox(key="exercise-name").value
    assert page.button(key=f"exercise-{name}-run").disabled
    assert not page.error


def test_running_an_exercise_shows_evidence_and_records_the_prediction(page, exercise_result):
    # One run of the collision merges the two sequences (the taught outcome), so the
    # prediction "refused" must be shown, and stored, as not holding. `merged` is certain, not
    # timing: a START is never refused, and a shared ID puts both sessions on one cell (why:
    # the `result` fixture of tests/recogniser/exercises/test_id_collision.py).
    at = predict_and_run(page, "id_collision", "refused")
    assert f'RESULT_KEY = "{RESULT_KEY}"' in PAGE.read_text(), "where the page keeps a result, as the other page tests put it"
    _, result = at.session_state[RESULT_KEY.format("id_collision")]
    exercise_result.keep("id_collision", result)  # a real run: the tests that only read one reuse it
    assert not at.error, [e.value for e in at.error]
    merged = text.option("id_collision", "merged", words("en"))
    assert [w.value for w in at.warning] == [f"Your prediction did not hold. The server did this: {merged}"]
    assert not at.success
    assert not at.info, "the taught outcome showed, so no 'timing decides' note"
    assert len(at.get("plotly_chart")) == len(exercise_charts.figures(result, words("en")))
    assert "**Why**\n\n" + text.explanation(result, words("en")) in [m.value for m in at.markdown]
    records = ProgressStore().predictions(at.session_state["learner"])
    assert [(r.exercise, r.prediction, r.outcome, r.held) for r in records] == [
        ("exercise:id_collision", "refused", "merged", False)
    ]


def test_missing_nginx_is_a_clear_error_not_a_traceback(page, monkeypatch):
    monkeypatch.setenv("PATH", "/nonexistent")
    monkeypatch.setattr(proxy, "SEARCH", ())
    at = predict_and_run(page, "sticky_routing", "refused")
    assert any("apt-get install nginx-light" in e.value for e in at.error)


def test_the_page_in_chinese_names_every_exercise_in_chinese(server_env, tmp_path, monkeypatch):
    monkeypatch.setenv("TRITON_LAB_DATA", str(tmp_path / "lab-data"))
    at = AppTest.from_file(str(PAGE), default_timeout=TIMEOUT_S)
    at.query_params["lang"] = "zh"
    at.run(timeout=TIMEOUT_S)
    assert not at.exception, [e.value for e in at.exception]
    assert at.title[0].value == "故障模式"
    zh = words("zh")
    assert at.selectbox(key="exercise-name").options == [text.title(n, zh) for n in families.names()]
    name = at.selectbox(key="exercise-name").value
    assert at.radio(key=f"exercise-{name}-prediction").options == [text.option(name, k, zh) for k in families.get(name).options]
    assert at.button(key=f"exercise-{name}-run").label == "在服务器上运行"
