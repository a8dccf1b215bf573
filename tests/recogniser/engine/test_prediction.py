"""Predict-then-verify: the outcome and the named cause are judged separately."""
from __future__ import annotations

import pandas as pd

from app.i18n import languages, words
from app.recogniser.engine.judgement import prediction
from app.recogniser.words import prediction as text
from tests.i18n.text_checks import reads_in


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
    english = text.message(verdict, words("en"))
    assert "foreign" in english
    for lang in languages():
        assert reads_in(lang, text.message(verdict, words(lang)), english), lang


def test_right_outcome_and_cause():
    verdict = prediction.judge("foreign", sessions("foreign", "lost"))
    assert verdict.held and verdict.reason_seen and verdict.outcome == "corrupted"
    assert verdict.code == prediction.HELD


def test_every_choice_has_a_label():
    assert set(prediction.CHOICES) == {"intact", "foreign", "garbage", "lost"} == set(text.CHOICES)
    for lang in languages():
        for c in prediction.CHOICES:
            assert reads_in(lang, text.choice(c, words(lang)), text.CHOICES[c]), (lang, c)
