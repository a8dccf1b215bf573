"""Each exercise's figures: one module per exercise, named as it is in app/lab/exercises.REGISTRY.

A module defines figures(result, _=str) -> list[(caption, plotly Figure)], drawn only from the
result's tables and numbers, labels passed through _ (a Words, for the learner's language).
Importing this package fails, naming the module, if an exercise has no figures.
"""
from __future__ import annotations

import importlib
from collections.abc import Callable

from app.lab.exercises import REGISTRY, ExerciseResult, get


def _load(name: str) -> Callable:
    module = importlib.import_module(f"app.charts.exercises.{name}")
    if not callable(getattr(module, "figures", None)):
        raise ImportError(f"chart module {module.__name__} lacks figures(result, _): see app/charts/exercises/__init__.py")
    return module.figures


FIGURES: dict[str, Callable] = {name: _load(name) for name in REGISTRY}


def figures(result: ExerciseResult, _=str) -> list:
    """The charts of the exercise that produced `result`: list of (caption, plotly Figure),
    their labels passed through _ (a Words, for the learner's language)."""
    get(result.name)
    return FIGURES[result.name](result, _)
