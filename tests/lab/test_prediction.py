"""Predict-then-verify: the outcome and the named cause are judged separately."""
from __future__ import annotations

import pandas as pd

from app.lab import prediction


def sessions(*verdicts: str) -> pd.DataFrame:
    return pd.DataFrame({"verdict": list(verdicts)})


def test_intact_prediction_holds_only_when_every_session_is_intact():
    assert prediction.judge("intact", sessions("intact", "intact")).held
    assert not prediction.judge("intact", sessions("intact", "foreign")).held


def test_right_outcome_with_the_wrong_cause_is_told_apart():
    verdict = prediction.judge("garbage", sessions("foreign", "intact"))
    assert verdict.held and not verdict.reason_seen
    assert "foreign" in verdict.message


def test_right_outcome_and_cause():
    verdict = prediction.judge("foreign", sessions("foreign", "lost"))
    assert verdict.held and verdict.reason_seen and verdict.outcome == "corrupted"


def test_every_choice_has_a_label():
    assert set(prediction.CHOICES) == {"intact", "foreign", "garbage", "lost"}
