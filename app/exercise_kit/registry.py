"""The one registry class of exercises, for every family (the recogniser's, app/recogniser/exercises/family.py; the
generator's, app/generation/exercises/family.py): a family hands it its members, each a Member of its engine, words
and figures modules (app/exercise_kit/parts.py), and it checks them, runs one at a time and attaches the server log.

mypy checks each member's modules against the Protocols of parts.py; the Registry checks the same names again
when its family is built, so importing a family fails, naming the module and what it lacks, if a part is incomplete.
"""
from __future__ import annotations

import threading
from collections.abc import Iterable, Iterator
from contextlib import nullcontext
from typing import TYPE_CHECKING

from app.exercise_kit.base import DONE, Exercise, ExerciseResult, Measured
from app.exercise_kit.parts import EngineModule, FiguresModule, Member, WordsModule, required
from app.lab.observation import run_log, server_log
from app.lab.progress import Progress, Stage

if TYPE_CHECKING:
    from app.lab.deployment import Deployer
    from app.lab.server import LabServer

PARTS = ("engine", "words", "figures")  # a Member's modules, side by side in its folder
ENGINE = required(EngineModule)
WORDS = required(WordsModule)
FIGURES = required(FiguresModule)
WORDS_GUIDE = "app/registry/exercise_words.py"
FIGURES_GUIDE = "app/registry/exercise_figures.py"


def check_engine(module: EngineModule, name: str, guide: str) -> EngineModule:
    """An exercise's engine module, checked: it defines EXERCISE (an Exercise named `name`), measure and
    judge; `guide` is the file that says what a member must define, named in the error."""
    missing = [attr for attr in ENGINE if not hasattr(module, attr)]
    if missing:
        raise ImportError(f"exercise module {module.__name__} lacks {', '.join(missing)}: see {guide}")
    if not isinstance(module.EXERCISE, Exercise) or module.EXERCISE.name != name:
        raise ImportError(f"exercise module {module.__name__}: EXERCISE must be an Exercise named {name!r}")
    return module


def check_words(module: WordsModule) -> WordsModule:
    missing = [attr for attr in WORDS if not hasattr(module, attr)]
    if missing:
        raise ImportError(f"{module.__name__} lacks {', '.join(missing)}: see {WORDS_GUIDE}")
    return module


def check_figures(module: FiguresModule) -> FiguresModule:
    if not all(callable(getattr(module, attr, None)) for attr in FIGURES):
        raise ImportError(f"chart module {module.__name__} lacks figures(result, _): see {FIGURES_GUIDE}")
    return module


def _checked(member: Member, guide: str) -> Member:
    """A member whose modules define what the Protocols say, checked again at import: mypy checks the family's
    list, this catches a module changed at run time (the tests' monkeypatch) and names what it lacks."""
    return Member(check_engine(member.engine, member.name, guide), check_words(member.words), check_figures(member.figures))


class Registry:
    """A family's exercises, in teaching order: the order of `members`."""

    def __init__(self, family: str, guide: str, tests: str, members: Iterable[Member]) -> None:
        self.family = family
        self.guide = guide  # the file that says what a member defines, named in errors
        self.tests = tests  # each member's test module from the repository's root, with {name}
        self._parts = {member.name: _checked(member, guide) for member in members}
        self.exercises: dict[str, Exercise] = {name: parts.engine.EXERCISE for name, parts in self._parts.items()}
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

    def member(self, name: str) -> Member:
        """Exercise `name`'s engine, words and figures modules."""
        self.get(name)
        return self._parts[name]

    def run(self, name: str, server: LabServer, deployer: Deployer, progress: Progress | None = None) -> ExerciseResult:
        """Run one exercise and attach the server log lines that belong to its runs."""
        exercise = self.get(name)
        verbose = server_log.raised_verbosity(server, exercise.log_verbose) if exercise.log_verbose else nullcontext()
        with self._locks[name], verbose:
            window = server_log.LogWindow.start(server)
            measured = self._parts[name].engine.measure(server, deployer, progress)
        result = self.judge(name, measured)
        if result.log is None:  # an exercise that talks to Triton without the driver sets its own
            result.log = _exercise_log(window, measured)
        if progress:
            progress(1, 1, Stage(DONE))
        return result

    def judge(self, name: str, measured: Measured) -> ExerciseResult:
        """The result of an exercise from what it measured: its pure judge, no server."""
        return ExerciseResult.of(self.get(name), measured, self._parts[name].engine.judge(measured.tables))


def _exercise_log(window: server_log.LogWindow, measured: Measured) -> run_log.RunLog:
    """This server's lines for the exercise's models and IDs (loads included), plus the lines of
    runs that went to servers of their own (the sticky-routing replicas) as their runs read them."""
    runs = list(measured.runs.values())
    models = {r.scenario.model for r in runs} | set(measured.models)
    here = run_log.capture(window, models, [p.corrid for r in runs for p in r.plans])
    elsewhere = [r.log for r in runs if r.scenario.urls and r.log is not None]
    return run_log.merge([here, *elsewhere]) if elsewhere else here
