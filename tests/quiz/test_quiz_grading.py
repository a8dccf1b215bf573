"""Grading rules, including partial credit for multiple-answer items."""
from __future__ import annotations

import dataclasses

import pytest

from app.quiz.grading import Grade, grade


def test_single_right_and_wrong(bank):
    item = bank["choose-sentiment"]
    assert grade(item, 0) == Grade(1.0, True, "Stateless requests can be merged freely.")
    wrong = grade(item, 1)
    assert (wrong.score, wrong.correct) == (0.0, False)
    assert wrong.detail == "Only needed when requests carry state."


@pytest.mark.parametrize("bad", [7, -1, "0", 0.0, True, None, [0]])
def test_single_rejects_unknown_or_non_int_keys(bank, bad):
    with pytest.raises(ValueError, match="choose-sentiment"):
        grade(bank["choose-sentiment"], bad)


def test_predict_grades_like_single(bank):
    item = bank["predict-mistake"]
    assert grade(item, 0).correct
    assert grade(item, 1).score == 0.0


# control-tensors-all: keys 0,1,2 correct, key 3 wrong; 3 correct options in all.
@pytest.mark.parametrize("picked,score,correct", [
    ({0, 1, 2}, 1.0, True),          # exact set
    ([2, 1, 0, 0], 1.0, True),       # order and repeats do not matter
    ({0, 1}, 2 / 3, False),          # partial: 2 right, 0 wrong
    ({0}, 1 / 3, False),
    ({0, 1, 3}, 1 / 3, False),       # (2 - 1) / 3
    ({0, 1, 2, 3}, 2 / 3, False),    # ticking everything is not full marks
    ({0, 3}, 0.0, False),            # (1 - 1) / 3
    ({3}, 0.0, False),               # floored at 0, never negative
    (set(), 0.0, False),
])
def test_multiple_partial_credit(bank, picked, score, correct):
    result = grade(bank["control-tensors-all"], picked)
    assert result.score == pytest.approx(score)
    assert result.correct is correct


@pytest.mark.parametrize("correct,picked,score,exact", [
    ({0}, {0}, 1.0, True),                  # one correct option: only that box is full marks
    ({0}, {0, 1}, 0.0, False),              # one wrong pick cancels the one right pick
    ({0}, {0, 1, 2, 3}, 0.0, False),        # ticking everything scores nothing
    ({0, 1, 2, 3}, {0, 1, 2, 3}, 1.0, True),  # every option correct: every box is the answer
    ({0, 1, 2, 3}, {0, 1}, 0.5, False),     # leaving right boxes empty costs credit
])
def test_multiple_with_one_or_all_options_correct(bank, correct, picked, score, exact):
    base = bank["control-tensors-all"]
    options = tuple(dataclasses.replace(o, correct=o.key in correct) for o in base.options)
    result = grade(dataclasses.replace(base, options=options), picked)
    assert result.score == pytest.approx(score)
    assert result.correct is exact


def test_multiple_rejects_unknown_keys_and_non_sets(bank):
    item = bank["control-tensors-all"]
    with pytest.raises(ValueError, match="no option with key 9"):
        grade(item, {0, 9})
    with pytest.raises(ValueError, match="set of option keys"):
        grade(item, "0,1")
    with pytest.raises(ValueError, match="set of option keys"):
        grade(item, 0)


@pytest.mark.parametrize("answer,ok", [
    (8, True), (8.0, True), ("8", True), (" 8 ", True), (7, False), (9, False), (8.0001, False),
])
def test_numeric_zero_tolerance(bank, answer, ok):
    assert grade(bank["capacity-direct"], answer).correct is ok


@pytest.mark.parametrize("answer,ok", [
    (95, True), (105, True), (100, True), ("104,5", True), (94.999, False), (105.01, False),
])
def test_numeric_tolerance_edges_are_inclusive(bank, answer, ok):
    result = grade(bank["queue-delay-ms"], answer)
    assert result.correct is ok
    assert result.score == (1.0 if ok else 0.0)


def test_numeric_float_rounding_at_edge(bank):
    # 0.4 - 0.3 is 0.10000000000000003 in binary floats; the edge must still count.
    item = dataclasses.replace(bank["capacity-direct"], answer=0.3, tolerance=0.1)
    assert grade(item, 0.4).correct
    assert grade(item, 0.2).correct
    assert not grade(item, 0.41).correct


def test_numeric_detail_shows_expected_value_and_explanation(bank):
    result = grade(bank["capacity-direct"], 7)
    assert result.detail.startswith("Expected 8 sequences, you answered 7 sequences.")
    assert "8 slots per instance" in result.detail
    assert "± 5" in grade(bank["queue-delay-ms"], 50).detail


@pytest.mark.parametrize("bad", ["eight", "", "8 seq", None, True, "nan", "inf", float("nan"), [8]])
def test_numeric_rejects_non_numbers_clearly(bank, bad):
    with pytest.raises(ValueError, match=r"item 'capacity-direct': the answer must be a (finite )?number"):
        grade(bank["capacity-direct"], bad)
