"""Each exercise's figures: one module per exercise, a recogniser exercise's here (named as it is in
app/lab/exercises.REGISTRY), a generator exercise's beside its engine, app/generation/exercises/<name>/figures.py
(app/exercise_families.py finds which).

A module defines figures(result, _=str) -> list[Chart] (app/charts/figures.py: caption, plotly
Figure, summary), drawn only from the result's tables and numbers, labels passed through _ (a
Words, for the learner's language); each summary says its figure's message in words, from the
same table, with the words of app/text/exercises/<name>.py CHART_SUMMARIES. Importing this
package fails, naming the module, if an exercise has no figures.
"""
from __future__ import annotations

from collections.abc import Callable
from functools import cache

from app import exercise_families as families
from app.charts.figures import Chart
from app.lab.exercises import ExerciseResult


def _load(name: str) -> Callable:
    module = families.part(name, "figures")
    if not callable(getattr(module, "figures", None)):
        raise ImportError(f"chart module {module.__name__} lacks figures(result, _): see app/charts/exercises/__init__.py")
    return module.figures


@cache
def drawing(name: str) -> Callable:
    """Exercise `name`'s figures(result, _), found by its family (loaded when first drawn: a generator
    exercise's figures draw with this package's siblings)."""
    return _load(name)


def charts(result: ExerciseResult, _=str) -> list[Chart]:
    """The charts of the exercise that produced `result`: (caption, plotly Figure, summary) each,
    their words passed through _ (a Words, for the learner's language)."""
    families.get(result.name)
    return [Chart(*drawn) for drawn in drawing(result.name)(result, _)]


def figures(result: ExerciseResult, _=str) -> list[tuple[str, object]]:
    """The (caption, plotly Figure) of each of charts(result, _)."""
    return [(drawn.caption, drawn.figure) for drawn in charts(result, _)]
