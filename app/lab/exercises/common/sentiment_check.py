"""Send the same reviews to the stateless sentiment model in several orders and batch splits.

The sending and comparing is app/lab/cases/sentiment.py's; this module picks the orders and splits.
"""
from __future__ import annotations

import random

import numpy as np
import pandas as pd

from app.lab.cases import sentiment
from app.lab.cases.sentiment import SCORE_TOLERANCE

REVIEWS = (
    "the room was great and the staff friendly",
    "delivery was slow and the box broken",
    "support was excellent, thanks",
    "this phone is awful and noisy",
    "the film was lovely, see you soon",
    "our waiter was rude and the soup poor",
    "the app is fast and perfect",
    "terrible service, I want a refund",
    "superb food, delightful evening",
    "disappointing stay, worst bed ever",
    "good value, would recommend",
    "bad wifi and a noisy street",
)


# Ways of sending, as codes; their words are the figure labels of app/charts/exercises/verification.py.
MODES = ("in_order_single", "reversed_6", "shuffled_all", "shuffled_one_request")


def compare(server) -> pd.DataFrame:
    """One row per way of sending (a MODES code), compared with the first (in order, one at a time)."""
    n = len(REVIEWS)
    shuffled = list(range(n))
    random.Random(3).shuffle(shuffled)
    modes = {
        "in_order_single": dict(order=list(range(n)), concurrency=1),
        "reversed_6": dict(order=list(reversed(range(n))), concurrency=6),
        "shuffled_all": dict(order=shuffled, concurrency=n),
        "shuffled_one_request": dict(order=shuffled, concurrency=1, together=True),
    }
    results = {mode: _send(server, **kwargs) for mode, kwargs in modes.items()}
    base = results["in_order_single"]
    rows = []
    for mode, r in results.items():
        rows.append(
            {
                "mode": mode,
                # {batch size: executions} as Triton's statistics report it; None when not reported
                "batch_sizes": {int(k): int(v) for k, v in r.server.get("batch_sizes", {}).items()} or None,
                "labels_identical": bool(np.array_equal(base.labels, r.labels)),
                "max_score_diff": float(np.max(np.abs(base.scores - r.scores))),
                "positive": int(r.labels.sum()),
            }
        )
    frame = pd.DataFrame(rows)
    frame["identical"] = frame["labels_identical"] & (frame["max_score_diff"] <= SCORE_TOLERANCE)
    return frame


def _send(server, order: list[int], concurrency: int, together: bool = False) -> sentiment.SentimentRun:
    if together:
        return sentiment.as_one_batch(server, list(REVIEWS), order=order)
    return sentiment.send(server, list(REVIEWS), concurrency=concurrency, order=order)
