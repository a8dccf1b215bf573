"""The rollout guide's experiments on the real server."""
from __future__ import annotations

import pytest

from app.lab.exercises import sentiment_check


def _robust(result) -> bool:
    return result.outcome == "sentiment" and bool(result.tables["checks"]["as_expected"].all())


@pytest.fixture(scope="module")
def result(exercise_run):
    return exercise_run("verification", ok=_robust)


def test_every_check_behaves_as_the_guide_says(result):
    checks = result.tables["checks"]
    assert len(checks) == 5
    assert checks["as_expected"].all(), checks[~checks["as_expected"]].to_dict("records")


def test_new_sequence_after_end_starts_fresh_on_the_reused_slot(result):
    run = result.runs["after_end"]
    first = run.requests[(run.requests["session"] == 1) & (run.requests["chunk"] == 0)].iloc[0]
    assert first["state_in"] == 0 and first["state_owner"] == 0
    assert run.sessions.iloc[0]["slots"] == run.sessions.iloc[1]["slots"]


def test_cancelled_session_does_not_pollute_the_next(result):
    run = result.runs["cancelled"]
    later = run.sessions.set_index("session").loc[1]
    assert later["verdict"] == "intact"
    assert run.sessions.iloc[0]["chunks"] == 3  # it vanished after three chunks, without END


def test_sentiment_is_invariant_and_recogniser_is_not(result):
    assert result.outcome == "sentiment"
    sentiment = result.tables["sentiment"]
    assert sentiment["labels_identical"].all()
    assert (sentiment["max_score_diff"] <= sentiment_check.SCORE_TOLERANCE).all()
    assert not result.numbers["recogniser_dynamic_consistent"]
