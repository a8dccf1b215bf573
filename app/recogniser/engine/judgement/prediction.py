"""Predict-then-verify for the live lab: the learner's choices and how a run answers them.

Codes only: the choices' words and the verdict's sentence live in app/recogniser/words/prediction.py.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import TypedDict

import pandas as pd

CHOICES = ("intact", "foreign", "garbage", "lost")
HELD, WRONG_CAUSE, NOT_HELD = "held", "wrong_cause", "not_held"


def outcome_of(sessions: pd.DataFrame) -> str:
    return "intact" if (sessions["verdict"] == "intact").all() else "corrupted"


def predicted_outcome(choice: str) -> str:
    return "intact" if choice == "intact" else "corrupted"


class PredictionValues(TypedDict, total=False):
    """What a PredictionVerdict's message fills in."""

    outcome: str
    predicted: str
    seen: list[str]  # verdict codes, sorted


@dataclass(frozen=True)
class PredictionVerdict:
    held: bool  # intact vs corrupted was right
    reason_seen: bool  # the mechanism named was among the run's verdicts (or intact held)
    outcome: str  # "intact" or "corrupted"
    code: str  # HELD, WRONG_CAUSE or NOT_HELD
    values: PredictionValues = field(default_factory=lambda: PredictionValues())


def judge(choice: str, sessions: pd.DataFrame) -> PredictionVerdict:
    outcome = outcome_of(sessions)
    held = predicted_outcome(choice) == outcome
    seen = set(sessions["verdict"])
    reason_seen = held and (choice == "intact" or choice in seen)
    code = HELD if held and reason_seen else WRONG_CAUSE if held else NOT_HELD
    values: PredictionValues = {"outcome": outcome, "predicted": predicted_outcome(choice), "seen": sorted(seen - {"intact"})}
    return PredictionVerdict(held, reason_seen, outcome, code, values)
