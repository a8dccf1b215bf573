"""Grade one answer to one item. Pure functions: no storage, no UI.

Answers refer to options by Option.key (the option's index in the bank file),
so the shuffled order a learner saw never matters here.

Partial credit for 'multiple' items:
    score = max(0, (right picks - wrong picks) / number of correct options)
    correct = the picked set is exactly the set of correct options
So ticking every box never beats knowing the answer, and a wrong pick costs as
much as a right pick earns.
"""
from __future__ import annotations

import math
from collections.abc import Iterable
from dataclasses import dataclass

from app.quiz.bank import Item

# Float slack so 0.3 +- 0.1 accepts 0.4 despite binary rounding (0.1000...03).
_REL_SLACK = 1e-9


Answer = int | list[int] | float  # an answer as normalize_answer stores it: option key, sorted keys, or number


@dataclass(frozen=True)
class Grade:
    score: float  # 0..1
    correct: bool
    detail: str


def normalize_answer(item: Item, answer: object) -> Answer:
    """Canonical, JSON-ready form of an answer; ValueError says what was wrong."""
    if item.type in ("single", "predict"):
        return _option_key(item, answer)
    if item.type == "multiple":
        if isinstance(answer, (str, bytes)) or not isinstance(answer, Iterable):
            raise ValueError(f"item {item.id!r}: a multiple-choice answer is a set of option keys, got {answer!r}")
        return sorted({_option_key(item, a) for a in answer})
    if item.type == "numeric":
        return parse_number(answer, item.id)
    raise ValueError(f"item {item.id!r}: unknown item type {item.type!r}")


def parse_number(value: object, item_id: str = "?") -> float:
    """Accept 8, 8.0, '8', ' 8,5 ' (comma decimal); refuse words, bools, NaN, inf."""
    if isinstance(value, bool):
        raise ValueError(f"item {item_id!r}: the answer must be a number, got {value!r}")
    if isinstance(value, (int, float)):
        number = float(value)
    elif isinstance(value, str):
        text = value.strip().replace(",", ".")
        try:
            number = float(text)
        except ValueError:
            raise ValueError(f"item {item_id!r}: the answer must be a number, got {value!r}") from None
    else:
        raise ValueError(f"item {item_id!r}: the answer must be a number, got {value!r}")
    if not math.isfinite(number):
        raise ValueError(f"item {item_id!r}: the answer must be a finite number, got {value!r}")
    return number


def _option_key(item: Item, value: object) -> int:
    if isinstance(value, bool) or not isinstance(value, int):
        raise ValueError(f"item {item.id!r}: an option is chosen by its integer key, got {value!r}")
    keys = [o.key for o in item.options]
    if value not in keys:
        raise ValueError(f"item {item.id!r}: no option with key {value} (keys: {keys})")
    return value


def grade(item: Item, answer: object) -> Grade:
    """Score an answer for item; raises ValueError for an answer of the wrong shape."""
    value = normalize_answer(item, answer)
    if item.type in ("single", "predict"):
        assert isinstance(value, int)
        chosen = item.option(value)
        score = 1.0 if chosen.correct else 0.0
        return Grade(score, chosen.correct, chosen.explain)
    if item.type == "multiple":
        assert isinstance(value, list)
        return _grade_multiple(item, set(value))
    assert isinstance(value, float)
    return _grade_numeric(item, value)


def _grade_multiple(item: Item, picked: set[int]) -> Grade:
    correct = item.correct_keys
    right = len(picked & correct)
    wrong = len(picked - correct)
    score = max(0.0, (right - wrong) / len(correct))
    exact = picked == correct
    detail = (
        "All correct options and nothing else."
        if exact
        else f"{right} of {len(correct)} correct options picked, {wrong} wrong pick{'s' if wrong != 1 else ''}."
    )
    return Grade(score, exact, detail)


def _grade_numeric(item: Item, value: float) -> Grade:
    assert item.answer is not None and item.tolerance is not None
    slack = _REL_SLACK * max(1.0, abs(item.answer))
    ok = abs(value - item.answer) <= item.tolerance + slack
    unit = f" {item.unit}" if item.unit else ""
    expected = f"{_fmt(item.answer)}{unit}" + (f" (± {_fmt(item.tolerance)})" if item.tolerance else "")
    verdict = "Correct" if ok else f"Expected {expected}, you answered {_fmt(value)}{unit}"
    detail = f"{verdict}. {item.explain}" if item.explain else f"{verdict}."
    return Grade(1.0 if ok else 0.0, ok, detail)


def _fmt(x: float) -> str:
    return str(int(x)) if float(x).is_integer() else f"{x:g}"
