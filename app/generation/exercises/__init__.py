"""The generator's exercises: predict, run on the real server, see why. The same API as app.exercises
(EXERCISES, get, run, judge), so the Failure modes page, the CLI and the tests list both families
(app/exercises/families.py).

One folder per exercise, app/generation/exercises/<name>/:
  engine.py   EXERCISE, measure(server, deployer, progress) -> Measured, pure judge(tables) -> ExerciseJudgement
              (Streamlit-free and word-free: an import-linter contract holds it)
  words.py    TITLE, SCENARIO, QUESTION, OPTIONS, NUMBERS, FINDINGS, STEPS (English templates marked with N_)
              and CHART_SUMMARIES
  figures.py  figures(result, _) -> list[(caption, plotly Figure, summary)]
plus its line in REGISTRY and its test, tests/generation/exercises/test_<name>.py (every outcome judged on
hand-made tables, one real run in a `result` fixture whose docstring says why what it pins is certain).
"""
from __future__ import annotations

import threading
from typing import TYPE_CHECKING

from app.exercises.common import DONE, Exercise, ExerciseResult, Measured, load_exercise
from app.lab.progress import Progress, Stage

if TYPE_CHECKING:
    from app.lab.deployment import Deployer
    from app.lab.server import LabServer

# The only list of the generator's exercises, in teaching order.
REGISTRY = (
    "head_of_line",
    "queue_delay_trade",
    "state_by_row",
    "cancelled_generation",
    # The paged engine's (kv_engine): memory decides the batch.
    "kv_too_few_blocks",
    "kv_shared_prefix",
    "kv_chunked_prefill",
    "kv_cancelled_blocks",
)


_MODULES = {name: load_exercise(f"app.generation.exercises.{name}.engine", name, "app/generation/exercises/__init__.py")
            for name in REGISTRY}
EXERCISES: dict[str, Exercise] = {name: m.EXERCISE for name, m in _MODULES.items()}
_LOCKS = {name: threading.Lock() for name in _MODULES}  # one run per exercise at a time: its deployments are its own

__all__ = ["EXERCISES", "REGISTRY", "get", "judge", "run"]


def get(name: str) -> Exercise:
    try:
        return EXERCISES[name]
    except KeyError:
        raise ValueError(f"no exercise {name!r}: choose one of {', '.join(EXERCISES)}") from None


def run(name: str, server: LabServer, deployer: Deployer, progress: Progress | None = None) -> ExerciseResult:
    get(name)
    with _LOCKS[name]:
        measured = _MODULES[name].measure(server, deployer, progress)
    result = judge(name, measured)
    if progress:
        progress(1, 1, Stage(DONE))
    return result


def judge(name: str, measured: Measured) -> ExerciseResult:
    """The result of an exercise from what it measured: its pure judge, no server."""
    return ExerciseResult.of(get(name), measured, _MODULES[name].judge(measured.tables))
