"""The generator's exercises on the Failure modes page (app/views/exercises.py) in AppTest: a generation exercise
pressed Run end to end in English, and a real result of each shown in Chinese, its charts and words in Chinese."""
from __future__ import annotations

import pytest
from streamlit.testing.v1 import AppTest

from app.generation.exercises.family import EXERCISES as GENERATION
from app.i18n import words
from app.registry import exercise_words as text
from app.registry import families
from tests.exercises.conftest import PAGE, TIMEOUT_S, judgement, predict_and_run, show_result


@pytest.fixture()
def page(server_env, tmp_path, monkeypatch):
    monkeypatch.setenv("TRITON_LAB_DATA", str(tmp_path / "lab-data"))
    at = AppTest.from_file(str(PAGE), default_timeout=TIMEOUT_S).run(timeout=TIMEOUT_S)
    assert not at.exception, [e.value for e in at.exception]
    return at


def test_a_generation_exercise_runs_from_the_page_and_judges_the_prediction(page, exercise_result):
    name = "head_of_line"
    assert families.family_of(name) is GENERATION
    at = predict_and_run(page, name, "same")
    choice, result = at.session_state[f"exercise-result-{name}"]
    exercise_result.keep(name, result)
    said, wanted = judgement(at, name, choice, result, words("en"))
    assert wanted in said
    assert len(at.get("plotly_chart")) == 3  # both timelines and the latencies
    assert any(text.finding(name, f, words("en")) in m.value for f in result.findings for m in at.markdown)


@pytest.mark.parametrize("name", list(GENERATION))
def test_each_generation_exercise_reads_in_chinese(name, exercise_result, server_env, tmp_path, monkeypatch):
    monkeypatch.setenv("TRITON_LAB_DATA", str(tmp_path / "lab-data"))
    at = AppTest.from_file(str(PAGE), default_timeout=TIMEOUT_S)
    at.query_params["lang"] = "zh"
    at.run(timeout=TIMEOUT_S)
    zh = words("zh")
    result = exercise_result(name)
    at = show_result(at, name, result.exercise.correct, result)
    assert at.subheader[0].value == text.title(name, zh) != text.title(name, words("en"))
    assert len(at.get("plotly_chart")) >= 1
    captions = [c.value for c in at.caption]
    charts = families.member(name).figures.figures(result, zh)
    assert all(c.summary in captions for c in charts)
    assert text.explanation(result, zh) in "\n".join(m.value for m in at.markdown)
