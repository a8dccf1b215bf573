"""The pipelined-client and cancelled-request results on the exercises page (AppTest): the page is
handed the session's one real run of each and judges the lesson's prediction from it."""
from __future__ import annotations

import pytest

from app.i18n import words
from app.registry import exercise_figures as exercise_charts
from app.registry import exercise_words as text
from app.registry import families
from tests.exercises.conftest import judgement, show_result

EN = words("en")


@pytest.mark.parametrize("name", ["pipelined_client", "cancelled_request"])
def test_exercise_result_is_shown_and_the_prediction_judged(page, exercise_result, name):
    result = exercise_result(name)
    choice = families.get(name).correct  # the learner predicted what the lesson teaches
    at = show_result(page, name, choice, result)
    assert not at.error, [e.value for e in at.error]
    assert len(at.get("plotly_chart")) == len(exercise_charts.figures(result, EN))
    assert "**Why**\n\n" + text.explanation(result, EN) in [m.value for m in at.markdown]
    # It held only if this run showed what the lesson teaches: the result decides, not the page.
    said, expected = judgement(at, name, choice, result, EN)
    assert said == [expected]
    assert result.held(choice) == result.as_taught
