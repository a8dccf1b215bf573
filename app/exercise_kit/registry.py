"""The one registry class of exercises, for every family (the recogniser's, app/recogniser/exercises/family.py; the
generator's, app/generation/exercises/family.py): a family hands it its members as imported packages, each
with its engine, words and figures modules, and it checks them, runs one at a time and attaches the server log.

A member is checked when its family is built, so importing a family fails, naming the module and what it
lacks, if a part is missing or incomplete.
"""
from __future__ import annotations

import threading
from collections.abc import Iterable, Iterator
from contextlib import nullcontext
from types import ModuleType
from typing import TYPE_CHECKING

from app.exercise_kit.base import DONE, Exercise, ExerciseResult, Measured
from app.lab.observation import run_log, server_log
from app.lab.progress import Progress, Stage

if TYPE_CHECKING:
    from app.lab.deployment import Deployer
    from app.lab.server import LabServer

PARTS = ("engine", "words", "figures")  # the modules a member's package imports, side by side
ENGINE = ("EXERCISE", "measure", "judge")
WORDS = ("TITLE", "SCENARIO", "QUESTION", "OPTIONS", "NUMBERS", "FINDINGS", "STEPS")
WORDS_GUIDE = "app/registry/exercise_words.py"
FIGURES_GUIDE = "app/registry/exercise_figures.py"


def check_engine(module: ModuleType, name: str, guide: str) -> ModuleType:
    """An exercise's engine module, checked: it defines EXERCISE (an Exercise named `name`), measure and
    judge; `guide` is the file that says what a member must define, named in the error."""
    missing = [attr for attr in ENGINE if not hasattr(module, attr)]
    if missing:
        raise ImportError(f"exercise module {module.__name__} lacks {', '.join(missing)}: see {guide}")
    if not isinstance(module.EXERCISE, Exercise) or module.EXERCISE.name != name:
        raise ImportError(f"exercise module {module.__name__}: EXERCISE must be an Exercise named {name!r}")
    return module


def check_words(module: ModuleType) -> ModuleType:
    missing = [attr for attr in WORDS if not hasattr(module, attr)]
    if missing:
        raise ImportError(f"{module.__name__} lacks {', '.join(missing)}: see {WORDS_GUIDE}")
    return module


def check_figures(module: ModuleType) -> ModuleType:
    if not callable(getattr(module, "figures", None)):
        raise ImportError(f"chart module {module.__name__} lacks figures(result, _): see {FIGURES_GUIDE}")
    return module


def _parts(package: ModuleType, guide: str) -> dict[str, ModuleType]:
    """A member's engine, words and figures, each checked; the package's last name is the exercise's."""
    missing = [part for part in PARTS if not isinstance(getattr(package, part, None), ModuleType)]
    if missing:
        raise ImportError(f"exercise package {package.__name__} has no {', '.join(missing)} imported: see {guide}")
    name = package.__name__.rsplit(".", 1)[-1]
    return {"engine": check_engine(package.engine, name, guide), "words": check_words(package.words),
            "figures": check_figures(package.figures)}


class Registry:
    """A family's exercises, in teaching order: the order of `members`."""

    def __init__(self, family: str, guide: str, tests: str, members: Iterable[ModuleType]) -> None:
        self.family = family
        self.guide = guide  # the file that says what a member defines, named in errors
        self.tests = tests  # each member's test module from the repository's root, with {name}
        self._parts = {package.__name__.rsplit(".", 1)[-1]: _parts(package, guide) for package in members}
        self.exercises: dict[str, Exercise] = {name: parts["engine"].EXERCISE for name, parts in self._parts.items()}
        # Two learners running the same exercise at once would share its models and skew each
        # other's timings: one run per exercise at a time.
        self._locks = {name: threading.Lock() for name in self._parts}

    def __iter__(self) -> Iterator[str]:
        return iter(self._parts)

    def __contains__(self, name: object) -> bool:
        return name in self._parts

    def get(self, name: str) -> Exercise:
        try:
            return self.exercises[name]
        except KeyError:
            raise ValueError(f"no exercise {name!r}: choose one of {', '.join(self.exercises)}") from None

    def part(self, name: str, which: str) -> ModuleType:
        """Exercise `name`'s module `which`: "engine", "words" or "figures"."""
        self.get(name)
        return self._parts[name][which]

    def run(self, name: str, server: LabServer, deployer: Deployer, progress: Progress | None = None) -> ExerciseResult:
        """Run one exercise and attach the server log lines that belong to its runs."""
        exercise = self.get(name)
        verbose = server_log.raised_verbosity(server, exercise.log_verbose) if exercise.log_verbose else nullcontext()
        with self._locks[name], verbose:
            window = server_log.LogWindow.start(server)
            measured = self._parts[name]["engine"].measure(server, deployer, progress)
        result = self.judge(name, measured)
        if result.log is None:  # an exercise that talks to Triton without the driver sets its own
            result.log = _exercise_log(window, measured)
        if progress:
            progress(1, 1, Stage(DONE))
        return result

    def judge(self, name: str, measured: Measured) -> ExerciseResult:
        """The result of an exercise from what it measured: its pure judge, no server."""
        return ExerciseResult.of(self.get(name), measured, self._parts[name]["engine"].judge(measured.tables))


def _exercise_log(window: server_log.LogWindow, measured: Measured) -> run_log.RunLog:
    """This server's lines for the exercise's models and IDs (loads included), plus the lines of
    runs that went to servers of their own (the sticky-routing replicas) as their runs read them."""
    runs = list(measured.runs.values())
    models = {r.scenario.model for r in runs} | set(measured.models)
    here = run_log.capture(window, models, [p.corrid for r in runs for p in r.plans])
    elsewhere = [r.log for r in runs if r.scenario.urls and r.log is not None]
    return run_log.merge([here, *elsewhere]) if elsewhere else here
