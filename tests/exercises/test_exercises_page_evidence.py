"""The exercises page's evidence around a result: the server log panel, the charts, and charts
that fail without taking the rest of the result with them. The page is handed the session's one
real run of each exercise (conftest.show_result; AppTest, the session's real Triton)."""
from __future__ import annotations

import json

from app.checker import figures as check_charts
from app.checker import words as check_words
from app.i18n import N_, words
from app.lab.observation import LogCode, state_cells
from app.recogniser.exercises.leaked_state import engine as leaked_state
from app.recogniser.exercises.leaked_state.figures import deployment_name
from app.registry import exercise_figures as exercise_charts
from app.registry import exercise_words as text
from app.text import log_readings
from tests.exercises.conftest import judgement, show_result

EN = words("en")


def _log_panel(at):
    panels = [e for e in at.expander if e.label.startswith("Server log")]
    assert len(panels) == 1, [e.label for e in at.expander]
    return panels[0]


def _evidence(result, code: LogCode) -> list:
    return [e for e in result.log.evidence() if e.code is code]


def test_id_collision_quotes_the_servers_conflict_warning_in_the_log_panel(page, exercise_result):
    result = exercise_result("id_collision")
    at = show_result(page, "id_collision", "merged", result)
    panel = _log_panel(at)
    assert panel.label == EN.render(N_("Server log: {n:count} line(s) of evidence"), n=len(result.log.evidence()))
    conflicts = _evidence(result, LogCode.SEQUENCE_CONFLICT)
    # Certain: the second session's START meets the first one in flight, once (test_id_collision.py's fixture).
    assert len(conflicts) == 1, "one START for a correlation ID already in flight"
    lines = panel.dataframe[0].value
    row = lines[lines["log line (verbatim)"] == conflicts[0].raw]
    assert row["level"].tolist() == ["warning"]
    assert row["what it says"].tolist() == [log_readings.reading(conflicts[0], EN)]
    assert row["what it says"].iloc[0].startswith("A START arrived for correlation ID")


def test_a_chart_that_fails_is_reported_and_the_rest_of_the_result_stays(page, exercise_result, monkeypatch):
    def broken(result, _=None):
        raise KeyError("sessions")

    monkeypatch.setattr(exercise_charts, "charts", broken)
    result = exercise_result("id_collision")
    at = show_result(page, "id_collision", "merged", result, bugs=True)
    # A bug is shown as one, with its traceback (app/text/errors: it is not worded for the learner).
    assert [(e.proto.type, e.message) for e in at.exception] == [("KeyError", "'sessions'")] and at.exception[0].stack_trace
    assert not at.error and not at.get("plotly_chart")
    assert "**Why**\n\n" + text.explanation(result, EN) in [m.value for m in at.markdown]  # findings and explanation still shown
    assert _log_panel(at)


def test_leaked_state_draws_the_models_gauge_and_quotes_the_reaper(page, exercise_result):
    result = exercise_result("leaked_state")
    at = show_result(page, "leaked_state", "leak", result)  # `leak` is certain: test_leaked_state.py's fixture
    said, expected = judgement(at, "leaked_state", "leak", result, EN)
    assert said == [expected]
    charts = at.get("plotly_chart")
    assert len(charts) == 2
    # The gauge: the model's own asr_state_cells per deployment, as the engine read it from the metrics.
    gauge = json.loads(charts[0].proto.spec)
    assert gauge["layout"]["title"]["text"] == EN("The model's own gauge (asr_state_cells) as sessions vanish without END")
    cells = state_cells.totals(result.tables["cells"], by=("deployment",))
    drawn = {trace["name"]: trace["y"] for trace in gauge["data"]}
    expected = {deployment_name(code, EN): list(group["cells"]) for code, group in cells.groupby("deployment")}
    assert set(drawn) == set(expected) and len(expected) == 2
    for name, values in expected.items():
        assert [float(v) for v in _values(drawn[name])] == [float(v) for v in values], name
    # The reaper: every force-end the exercise captured is quoted verbatim with its reading.
    reaped = _evidence(result, LogCode.REAPER_FORCE_END)
    assert len(reaped) >= leaked_state.WAVES * leaked_state.PER_WAVE, "one per vanished session"
    lines = _log_panel(at).dataframe[0].value
    quoted = lines[lines["log line (verbatim)"].str.contains("Reaper: force-ending CORRID")]
    assert quoted["log line (verbatim)"].tolist() == [e.raw for e in reaped]
    assert quoted["what it says"].tolist() == [log_readings.reading(e, EN) for e in reaped]


def _values(series):
    """Plotly's JSON writes an array either as a list or as {"dtype", "bdata"} (base64)."""
    if isinstance(series, dict) and "bdata" in series:
        import base64

        import numpy as np

        return np.frombuffer(base64.b64decode(series["bdata"]), dtype=series["dtype"]).tolist()
    return list(series)


def test_verification_shows_the_checkers_report_on_each_deployment(page, exercise_result):
    """The exercise ran the deployment checker: the page shows each report as the check page draws it,
    under the exercise's own words, and the recogniser's report says why it broke."""
    result = exercise_result("verification")
    at = show_result(page, "verification", "sentiment", result)  # certain from the model code: test_verification.py
    said, expected = judgement(at, "verification", "sentiment", result, EN)
    assert expected in said
    reports = [e for e in at.expander if e.label.startswith(EN("The deployment checker's report on `{model:text}`").split("`")[0])]
    assert [e.label for e in reports] == [EN.render(N_("The deployment checker's report on `{model:text}`"), model=c.facts.name)
                                          for c in result.checks.values()]
    for panel, check in zip(reports, result.checks.values(), strict=True):
        table = panel.dataframe[0].value
        assert list(table["verdict"]) == [EN(check_words.VERDICTS[v.verdict]) for v in check.verdicts]
    assert EN(check_words.DIAGNOSES["keeps_state"]) in [w.value for w in reports[-1].warning]
    assert len(at.get("plotly_chart")) == len(exercise_charts.figures(result, EN)) + sum(
        1 + len(check_charts.errors(c, EN)) for c in result.checks.values())
