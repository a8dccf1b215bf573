"""The instructor's item analysis: how hard each quiz item was, whether it told stronger learners
from weaker ones, which options the class chose, and how far the class mastered each topic.

Pure functions over the class's answers (ProgressStore.answer_table(): one row per stored answer,
columns ANSWER_COLUMNS) and the bank. No Streamlit, no database, no words: the frames hold codes
and numbers, and app/views/instructor.py words them.

Which attempts count
    Each learner's latest attempt that holds at least one answer to an item of the bank; every
    other attempt is left out, and each learner counts once. The instructor page's per-learner
    table (app/quiz/instructor.py::learner_scores) reports the latest attempt too, so the two
    tables describe the same sitting. A learner here retakes the quiz to try again after reading
    the feedback, so the latest attempt is where their understanding stands now. An attempt
    with no answers yet (a learner who just pressed "start again") is skipped and the previous
    one counts, since an empty attempt says nothing about any item; learner_scores does show
    that empty attempt, as a score of 0.
    Moodle's statistics report counts each student's first attempt by default, because later
    attempts build on the feedback of earlier ones and so break the assumptions of item
    analysis ("Quiz statistics calculations", docs.moodle.org/dev, "Quizzes that allow multiple
    attempts"). `analyse(..., which="first")` gives that view.

Per item (ITEM_COLUMNS), over the counted attempts that answered it:
    answered        how many counted attempts answered the item.
    facility        the mean score of those attempts, 0..1. This is Moodle's facility index,
                    FI = mean mark / maximum mark, with the maximum mark 1 here (a score is in
                    [0, 1], partial credit included). NaN when nobody answered.
    discrimination  Moodle's discrimination index: the Pearson correlation between the item's
                    score and the score on the rest of the attempt (the attempt's total over the
                    other bank items, an unanswered item counting 0), over the attempts that
                    answered the item. Moodle's calculator
                    (question/classes/statistics/questions/calculator.php) computes
                    100 * cov(mark, other marks) / sqrt(var(mark) * var(other marks)); the same
                    number is given here on the -1..1 scale, not as a percentage. NaN (Moodle
                    shows none) with fewer than two attempts, or when either the item's scores
                    or the rest scores do not vary.
    too_easy, too_hard, negative_discrimination: the flags below.
Per option of a single, multiple or predict item (OPTION_COLUMNS): how many counted attempts
    chose it. A multiple-choice answer counts every option it picked, so the counts of one item
    may add up to more than its `answered`. Options are counted by key, so answers given in any
    language count together. Numeric items have no options.
Per topic (TOPIC_COLUMNS): the class's mastery, the mean over the counted attempts of the
    topic's score share (the sum of the attempt's scores on the topic's items over the number of
    the topic's items in the bank, an unanswered item counting 0), as app/quiz/report.py's
    summarize counts a learner's topic score. Topics in TOPICS order, those the bank covers.
"""
from __future__ import annotations

import json
import math
from collections import Counter
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import TypeGuard

import pandas as pd

from app.quiz.bank import TOPICS, Bank, Item
from app.quiz.report import REVISIT_BELOW

ANSWER_COLUMNS = ("attempt", "learner", "item", "topic", "type", "answer", "score", "correct", "answered_at")
ITEM_COLUMNS = ["item", "topic", "type", "answered", "facility", "discrimination",
                "too_easy", "too_hard", "negative_discrimination"]
OPTION_COLUMNS = ["item", "option", "correct", "chosen"]
TOPIC_COLUMNS = ["topic", "items", "attempts", "mastery", "revisit_topic"]
FLAGS = ("too_easy", "too_hard", "negative_discrimination")  # the flag columns, in the order pages list them
CSV_COLUMNS = [*ITEM_COLUMNS, "option_counts"]
OPTION_TYPES = ("single", "multiple", "predict")
WHICH = ("latest", "first")

# Thresholds, from the interpretation bands of Moodle's "Quiz report statistics" page
# (docs.moodle.org, Development:Quiz_report_statistics; the Open University's "Moodle Quiz (iCMA)
# reports", 4.2 Question statistics, gives the same bands). Facility 90-94 % is "very easy" and
# 95-100 % "extremely easy": an item at 90 % or more tells the class apart little. 6-10 % is "very
# difficult" and 5 % or less "extremely difficult or something wrong with the question": an item
# at 10 % or less is worth checking for a wrong key or an unclear prompt before blaming the class.
TOO_EASY_FROM = 0.90  # facility >= this: too easy
TOO_HARD_UP_TO = 0.10  # facility <= this: too hard
# Moodle's guide reads a negative discrimination index as "question probably invalid": the learners
# who did better on the rest of the quiz did worse on this item (a wrong key, or a distractor that a
# careful reader can defend). Flagged below zero, as Moodle's offline quiz marks an item dubious.
NEGATIVE_DISCRIMINATION_BELOW = 0.0
# Variances under this are zero: floating sums of equal scores need not cancel exactly.
_ZERO_VARIANCE = 1e-12


@dataclass(frozen=True)
class ItemAnalysis:
    items: pd.DataFrame  # ITEM_COLUMNS, one row per bank item, bank order
    options: pd.DataFrame  # OPTION_COLUMNS, one row per option of every option item, bank order
    topics: pd.DataFrame  # TOPIC_COLUMNS, one row per topic the bank covers, TOPICS order
    attempts: int  # counted attempts: one per learner with an answer

    def option_counts(self, item_id: str) -> dict[int, int]:
        """Option key -> how many counted attempts chose it, every option of the item ({} for numeric)."""
        rows = self.options[self.options["item"] == item_id]
        return {int(k): int(n) for k, n in zip(rows["option"], rows["chosen"], strict=True)}


def counted_answers(answers: pd.DataFrame, bank: Bank | Iterable[Item], which: str = "latest") -> pd.DataFrame:
    """The rows of the counted attempts (see the module's docstring), answers to bank items only,
    one row per attempt and item (the first stored, as the store keeps the first grade)."""
    if which not in WHICH:
        raise ValueError(f"which must be one of {', '.join(WHICH)}, got {which!r}")
    ids = {i.id for i in bank}
    rows = answers[answers["item"].isin(ids)]
    rows = rows.drop_duplicates(["attempt", "item"], keep="first")
    if rows.empty:
        return rows.reset_index(drop=True)
    # Attempt ids are assigned in increasing order (the store's autoincrement key), so a learner's latest
    # attempt has the largest id.
    pick = rows.groupby("learner")["attempt"].transform("max" if which == "latest" else "min")
    return rows[rows["attempt"] == pick].reset_index(drop=True)


def pearson(xs: Sequence[float], ys: Sequence[float]) -> float:
    """The Pearson correlation of two equally long samples; NaN with fewer than two values or
    when either does not vary."""
    n = len(xs)
    if n != len(ys):
        raise ValueError("xs and ys must be equally long")
    if n < 2:
        return math.nan
    mx, my = sum(xs) / n, sum(ys) / n
    sxx = sum((x - mx) ** 2 for x in xs)
    syy = sum((y - my) ** 2 for y in ys)
    if sxx / n < _ZERO_VARIANCE or syy / n < _ZERO_VARIANCE:
        return math.nan
    sxy = sum((x - mx) * (y - my) for x, y in zip(xs, ys, strict=True))
    return sxy / math.sqrt(sxx * syy)


def _is_key(value: object) -> TypeGuard[int]:
    return isinstance(value, int) and not isinstance(value, bool)


def chosen_options(item: Item, answer: object) -> list[int]:
    """The option keys an answer chose (keys the item does not have are left out)."""
    keys = {o.key for o in item.options}
    if item.type == "multiple":
        picked = answer if isinstance(answer, (list, tuple)) else []
        return sorted({k for k in picked if _is_key(k) and k in keys})
    if item.type in ("single", "predict"):
        return [answer] if _is_key(answer) and answer in keys else []
    return []


def flags(facility: float, discrimination: float) -> dict[str, bool]:
    """The three flags of one item; a statistic that is NaN raises none."""
    return {
        "too_easy": bool(facility >= TOO_EASY_FROM),
        "too_hard": bool(facility <= TOO_HARD_UP_TO),
        "negative_discrimination": bool(discrimination < NEGATIVE_DISCRIMINATION_BELOW),
    }


def analyse(answers: pd.DataFrame, bank: Bank | Iterable[Item], which: str = "latest") -> ItemAnalysis:
    """answers: ProgressStore.answer_table(); bank: the items to report on, in their order."""
    items = list(bank)
    rows = counted_answers(answers, items, which)
    attempts = list(dict.fromkeys(rows["attempt"]))  # counted attempts, oldest first
    # score[attempt][item], an unanswered item absent (it counts 0 in the totals).
    score: dict[int, dict[str, float]] = {a: {} for a in attempts}
    answer_of: dict[str, list[object]] = {i.id: [] for i in items}
    for attempt, item_id, answer, value in zip(rows["attempt"], rows["item"], rows["answer"], rows["score"],
                                               strict=True):
        score[attempt][item_id] = float(value)
        answer_of[item_id].append(answer)
    total = {a: sum(s.values()) for a, s in score.items()}

    item_rows, option_rows = [], []
    for item in items:
        took = [a for a in attempts if item.id in score[a]]
        mine = [score[a][item.id] for a in took]
        rest = [total[a] - score[a][item.id] for a in took]
        facility = sum(mine) / len(mine) if mine else math.nan
        discrimination = pearson(mine, rest)
        item_rows.append({"item": item.id, "topic": item.topic, "type": item.type, "answered": len(took),
                          "facility": facility, "discrimination": discrimination,
                          **flags(facility, discrimination)})
        if item.type in OPTION_TYPES:
            chosen = Counter(k for answer in answer_of[item.id] for k in chosen_options(item, answer))
            option_rows += [{"item": item.id, "option": o.key, "correct": o.correct, "chosen": chosen.get(o.key, 0)}
                            for o in item.options]

    topic_rows = []
    in_bank = [t for t in TOPICS if any(i.topic == t for i in items)]
    for topic in in_bank:
        ids = [i.id for i in items if i.topic == topic]
        shares = [sum(score[a].get(i, 0.0) for i in ids) / len(ids) for a in attempts]
        mastery = sum(shares) / len(shares) if shares else math.nan
        topic_rows.append({"topic": topic, "items": len(ids), "attempts": len(attempts), "mastery": mastery,
                           "revisit_topic": bool(mastery < REVISIT_BELOW)})

    return ItemAnalysis(
        items=pd.DataFrame.from_records(item_rows, columns=ITEM_COLUMNS),
        options=pd.DataFrame.from_records(option_rows, columns=OPTION_COLUMNS),
        topics=pd.DataFrame.from_records(topic_rows, columns=TOPIC_COLUMNS),
        attempts=len(attempts),
    )


def csv_frame(analysis: ItemAnalysis) -> pd.DataFrame:
    """The per-item table with each option item's counts as JSON ({"key": count}), for the CSV download."""
    counts = [json.dumps({str(k): n for k, n in analysis.option_counts(i).items()}) if t in OPTION_TYPES else ""
              for i, t in zip(analysis.items["item"], analysis.items["type"], strict=True)]
    return analysis.items.assign(option_counts=counts)[CSV_COLUMNS]
