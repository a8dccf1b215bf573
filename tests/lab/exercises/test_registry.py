"""The exercise registry the CLI and the page rely on: every registered exercise is complete."""
from __future__ import annotations

import importlib

import plotly.graph_objects as go
import pytest

from app.lab import exercises
from app.lab.exercises.base import ExerciseResult

NAMES = list(exercises.REGISTRY)


def test_registry_is_the_order_of_exercises_and_names_each_module_once():
    assert len(NAMES) == len(set(NAMES)) >= 1
    assert list(exercises.EXERCISES) == NAMES
    for name in NAMES:
        assert exercises.EXERCISES[name].name == name


@pytest.mark.parametrize("name", NAMES)
def test_each_exercise_asks_a_question_it_can_answer(name):
    ex = exercises.get(name)
    assert ex.title and ex.scenario and ex.question.endswith("?")
    keys = [o.key for o in ex.options]
    assert len(keys) == len(set(keys)) >= 3
    assert all(o.text for o in ex.options)
    assert ex.correct in keys


def _points(trace) -> int:
    """How many values a trace draws (bars, markers, heat cells or table cells)."""
    if isinstance(trace, go.Table):
        return sum(len(column) for column in trace.cells.values or ())
    values = [getattr(trace, axis, None) for axis in ("x", "y", "z")]
    return max(len(v) if v is not None else 0 for v in values)


@pytest.mark.parametrize("name", NAMES)
def test_each_exercise_draws_its_figures_from_a_real_result(name, exercise_result):
    result = exercise_result(name)
    assert isinstance(result, ExerciseResult) and result.name == name
    assert result.outcome in [o.key for o in result.exercise.options]
    charts = exercises.figures(result)
    assert charts, f"{name} draws no figure"
    for caption, fig in charts:
        assert caption and isinstance(fig, go.Figure)
        assert fig.data and max(_points(t) for t in fig.data) > 0, f"{name}: {caption!r} is empty"


def test_an_incomplete_module_is_refused_by_name(monkeypatch):
    module = importlib.import_module("app.lab.exercises.forgot_ready")
    monkeypatch.delattr(module, "figures")
    with pytest.raises(ImportError, match="forgot_ready lacks figures"):
        exercises._load("forgot_ready")


def test_unknown_name_lists_the_names():
    with pytest.raises(ValueError) as err:
        exercises.get("nope")
    for name in NAMES:
        assert name in str(err.value)
    with pytest.raises(ValueError):
        exercises.run("nope", None, None)
