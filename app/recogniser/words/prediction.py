"""Predict-then-verify words (app/recogniser/engine/judgement/prediction.py codes)."""
from __future__ import annotations

from app.i18n import N_, Words
from app.recogniser.engine.judgement.prediction import PredictionVerdict
from app.text.verdicts import VERDICT_WORDS

CHOICES = {
    "intact": N_("Intact: every session keeps its own state"),
    "foreign": N_("Corrupted: sessions read each other's state"),
    "garbage": N_("Corrupted: padding rows are folded into sessions' state"),
    "lost": N_("Corrupted: sessions lose their state (a fresh or stale cell)"),
}
OUTCOMES = {"intact": N_("intact"), "corrupted": N_("corrupted")}
MESSAGES = {
    "held": N_("Your prediction held: the run came back {outcome:text}, for the reason you gave."),
    "wrong_cause": N_("You were right that it would be {outcome:text}, but the cause was different: the verdicts were {kinds:text}."),
    "not_held": N_("Your prediction did not hold: you expected {predicted:text}, the run came back {outcome:text}."),
}


def choice(code: str, _: Words) -> str:
    return _(CHOICES[code])


def message(verdict: PredictionVerdict, _: Words) -> str:
    v = verdict.values
    kinds = _(N_(", ")).join(_(VERDICT_WORDS[k]) for k in v.get("seen", ()))
    return _.render(MESSAGES[verdict.code], outcome=_(OUTCOMES[v["outcome"]]),
                    predicted=_(OUTCOMES[v["predicted"]]), kinds=kinds)
