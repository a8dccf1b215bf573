"""Predict-then-verify: the outcome and the named cause are judged separately."""
from __future__ import annotations

import pandas as pd

from app.i18n import words
from app.lab.judgement import prediction
from app.text import prediction as text


def sessions(*verdicts: str) -> pd.DataFrame:
    return pd.DataFrame({"verdict": list(verdicts)})


def test_intact_prediction_holds_only_when_every_session_is_intact():
    assert prediction.judge("intact", sessions("intact", "intact")).held
    assert not prediction.judge("intact", sessions("intact", "foreign")).held
    missed = prediction.judge("intact", sessions("intact", "foreign"))
    assert missed.code == prediction.NOT_HELD and missed.values["predicted"] == "intact"
    assert text.message(missed, words("en")) == (
        "Your prediction did not hold: you expected intact, the run came back corrupted.")


def test_right_outcome_with_the_wrong_cause_is_told_apart():
    verdict = prediction.judge("garbage", sessions("foreign", "intact"))
    assert verdict.held and not verdict.reason_seen
    assert verdict.code == prediction.WRONG_CAUSE and verdict.values["seen"] == ["foreign"]
    assert "foreign" in text.message(verdict, words("en"))
    assert text.message(verdict, words("zh"))


def test_right_outcome_and_cause():
    verdict = prediction.judge("foreign", sessions("foreign", "lost"))
    assert verdict.held and verdict.reason_seen and verdict.outcome == "corrupted"
    assert verdict.code == prediction.HELD


def test_every_choice_has_a_label():
    assert set(prediction.CHOICES) == {"intact", "foreign", "garbage", "lost"} == set(text.CHOICES)
    assert all(text.choice(c, words("zh")) for c in prediction.CHOICES)
