"""Turn stored answers into a learner summary and an instructor report.

Pure functions over plain rows so they are testable without a database and
the store stays about storage.
"""
from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import TypedDict

import pandas as pd

from app.quiz.bank import TOPICS, Item

REVISIT_BELOW = 0.70  # a topic under 70 % is worth re-reading


@dataclass(frozen=True)
class TopicScore:
    topic: str
    score: float
    max: int

    @property
    def fraction(self) -> float:
        return self.score / self.max if self.max else 0.0


@dataclass(frozen=True)
class Summary:
    attempt_id: int
    score: float  # sum of item scores, partial credit included
    max: int  # one point per item in the bank, answered or not
    answered: int
    topics: dict[str, TopicScore]  # in TOPICS order, only topics the bank covers
    revisit: tuple[str, ...]  # topics below REVISIT_BELOW
    missed: tuple[str, ...]  # item ids not answered fully right, bank order

    @property
    def fraction(self) -> float:
        return self.score / self.max if self.max else 0.0


def summarize(attempt_id: int, scores: Mapping[str, float], items: Iterable[Item]) -> Summary:
    """scores: item id -> score for this attempt; items: the bank the quiz used."""
    items = list(items)
    # Answers to items no longer in the bank cannot be placed in a topic: ignored.
    per_topic: dict[str, list[float]] = {}
    for item in items:
        per_topic.setdefault(item.topic, []).append(scores.get(item.id, 0.0))
    topics = {
        t: TopicScore(t, sum(per_topic[t]), len(per_topic[t])) for t in TOPICS if t in per_topic
    }
    return Summary(
        attempt_id=attempt_id,
        score=sum(scores.get(i.id, 0.0) for i in items),
        max=len(items),
        answered=sum(1 for i in items if i.id in scores),
        topics=topics,
        revisit=tuple(t for t, ts in topics.items() if ts.fraction < REVISIT_BELOW),
        missed=tuple(i.id for i in items if scores.get(i.id, 0.0) < 1.0),
    )


def wrong_choices(item: Item, answer: object) -> list[int]:
    """Keys of the wrong options a learner chose (counted by key, so answers given in any
    language count together; the text is looked up in the report's bank at the end)."""
    if item.type in ("single", "predict"):
        opt = next((o for o in item.options if o.key == answer), None)
        return [opt.key] if opt is not None and not opt.correct else []
    if item.type == "multiple":
        picked = set(answer) if isinstance(answer, list) else set()
        return [o.key for o in item.options if o.key in picked and not o.correct]
    return []  # numeric is handled by the caller, which knows the grade


class _Stats(TypedDict):
    """One item's tally in class_report_frame."""

    n: int
    right: int
    score: float
    wrong: Counter[int | str]  # option keys, or a wrong number as written


def class_report_frame(rows: Iterable[tuple[str, object, bool, float]], items: Iterable[Item]) -> pd.DataFrame:
    """rows: (item_id, decoded answer, correct, score) for every stored answer.

    One row per bank item: how many answered it, the share right, the mean score
    and the wrong choice most learners made (the misconception to address).
    """
    items = list(items)
    by_id = {i.id: i for i in items}
    stats: dict[str, _Stats] = {i.id: {"n": 0, "right": 0, "score": 0.0, "wrong": Counter()} for i in items}
    for item_id, answer, correct, score in rows:
        item = by_id.get(item_id)
        if item is None:
            continue
        s = stats[item_id]
        s["n"] += 1
        s["right"] += bool(correct)
        s["score"] += score
        if item.type == "numeric":
            if not correct:
                unit = f" {item.unit}" if item.unit else ""
                s["wrong"][f"{answer:g}{unit}"] += 1
        else:
            s["wrong"].update(wrong_choices(item, answer))
    records = []
    for item in items:
        s = stats[item.id]
        # Ties go to the option listed first in the bank (numbers after options), so the report is stable.
        top = sorted(s["wrong"].items(),
                     key=lambda kv: (-kv[1], kv[0] if isinstance(kv[0], int) else 1 << 30, str(kv[0])))
        if top and isinstance(top[0][0], int):
            top[0] = (item.option(top[0][0]).text, top[0][1])
        records.append({
            "item": item.id,
            "topic": item.topic,
            "type": item.type,
            "attempts": s["n"],
            "share_correct": s["right"] / s["n"] if s["n"] else float("nan"),
            "mean_score": s["score"] / s["n"] if s["n"] else float("nan"),
            "most_chosen_wrong": top[0][0] if top else None,
            "most_chosen_wrong_count": top[0][1] if top else 0,
        })
    return pd.DataFrame.from_records(
        records,
        columns=["item", "topic", "type", "attempts", "share_correct", "mean_score",
                 "most_chosen_wrong", "most_chosen_wrong_count"],
    )
