"""Tables for the instructor page: every learner's latest score and every lab prediction.

Plain functions over the ProgressStore; the per-item view is store.class_report.
"""
from __future__ import annotations

import pandas as pd

from app.quiz.bank import Bank
from app.quiz.store import ProgressStore

SCORE_COLUMNS = ["learner", "attempts", "latest_attempt", "seed", "timed", "answered", "score", "max",
                 "share", "revisit"]
PREDICTION_COLUMNS = ["learner", "exercise", "prediction", "outcome", "held", "at"]
EXERCISE_COLUMNS = ["exercise", "runs", "learners", "held", "share_held", "observed_corrupted"]


def learner_scores(store: ProgressStore, bank: Bank) -> pd.DataFrame:
    """One row per learner with any attempt: the latest attempt's score and topics to revisit."""
    rows = []
    for learner in store.learners():
        attempts = store.attempts(learner)
        if not attempts:
            continue  # a learner who only ran lab exercises
        latest = attempts[-1]
        s = store.summary(latest.id, bank)
        rows.append({
            "learner": learner, "attempts": len(attempts), "latest_attempt": latest.id, "seed": latest.seed,
            "timed": latest.timed, "answered": s.answered, "score": round(s.score, 2), "max": s.max,
            "share": s.fraction, "revisit": ", ".join(s.revisit),
        })
    return pd.DataFrame.from_records(rows, columns=SCORE_COLUMNS)


def predictions(store: ProgressStore) -> pd.DataFrame:
    """Every prediction of every learner (quiz verifications and lab exercises), oldest first."""
    rows = [
        {"learner": p.learner, "exercise": p.exercise, "prediction": p.prediction, "outcome": p.outcome,
         "held": p.held, "at": p.at}
        for learner in store.learners()
        for p in store.predictions(learner)
    ]
    frame = pd.DataFrame.from_records(rows, columns=PREDICTION_COLUMNS)
    return frame.sort_values("at", kind="stable").reset_index(drop=True) if len(frame) else frame


def predictions_by_exercise(frame: pd.DataFrame) -> pd.DataFrame:
    """Per exercise: how often predictions held, and how often the server showed corruption."""
    if frame.empty:
        return pd.DataFrame(columns=EXERCISE_COLUMNS)
    grouped = frame.groupby("exercise", sort=True)
    out = pd.DataFrame({
        "runs": grouped.size(),
        "learners": grouped["learner"].nunique(),
        "held": grouped["held"].sum().astype(int),
        "observed_corrupted": grouped["outcome"].apply(lambda s: int((s == "corrupted").sum())),
    }).reset_index()
    out["share_held"] = out["held"] / out["runs"]
    return out[EXERCISE_COLUMNS]
