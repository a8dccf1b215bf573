"""Each exercise's figures: one module per exercise, beside its engine, a recogniser exercise's in
app/recogniser/exercises/<name>/figures.py, a generator exercise's in app/generation/exercises/<name>/figures.py
(listed by its family; app/registry/families.py finds which).

A module defines figures(result, _=str) -> list[Chart] (app/charts/figures.py: caption, plotly
Figure, summary), drawn only from the result's tables and numbers, labels passed through _ (a
Words, for the learner's language); each summary says its figure's message in words, from the
same table, with the words of its words.py CHART_SUMMARIES. A family whose member's figures module
has no figures() fails mypy (app/exercise_kit/parts.py's FiguresModule) and to load, naming the module
(app/exercise_kit/registry.py).
"""
from __future__ import annotations

from collections.abc import Callable, Sequence

from app.charts.figures import Chart
from app.exercise_kit import ExerciseResult
from app.i18n import Say
from app.registry import families

Drawing = Callable[[ExerciseResult, Say], Sequence[tuple[str, object, str]]]  # an exercise's figures(result, _)


def drawing(name: str) -> Drawing:
    """Exercise `name`'s figures(result, _), found by its family."""
    return families.member(name).figures.figures


def charts(result: ExerciseResult, _: Say = str) -> list[Chart]:
    """The charts of the exercise that produced `result`: (caption, plotly Figure, summary) each,
    their words passed through _ (a Words, for the learner's language)."""
    return [Chart(*drawn) for drawn in drawing(result.name)(result, _)]


def figures(result: ExerciseResult, _: Say = str) -> list[tuple[str, object]]:
    """The (caption, plotly Figure) of each of charts(result, _)."""
    return [(drawn.caption, drawn.figure) for drawn in charts(result, _)]
