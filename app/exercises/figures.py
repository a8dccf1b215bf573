"""Each exercise's figures: one module per exercise, beside its engine, a recogniser exercise's in
app/exercises/<name>/figures.py (named as it is in app.exercises.REGISTRY), a generator exercise's in
app/generation/exercises/<name>/figures.py (app/exercises/families.py finds which).

A module defines figures(result, _=str) -> list[Chart] (app/charts/figures.py: caption, plotly
Figure, summary), drawn only from the result's tables and numbers, labels passed through _ (a
Words, for the learner's language); each summary says its figure's message in words, from the
same table, with the words of its words.py CHART_SUMMARIES. Drawing an exercise whose module has
no figures fails, naming the module.
"""
from __future__ import annotations

from collections.abc import Callable
from functools import cache

from app.charts.figures import Chart
from app.exercises import families
from app.exercises.common import ExerciseResult
from app.i18n import Say

Drawing = Callable[[ExerciseResult, Say], list[Chart]]  # an exercise's figures(result, _)


def _load(name: str) -> Drawing:
    module = families.part(name, "figures")
    if not callable(getattr(module, "figures", None)):
        raise ImportError(f"chart module {module.__name__} lacks figures(result, _): see app/exercises/figures.py")
    drawn: Drawing = module.figures
    return drawn


@cache
def drawing(name: str) -> Drawing:
    """Exercise `name`'s figures(result, _), found by its family (loaded when first drawn: a generator
    exercise's figures are the generation feature's, found by name)."""
    return _load(name)


def charts(result: ExerciseResult, _: Say = str) -> list[Chart]:
    """The charts of the exercise that produced `result`: (caption, plotly Figure, summary) each,
    their words passed through _ (a Words, for the learner's language)."""
    families.get(result.name)
    return [Chart(*drawn) for drawn in drawing(result.name)(result, _)]


def figures(result: ExerciseResult, _: Say = str) -> list[tuple[str, object]]:
    """The (caption, plotly Figure) of each of charts(result, _)."""
    return [(drawn.caption, drawn.figure) for drawn in charts(result, _)]
