"""Every exercise chart has its message said in words beside it, in every language, read from the
data the chart draws (a learner who cannot tell the colours apart, or uses a screen reader, gets what
the chart shows). Pure: each exercise's figures built from its judge test's hand-made tables,
hand_made_tables() in tests/recogniser/exercises/test_<name>.py.
"""
from __future__ import annotations

import importlib
import re

import pytest

from app.charts.figures import Chart
from app.exercise_kit import ExerciseResult, Measured
from app.i18n import SOURCE_LANGUAGE, languages, words
from app.recogniser.exercises.family import EXERCISES as RECOGNISER
from app.registry import exercise_figures as exercise_charts

OTHERS = [lang for lang in languages() if lang != SOURCE_LANGUAGE]


def hand_made(name: str) -> ExerciseResult:
    """Exercise `name`'s result judged from its test module's hand-made tables."""
    made = importlib.import_module(f"tests.recogniser.exercises.test_{name}").hand_made_tables()
    return RECOGNISER.judge(name, Measured(tables=made))


def test_every_exercise_has_hand_made_tables_here():
    lacking = [name for name in RECOGNISER
               if not callable(getattr(importlib.import_module(f"tests.recogniser.exercises.test_{name}"), "hand_made_tables", None))]
    assert not lacking, f"tests/recogniser/exercises/test_<name>.py without hand_made_tables(): {lacking}"


@pytest.mark.parametrize("name", sorted(RECOGNISER))
def test_every_exercise_chart_has_a_summary_in_every_language(name):
    result = hand_made(name)
    english = exercise_charts.charts(result, words(SOURCE_LANGUAGE))
    assert english and all(isinstance(c, Chart) and c.caption and c.summary.strip() for c in english), name
    assert [(c.caption, c.figure.layout.title.text) for c in english] == \
        [(caption, fig.layout.title.text) for caption, fig in exercise_charts.figures(result, words(SOURCE_LANGUAGE))]
    for lang in OTHERS:
        theirs = exercise_charts.charts(result, words(lang))
        assert len(theirs) == len(english)
        for mine, en in zip(theirs, english, strict=True):
            assert mine.summary.strip() and mine.summary != en.summary, (lang, name, mine.summary)


def test_the_verification_summary_reads_the_bars_it_sits_under():
    result = hand_made("verification")
    counts, table = exercise_charts.charts(result, words(SOURCE_LANGUAGE))
    bars = {t.name: dict(zip(t.x, t.y, strict=True)) for t in counts.figure.data}
    for deployment in bars["HELD"]:
        told = (f"{deployment}: {bars['HELD'][deployment]} held, {bars['BROKEN'][deployment]} broken, "
                f"{bars['SKIPPED'][deployment]} skipped")
        assert told in counts.summary, (told, counts.summary)
    verdicts = table.figure.data[0].cells.values[3]
    assert f"{list(verdicts).count('BROKEN')} of {len(verdicts)} checks broke" in table.summary


def test_the_forgot_ready_summary_counts_the_wrong_symbols_drawn():
    result = hand_made("forgot_ready")
    (chart,) = exercise_charts.charts(result, words(SOURCE_LANGUAGE))
    drawn_wrong = {}
    for trace in chart.figure.data:  # one trace per verdict and facet row (the run)
        row = trace.yaxis
        drawn_wrong[row] = drawn_wrong.get(row, 0) + sum(trace.y)
    totals = sorted(drawn_wrong.values())
    said = sorted(int(n) for n in re.findall(r"(\d+) wrong symbols in all", chart.summary))
    assert said == totals and len(said) == 2
