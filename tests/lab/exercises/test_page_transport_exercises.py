"""The pipelined-client and cancelled-request exercises on the exercises page (AppTest, real server)."""
from __future__ import annotations

from pathlib import Path

import pytest
from streamlit.testing.v1 import AppTest

from app.lab import exercises

PAGE = Path(__file__).resolve().parents[3] / "app" / "views" / "exercises.py"
TIMEOUT_S = 180


@pytest.mark.parametrize("name, charts", [("pipelined_client", 3), ("cancelled_request", 1)])
def test_exercise_runs_on_the_page_and_judges_the_prediction(server_env, tmp_path, monkeypatch, name, charts):
    monkeypatch.setenv("TRITON_LAB_DATA", str(tmp_path / "lab-data"))
    at = AppTest.from_file(str(PAGE), default_timeout=TIMEOUT_S).run(timeout=TIMEOUT_S)
    at.selectbox(key="exercise-name").set_value(name).run()
    at.radio(key=f"exercise-{name}-prediction").set_value(exercises.get(name).correct).run()
    at.button(key=f"exercise-{name}-run").click().run(timeout=TIMEOUT_S)
    assert not at.exception, [e.value for e in at.exception]
    assert not at.error, [e.value for e in at.error]
    assert len(at.get("plotly_chart")) >= charts
    assert any("**Why**" in m.value for m in at.markdown)
    # The learner predicted what the lesson teaches; the page must say it held only when this run
    # showed it, and the run's own outcome decides which message that is.
    shown = [s.value for s in at.success] + [w.value for w in at.warning]
    _, result = at.session_state[f"exercise-result-{name}"]  # the page's RESULT_KEY
    expected = "Your prediction held" if result.as_taught else "Your prediction did not hold"
    assert any(v.startswith(expected) for v in shown), shown
