"""The exercise registry the CLI and the page rely on."""
from __future__ import annotations

import pytest

from app.lab import exercises

NAMES = ["slot_exhaustion", "never_ending", "id_collision", "sticky_routing", "forgot_ready", "verification"]


def test_six_exercises_in_teaching_order():
    assert list(exercises.EXERCISES) == NAMES


@pytest.mark.parametrize("name", NAMES)
def test_each_exercise_asks_a_question_it_can_answer(name):
    ex = exercises.get(name)
    assert ex.title and ex.scenario and ex.question.endswith("?")
    keys = [o.key for o in ex.options]
    assert len(keys) == len(set(keys)) >= 3
    assert ex.correct in keys


def test_unknown_name_lists_the_names():
    with pytest.raises(ValueError) as err:
        exercises.get("nope")
    for name in NAMES:
        assert name in str(err.value)
    with pytest.raises(ValueError):
        exercises.run("nope", None, None)
