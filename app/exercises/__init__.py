"""Failure-mode exercises: predict what the server will do, run it on the real server, see why.

One folder per exercise, app/exercises/<name>/:
  engine.py   EXERCISE = Exercise(name="<the folder's name>", options=(keys...), correct=key)
              measure(server, deployer, progress=None) -> Measured   # talks to the server, returns its tables
              judge(tables) -> ExerciseJudgement                     # pure: outcome, numbers, findings, explanation
              (Streamlit-free and word-free: an import-linter contract holds it)
  words.py    title, scenario, question, options, findings, steps: English templates marked for translation
              (what app/exercises/words.py reads)
  figures.py  figures(result, _) -> list[(caption, plotly Figure, summary)], drawn only from result.tables
              and numbers (what app/exercises/figures.py reads)
plus ONE line in REGISTRY below and its test, tests/exercises/test_<name>.py (every outcome judged on
hand-made tables, and one real run per test session, the module's `result` fixture). What several
exercises share (the result types, readings over run tables, fixed-name models, the loader) is in
app/exercises/common. A learner runs an exercise once, so the tests
pin what one run shows: the `result` fixture's docstring says why each outcome and number its tests
pin is certain (the mechanism, and what in measure() makes it so: a barrier, lock-step sending, a
counted capacity, a gate), or, where uncontrolled timing decides, that those tests assert only
what holds either way; it contains the word "certain", and tests/exercises/test_registry.py
fails for a module whose fixture does not. Nothing else lists exercises: the CLI, the page and
tests/exercises/test_registry.py read the registry, and importing this package fails,
naming the module and what it lacks, if an engine is incomplete.

API used by the CLI and the exercises page (through app/exercises/families.py, which lists both families):
  EXERCISES            name -> Exercise, in teaching order
  get(name)            the Exercise, or ValueError listing the names
  run(name, server, deployer, progress=None) -> ExerciseResult
  judge(name, measured) -> ExerciseResult
progress (app/lab/progress.Progress), if given, is called as progress(steps done, steps, Stage) from
the calling thread; the Stage is a STEPS code of the exercise's words, with its values.
"""
from __future__ import annotations

import threading
from contextlib import nullcontext
from typing import TYPE_CHECKING

from app.exercises.common import DONE, Exercise, ExerciseResult, Measured, load_exercise
from app.lab.observation import run_log, server_log
from app.lab.progress import Progress, Stage

if TYPE_CHECKING:
    from app.lab.deployment import Deployer
    from app.lab.server import LabServer

# The only list of exercises, in teaching order: one module name per line.
REGISTRY = (
    "slot_exhaustion",
    "never_ending",
    "id_collision",
    "sticky_routing",
    "forgot_ready",
    "verification",
    "cancelled_request",
    "pipelined_client",
    "leaked_state",
    "overload",
)


_MODULES = {name: load_exercise(f"app.exercises.{name}.engine", name, "app/exercises/__init__.py") for name in REGISTRY}
EXERCISES: dict[str, Exercise] = {name: m.EXERCISE for name, m in _MODULES.items()}
# Two learners running the same exercise at once would share its models and skew each
# other's timings: one run per exercise at a time.
_LOCKS = {name: threading.Lock() for name in _MODULES}

# The result types and the loader are app/exercises/common's; each exercise's constants are its engine's
# (its figures and words read them: `leaked_state.engine.EVICT_S`). app/exercises/families.py lists and
# runs both families of exercises (these and the generator's, app/generation/exercises).
__all__ = ["EXERCISES", "REGISTRY", "get", "judge", "run"]


def get(name: str) -> Exercise:
    try:
        return EXERCISES[name]
    except KeyError:
        raise ValueError(f"no exercise {name!r}: choose one of {', '.join(EXERCISES)}") from None


def run(name: str, server: LabServer, deployer: Deployer, progress: Progress | None = None) -> ExerciseResult:
    """Run one exercise and attach the server log lines that belong to its runs."""
    exercise = get(name)
    verbose = server_log.raised_verbosity(server, exercise.log_verbose) if exercise.log_verbose else nullcontext()
    with _LOCKS[name], verbose:
        window = server_log.LogWindow.start(server)
        measured = _MODULES[name].measure(server, deployer, progress)
    result = judge(name, measured)
    if result.log is None:  # an exercise that talks to Triton without the driver sets its own
        result.log = _exercise_log(window, result)
    if progress:
        progress(1, 1, Stage(DONE))
    return result


def judge(name: str, measured: Measured) -> ExerciseResult:
    """The result of an exercise from what it measured: its pure judge, no server."""
    return ExerciseResult.of(get(name), measured, _MODULES[name].judge(measured.tables))


def _exercise_log(window: server_log.LogWindow, result: ExerciseResult) -> run_log.RunLog:
    """This server's lines for the exercise's models and IDs (loads included), plus the lines of
    runs that went to servers of their own (the sticky-routing replicas) as their runs read them."""
    runs = list(result.runs.values())
    here = run_log.capture(window, {r.scenario.model for r in runs}, [p.corrid for r in runs for p in r.plans])
    elsewhere = [r.log for r in runs if r.scenario.urls and r.log is not None]
    return run_log.merge([here, *elsewhere]) if elsewhere else here
