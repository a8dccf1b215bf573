"""Each exercise's figures: one module per exercise, named as it is in app/lab/exercises.REGISTRY.

A module defines figures(result, _=str) -> list[Chart] (app/charts/figures.py: caption, plotly
Figure, summary), drawn only from the result's tables and numbers, labels passed through _ (a
Words, for the learner's language); each summary says its figure's message in words, from the
same table, with the words of app/text/exercises/<name>.py CHART_SUMMARIES. Importing this
package fails, naming the module, if an exercise has no figures.
"""
from __future__ import annotations

import importlib
from collections.abc import Callable

from app.charts.figures import Chart
from app.lab.exercises import REGISTRY, ExerciseResult, get


def _load(name: str) -> Callable:
    module = importlib.import_module(f"app.charts.exercises.{name}")
    if not callable(getattr(module, "figures", None)):
        raise ImportError(f"chart module {module.__name__} lacks figures(result, _): see app/charts/exercises/__init__.py")
    return module.figures


FIGURES: dict[str, Callable] = {name: _load(name) for name in REGISTRY}


def charts(result: ExerciseResult, _=str) -> list[Chart]:
    """The charts of the exercise that produced `result`: (caption, plotly Figure, summary) each,
    their words passed through _ (a Words, for the learner's language)."""
    get(result.name)
    return [Chart(*drawn) for drawn in FIGURES[result.name](result, _)]


def figures(result: ExerciseResult, _=str) -> list[tuple[str, object]]:
    """The (caption, plotly Figure) of each of charts(result, _)."""
    return [(drawn.caption, drawn.figure) for drawn in charts(result, _)]
