"""Predict-then-verify for the live lab: the learner's choices and how a run answers them."""
from __future__ import annotations

from dataclasses import dataclass

import pandas as pd

CHOICES = {
    "intact": "Intact: every session keeps its own state",
    "foreign": "Corrupted: sessions read each other's state",
    "garbage": "Corrupted: padding rows are folded into sessions' state",
    "lost": "Corrupted: sessions lose their state (a fresh or stale cell)",
}


def outcome_of(sessions: pd.DataFrame) -> str:
    return "intact" if (sessions["verdict"] == "intact").all() else "corrupted"


def predicted_outcome(choice: str) -> str:
    return "intact" if choice == "intact" else "corrupted"


@dataclass(frozen=True)
class Verdict:
    held: bool  # intact vs corrupted was right
    reason_seen: bool  # the mechanism named was among the run's verdicts (or intact held)
    outcome: str
    message: str


def judge(choice: str, sessions: pd.DataFrame) -> Verdict:
    outcome = outcome_of(sessions)
    held = predicted_outcome(choice) == outcome
    seen = set(sessions["verdict"])
    reason_seen = held and (choice == "intact" or choice in seen)
    if held and reason_seen:
        message = f"Your prediction held: the run came back {outcome}, for the reason you gave."
    elif held:
        kinds = ", ".join(sorted(seen - {"intact"}))
        message = f"You were right that it would be {outcome}, but the cause was different: the verdicts were {kinds}."
    else:
        message = f"Your prediction did not hold: you expected {predicted_outcome(choice)}, the run came back {outcome}."
    return Verdict(held, reason_seen, outcome, message)
