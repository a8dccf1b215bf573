"""Failure-mode exercises: predict what the server will do, run it on the real server, see why.

API used by the CLI and the exercises page:
  EXERCISES            name -> Exercise (title, scenario, question, options, correct)
  get(name)            the Exercise, or ValueError listing the names
  run(name, server, deployer, progress=None) -> ExerciseResult
progress, if given, is called as progress(fraction 0..1, message) from the calling thread.
"""
from __future__ import annotations

import importlib
import threading

from app.lab.exercises.base import Exercise, ExerciseResult, Option, Progress

# One module per exercise, in teaching order; each has EXERCISE and run(server, deployer, progress).
ORDER = ("slot_exhaustion", "never_ending", "id_collision", "sticky_routing", "forgot_ready", "verification")
_MODULES = {name: importlib.import_module(f"app.lab.exercises.{name}") for name in ORDER}
EXERCISES: dict[str, Exercise] = {name: m.EXERCISE for name, m in _MODULES.items()}
# Two learners running the same exercise at once would share its models and skew each
# other's timings: one run per exercise at a time.
_LOCKS = {name: threading.Lock() for name in _MODULES}

__all__ = ["EXERCISES", "Exercise", "ExerciseResult", "Option", "Progress", "get", "run"]


def get(name: str) -> Exercise:
    try:
        return EXERCISES[name]
    except KeyError:
        raise ValueError(f"no exercise {name!r}: choose one of {', '.join(EXERCISES)}") from None


def run(name: str, server, deployer, progress: Progress | None = None) -> ExerciseResult:
    get(name)
    with _LOCKS[name]:
        return _MODULES[name].run(server, deployer, progress)
