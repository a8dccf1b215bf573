"""The exercises page's evidence around a run: the server log panel, and charts that fail
without taking the rest of the result with them (AppTest, the session's real Triton)."""
from __future__ import annotations

from app.charts import exercises as exercise_charts
from tests.lab.exercises.conftest import predict_and_run


def test_id_collision_quotes_the_servers_conflict_warning_in_the_log_panel(page):
    at = predict_and_run(page, "id_collision", "merged")
    panel = [e for e in at.expander if e.label.startswith("Server log")]
    assert [e.label for e in panel] == ["Server log: 1 line(s) of evidence"]
    lines = panel[0].dataframe[0].value
    assert lines["level"].tolist() == ["warning"]
    assert "has a conflict" in lines["log line (verbatim)"].iloc[0]
    assert lines["what it says"].iloc[0].startswith("A START arrived for correlation ID")


def test_a_chart_that_fails_is_reported_and_the_rest_of_the_result_stays(page, monkeypatch):
    def broken(result, _=None):
        raise KeyError("sessions")

    monkeypatch.setattr(exercise_charts, "figures", broken)
    at = predict_and_run(page, "id_collision", "merged")
    assert any(e.value.startswith("The exercise stopped unexpectedly (KeyError)") for e in at.error)
    assert not at.get("plotly_chart")
    assert any("**Why**" in m.value for m in at.markdown)  # findings and explanation still shown
    assert any(e.label.startswith("Server log") for e in at.expander)


def test_leaked_state_draws_the_models_gauge_and_quotes_the_reaper(page):
    at = predict_and_run(page, "leaked_state", "leak")
    assert any(s.value.startswith("Your prediction held") for s in at.success)
    charts = [c.proto.id for c in at.get("plotly_chart")]
    assert len(charts) == 2
    panel = [e for e in at.expander if e.label.startswith("Server log")][0]
    lines = panel.dataframe[0].value
    reaper = lines[lines["log line (verbatim)"].str.contains("Reaper: force-ending CORRID")]
    assert len(reaper) >= 24  # one per vanished session of the no-eviction phase, at the verbosity the exercise raised
    assert reaper["what it says"].str.contains("the model gets no request and no END").all()
