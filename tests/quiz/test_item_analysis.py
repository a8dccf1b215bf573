"""The instructor's item analysis on hand-made answers whose statistics are worked out by hand below.

The class: five learners a..e, each with one counted attempt, on a bank of five items. Scores:

    learner  q1  q2  q3    q4  | total
    a        1   1   1     0   | 3
    b        1   1   0.5   0   | 2.5
    c        1   0   0.5   1   | 2.5
    d        0   1   0     0   | 1
    e        0   0   -     1   | 1        (e never answered q3; q5 nobody answered)

The discrimination index of an item is the Pearson correlation, over the attempts that answered it,
of its score x with the rest score y = total - x: r = Sxy / sqrt(Sxx * Syy) with S the sums of
products of deviations from the means (the 1/(n-1) of covariance and variances cancels).
"""
from __future__ import annotations

import json
import math
from datetime import datetime, timezone
from pathlib import Path

import pandas as pd
import pytest

from app.quiz import item_analysis as ia
from app.quiz.bank import Bank, Item, Option
from app.quiz.store import ANSWER_TABLE_COLUMNS


def _options(*correct: bool) -> tuple[Option, ...]:
    return tuple(Option(k, f"option {k}", c, "why") for k, c in enumerate(correct))


BANK = Bank((
    Item("q1", "choosing", "single", "Q1?", "l#a", _options(True, False, False)),
    Item("q2", "choosing", "single", "Q2?", "l#a", _options(False, True)),
    Item("q3", "symptoms", "multiple", "Q3?", "l#a", _options(True, True, False)),
    Item("q4", "symptoms", "numeric", "Q4?", "l#a", answer=8.0, tolerance=0.0),
    Item("q5", "mechanics", "single", "Q5?", "l#a", _options(False, True)),
), path=Path("hand-made.yaml"))

AT = datetime(2025, 1, 1, tzinfo=timezone.utc)


def table(rows) -> pd.DataFrame:
    """rows: (attempt, learner, item, answer, score): the store's answer_table() shape."""
    return pd.DataFrame.from_records(
        [(attempt, learner, item, BANK[item].topic if BANK.get(item) else "choosing",
          BANK[item].type if BANK.get(item) else "single", answer, float(score), score == 1, AT)
         for attempt, learner, item, answer, score in rows],
        columns=list(ANSWER_TABLE_COLUMNS),
    )


# Learner a first tried (attempt 1) and got q1 and q2 wrong; attempts 2..6 are the counted ones.
EARLIER = [(1, "a", "q1", 2, 0), (1, "a", "q2", 0, 0)]
CLASS = [
    (2, "b", "q1", 0, 1), (2, "b", "q2", 1, 1), (2, "b", "q3", [0], 0.5), (2, "b", "q4", 5.0, 0),
    (3, "c", "q1", 0, 1), (3, "c", "q2", 0, 0), (3, "c", "q3", [0, 1, 2], 0.5), (3, "c", "q4", 8.0, 1),
    (4, "d", "q1", 1, 0), (4, "d", "q2", 1, 1), (4, "d", "q3", [2], 0), (4, "d", "q4", 2.0, 0),
    (5, "e", "q1", 2, 0), (5, "e", "q2", 0, 0), (5, "e", "q4", 8.0, 1),
    (6, "a", "q1", 0, 1), (6, "a", "q2", 1, 1), (6, "a", "q3", [0, 1], 1), (6, "a", "q4", 3.0, 0),
]


@pytest.fixture
def analysis() -> ia.ItemAnalysis:
    return ia.analyse(table(EARLIER + CLASS), BANK)


def row(analysis: ia.ItemAnalysis, item: str) -> pd.Series:
    return analysis.items.set_index("item").loc[item]


def test_frames_have_code_columns_in_bank_and_topic_order(analysis):
    assert list(analysis.items.columns) == ia.ITEM_COLUMNS
    assert list(analysis.options.columns) == ia.OPTION_COLUMNS
    assert list(analysis.topics.columns) == ia.TOPIC_COLUMNS
    assert list(analysis.items["item"]) == ["q1", "q2", "q3", "q4", "q5"]
    assert list(analysis.topics["topic"]) == ["choosing", "symptoms", "mechanics"]  # TOPICS order
    assert analysis.attempts == 5  # one per learner: a's earlier attempt is left out


def test_answered_and_facility_count_only_the_latest_attempt(analysis):
    # With a's earlier attempt counted too, q1 would be 3 right of 6 answers (0.5), not 3 of 5.
    assert list(analysis.items["answered"]) == [5, 5, 4, 5, 0]
    assert row(analysis, "q1")["facility"] == pytest.approx(3 / 5)  # a, b, c right
    assert row(analysis, "q2")["facility"] == pytest.approx(3 / 5)  # a, b, d right
    assert row(analysis, "q3")["facility"] == pytest.approx((1 + 0.5 + 0.5 + 0) / 4)  # e did not answer
    assert row(analysis, "q4")["facility"] == pytest.approx(2 / 5)  # c, e right


def test_discrimination_is_the_correlation_with_the_rest_of_the_attempt(analysis):
    # q1: x = [1,1,1,0,0], y = [2,1.5,1.5,1,1]; means 0.6, 1.4
    #     dx = [.4,.4,.4,-.6,-.6], dy = [.6,.1,.1,-.4,-.4]
    #     Sxy = .24+.04+.04+.24+.24 = 0.80, Sxx = 3(.16)+2(.36) = 1.2, Syy = .36+.01+.01+.16+.16 = 0.70
    #     r = 0.80 / sqrt(0.84) = 0.87287
    assert row(analysis, "q1")["discrimination"] == pytest.approx(0.87287, abs=1e-5)
    # q2: x = [1,1,0,1,0], y = [2,1.5,2.5,0,1]; means 0.6, 1.4
    #     dx = [.4,.4,-.6,.4,-.6], dy = [.6,.1,1.1,-1.4,-.4]
    #     Sxy = .24+.04-.66-.56+.24 = -0.70, Sxx = 1.2, Syy = .36+.01+1.21+1.96+.16 = 3.70
    #     r = -0.70 / sqrt(4.44) = -0.33221
    assert row(analysis, "q2")["discrimination"] == pytest.approx(-0.33221, abs=1e-5)
    # q3 (a..d only): x = [1,.5,.5,0], y = [2,2,2,1]; means 0.5, 1.75
    #     dx = [.5,0,0,-.5], dy = [.25,.25,.25,-.75]
    #     Sxy = .125+.375 = 0.5, Sxx = 0.5, Syy = 3(.0625)+.5625 = 0.75; r = 0.5 / sqrt(0.375) = 0.81650
    assert row(analysis, "q3")["discrimination"] == pytest.approx(0.81650, abs=1e-5)
    # q4: x = [0,0,1,0,1], y = [3,2.5,1.5,1,0]; means 0.4, 1.6
    #     dx = [-.4,-.4,.6,-.4,.6], dy = [1.4,.9,-.1,-.6,-1.6]
    #     Sxy = -.56-.36-.06+.24-.96 = -1.70, Sxx = 1.2, Syy = 1.96+.81+.01+.36+2.56 = 5.70
    #     r = -1.70 / sqrt(6.84) = -0.65001
    assert row(analysis, "q4")["discrimination"] == pytest.approx(-0.65001, abs=1e-5)


def test_flags_follow_the_thresholds(analysis):
    flagged = analysis.items.set_index("item")[list(ia.FLAGS)]
    assert list(flagged["negative_discrimination"]) == [False, True, False, True, False]
    assert not flagged["too_easy"].any() and not flagged["too_hard"].any()  # facilities 0.4..0.6
    # The bounds themselves count (Moodle's bands: 90 % "very easy", 10 % "very difficult").
    assert ia.flags(0.90, 0.1) == {"too_easy": True, "too_hard": False, "negative_discrimination": False}
    assert ia.flags(0.89, 0.0) == {"too_easy": False, "too_hard": False, "negative_discrimination": False}
    assert ia.flags(0.10, -0.01) == {"too_easy": False, "too_hard": True, "negative_discrimination": True}
    assert ia.flags(0.11, math.nan) == {"too_easy": False, "too_hard": False, "negative_discrimination": False}


def test_option_counts_per_key_and_every_pick_of_a_multiple_answer(analysis):
    assert analysis.option_counts("q1") == {0: 3, 1: 1, 2: 1}  # a's earlier pick of 2 not counted
    assert analysis.option_counts("q2") == {0: 2, 1: 3}
    # q3: a [0,1], b [0], c [0,1,2], d [2]: key 0 three times, 1 twice, 2 twice; 7 picks by 4 answers
    assert analysis.option_counts("q3") == {0: 3, 1: 2, 2: 2}
    assert analysis.option_counts("q4") == {}  # numeric: no options
    q3 = analysis.options[analysis.options["item"] == "q3"]
    assert list(q3["correct"]) == [True, True, False]


def test_an_item_nobody_answered(analysis):
    q5 = row(analysis, "q5")
    assert q5["answered"] == 0 and math.isnan(q5["facility"]) and math.isnan(q5["discrimination"])
    assert not q5[list(ia.FLAGS)].any()
    assert analysis.option_counts("q5") == {0: 0, 1: 0}


def test_topic_mastery_counts_unanswered_items_as_zero(analysis):
    topics = analysis.topics.set_index("topic")
    # choosing (q1, q2): shares a 2/2, b 2/2, c 1/2, d 1/2, e 0/2 -> (1+1+.5+.5+0)/5 = 0.6
    assert topics.loc["choosing", "mastery"] == pytest.approx(0.6)
    # symptoms (q3, q4): a (1+0)/2, b (.5+0)/2, c (.5+1)/2, d 0, e (0+1)/2 -> (.5+.25+.75+0+.5)/5 = 0.4
    assert topics.loc["symptoms", "mastery"] == pytest.approx(0.4)
    assert topics.loc["mechanics", "mastery"] == 0.0  # nobody answered q5
    assert list(topics["items"]) == [2, 2, 1] and set(topics["attempts"]) == {5}
    assert list(topics["revisit_topic"]) == [True, True, True]  # all under report.REVISIT_BELOW (0.7)


def test_one_attempt_only_gives_no_discrimination():
    one = ia.analyse(table([(7, "f", "q1", 0, 1), (7, "f", "q2", 0, 0), (7, "f", "q3", [0], 0.5)]), BANK)
    assert one.attempts == 1
    assert list(one.items["answered"]) == [1, 1, 1, 0, 0]
    assert list(one.items["facility"][:3]) == [1.0, 0.0, 0.5]
    assert one.items["discrimination"].isna().all()
    assert list(one.items["too_easy"][:3]) == [True, False, False]
    assert list(one.items["too_hard"][:3]) == [False, True, False]
    topics = one.topics.set_index("topic")
    assert topics.loc["choosing", "mastery"] == pytest.approx(0.5) and topics.loc["symptoms", "mastery"] == 0.25
    assert list(topics["revisit_topic"]) == [True, True, True]


def test_zero_variance_gives_no_discrimination():
    # q1 right for all three: the item's scores do not vary. q2: the rest scores (q1 only) are all 1.
    rows = [(a, x, "q1", 0, 1) for a, x in ((1, "f"), (2, "g"), (3, "h"))]
    rows += [(1, "f", "q2", 1, 1), (2, "g", "q2", 0, 0), (3, "h", "q2", 1, 1)]
    flat = ia.analyse(table(rows), BANK).items.set_index("item")
    assert flat.loc["q1", "facility"] == 1.0 and math.isnan(flat.loc["q1", "discrimination"])
    assert flat.loc["q2", "facility"] == pytest.approx(2 / 3) and math.isnan(flat.loc["q2", "discrimination"])
    assert bool(flat.loc["q1", "too_easy"]) and not flat.loc[["q1", "q2"], "negative_discrimination"].any()


def test_equal_fractional_scores_count_as_no_variance():
    # 0.1 + 0.1 + 0.1 is not 0.3 in floating point; the deviations must still count as zero.
    rows = [(a, x, "q3", [0], 0.1) for a, x in ((1, "f"), (2, "g"), (3, "h"))]
    rows += [(1, "f", "q1", 0, 1), (2, "g", "q1", 1, 0), (3, "h", "q1", 0, 1)]
    items = ia.analyse(table(rows), BANK).items.set_index("item")
    assert math.isnan(items.loc["q3", "discrimination"])


def test_first_attempts_give_moodles_default_view():
    first = ia.analyse(table(EARLIER + CLASS), BANK, which="first")
    assert first.attempts == 5
    assert row(first, "q1")["facility"] == pytest.approx(2 / 5)  # a's first attempt: q1 wrong
    assert first.option_counts("q1") == {0: 2, 1: 1, 2: 2}
    assert row(first, "q3")["answered"] == 3  # a's first attempt did not answer q3
    with pytest.raises(ValueError, match="latest, first"):
        ia.analyse(table(CLASS), BANK, which="best")


def test_an_attempt_with_answers_only_outside_the_bank_does_not_count():
    # b's latest attempt answered only an item since removed from the bank: b's previous attempt counts.
    rows = [(1, "b", "q1", 1, 0), (2, "b", "gone", 0, 1)]
    analysis = ia.analyse(table(rows), BANK)
    assert analysis.attempts == 1 and row(analysis, "q1")["answered"] == 1
    assert row(analysis, "q1")["facility"] == 0.0 and analysis.option_counts("q1") == {0: 0, 1: 1, 2: 0}


def test_no_answers_gives_empty_statistics():
    empty = ia.analyse(table([]), BANK)
    assert empty.attempts == 0 and list(empty.items["answered"]) == [0] * 5
    assert empty.items["facility"].isna().all() and empty.topics["mastery"].isna().all()
    assert not empty.topics["revisit_topic"].any()


def test_pearson_by_hand():
    # x = [1,2,3], y = [1,3,2]: dx = [-1,0,1], dy = [-1,1,0]; Sxy = 1, Sxx = 2, Syy = 2; r = 1/2
    assert ia.pearson([1, 2, 3], [1, 3, 2]) == pytest.approx(0.5)
    assert ia.pearson([1, 2, 3], [3, 2, 1]) == pytest.approx(-1.0)
    assert math.isnan(ia.pearson([1], [2])) and math.isnan(ia.pearson([1, 1], [1, 2]))


def test_the_csv_keeps_codes_and_the_option_counts(analysis):
    frame = ia.csv_frame(analysis)
    assert list(frame.columns) == ia.CSV_COLUMNS
    counts = dict(zip(frame["item"], frame["option_counts"], strict=True))
    assert json.loads(counts["q3"]) == {"0": 3, "1": 2, "2": 2} and counts["q4"] == ""


def test_reads_the_stores_answer_table(store, bank):
    """The real store's table (answers decoded from JSON) goes through unchanged."""
    multiple = bank["control-tensors-all"]
    single = bank["choose-sentiment"]
    right = sorted(multiple.correct_keys)
    wrong = next(o.key for o in multiple.options if not o.correct)
    for learner, picks in (("ada", right), ("bob", [right[0], wrong])):
        attempt = store.start_attempt(learner, seed=1)
        store.record_answer(attempt, multiple, picks)
        store.record_answer(attempt, single, next(iter(single.correct_keys)))
    analysis = ia.analyse(store.answer_table(), bank)
    counts = analysis.option_counts(multiple.id)
    assert counts[right[0]] == 2 and counts[wrong] == 1 and all(counts[k] == 1 for k in right[1:])
    assert row(analysis, single.id)["facility"] == 1.0 and row(analysis, multiple.id)["answered"] == 2


def test_the_option_chart_draws_every_option_with_its_count_and_whether_it_is_right():
    from app.charts import item_analysis as charts
    from app.i18n import words

    fig = charts.option_counts(["A. one", "B. two", "C. three"], [3, 0, 2], [True, False, False], 4, words("zh"))
    bar = fig.data[0]
    assert list(bar.y) == ["A. one", "B. two", "C. three"] and list(bar.x) == [3, 0, 2]
    assert list(bar.marker.color) == [charts.RIGHT_COLOUR, charts.WRONG_COLOUR, charts.WRONG_COLOUR]
    assert list(bar.customdata) == [words("zh")("right answer"), words("zh")("wrong answer"), words("zh")("wrong answer")]
    assert "4" in fig.layout.title.text and fig.layout.title.text != "Answered by 4; bars: how many chose each option"
    with pytest.raises(ValueError):
        charts.option_counts(["A"], [1, 2], [True], 1)


def test_lesson_9s_items_show_in_the_analysis_under_their_own_topic():
    """The shipped bank: every item that lesson 9 teaches is a row of the item analysis, and its topic
    ('memory') a row of the topic table, with an answer counted there."""
    from app.quiz.bank import load_bank

    bank = load_bank()
    lesson_9 = [item for item in bank.items if item.lesson.startswith("memory-decides-the-batch#")]
    assert len(lesson_9) >= 8
    first = lesson_9[0]
    answers = pd.DataFrame.from_records(
        [(1, "a", first.id, first.topic, first.type, first.answer if first.type == "numeric" else 0, 1.0, True, AT)],
        columns=list(ANSWER_TABLE_COLUMNS))
    analysis = ia.analyse(answers, bank)
    assert {item.id for item in lesson_9} <= set(analysis.items["item"])
    topics = analysis.topics.set_index("topic")
    assert "memory" in topics.index and topics.loc["memory", "items"] == sum(i.topic == "memory" for i in bank.items)
    assert topics.loc["memory", "attempts"] == 1
