"""Predict, then verify: run a predict item's lab scenario on the real server and compare.

The learner's prediction is the 'outcome' of the option they chose (intact or
corrupted); the observation is what the server's transcripts show. Both go to the
progress store as a lab prediction, so the instructor page sees them.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

import pandas as pd

from app.quiz.bank import Item
from app.quiz.store import ProgressStore
from app.recogniser.engine import presets

if TYPE_CHECKING:
    from app.lab.deployment import Deployer
    from app.lab.progress import Progress
    from app.lab.traffic import ServerView

# Codes and values only: the page words the verdict and the detail (app/text/verdicts.py).
TRANSCRIPT_COLUMNS = ("session", "expected_text", "received_text", "verdict", "detail_code", "detail_values",
                      "first_wrong")


def exercise_name(item: Item) -> str:
    """How a quiz verification is named among lab predictions: 'quiz:<item id>'."""
    return f"quiz:{item.id}"


def observed_outcome(sessions: pd.DataFrame) -> str:
    return "intact" if (sessions["verdict"] == "intact").all() else "corrupted"


@dataclass(frozen=True)
class Verification:
    item_id: str
    scenario: str
    model: str
    predicted: str  # intact | corrupted: the chosen option's outcome
    observed: str  # intact | corrupted: what the server did this run
    usual: str  # what this deployment does on most runs (presets' expect)
    transcripts: pd.DataFrame  # one row per session, TRANSCRIPT_COLUMNS, session numbered from 1
    wall_s: float

    @property
    def held(self) -> bool:
        return self.predicted == self.observed

    @property
    def broken(self) -> int:
        return int((self.transcripts["verdict"] != "intact").sum())


def verify(server: ServerView, deployer: Deployer, store: ProgressStore, learner: str, item: Item, chosen_key: int,
           progress: Progress | None = None) -> Verification:
    """Run item.scenario on the server and record the learner's prediction against it."""
    if item.type != "predict" or item.scenario is None:
        raise ValueError(f"item {item.id!r} is not a predict item")
    predicted = item.option(chosen_key).outcome or ""
    applied, result = presets.run_preset(server, deployer, item.scenario, progress=progress)
    transcripts = result.sessions.loc[:, list(TRANSCRIPT_COLUMNS)].copy()
    transcripts["session"] = transcripts["session"] + 1  # people count sessions from 1
    observed = observed_outcome(result.sessions)
    store.record_prediction(learner, exercise_name(item), predicted, observed)
    return Verification(
        item_id=item.id, scenario=item.scenario, model=applied.model, predicted=predicted,
        observed=observed, usual=presets.get(item.scenario).expect, transcripts=transcripts,
        wall_s=result.wall_s,
    )
