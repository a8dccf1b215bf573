"""What each of an exercise's three modules must define, as Protocols: a family lists each member as a Member of
its engine, words and figures modules, so mypy checks every module against these (a words module without
QUESTION, or a figures() that takes no result, fails `mypy app`), and the Registry checks the same names at import.

Word-free and plotly-free like the rest of this package: a figure is `object` here (plotly's Figure is untyped)
and a translator is Callable[[str], str], app/i18n's Say spelled out.
"""
from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Protocol

from app.exercise_kit.base import Exercise, ExerciseJudgement, ExerciseResult, Measured, Tables

if TYPE_CHECKING:
    from app.lab.deployment import Deployer
    from app.lab.progress import Progress
    from app.lab.server import LabServer


class EngineModule(Protocol):
    """An exercise's engine.py: app/recogniser/exercises/__init__.py says what each name does."""

    __name__: str
    EXERCISE: Exercise

    def measure(self, server: LabServer, deployer: Deployer, progress: Progress | None = None) -> Measured: ...

    def judge(self, tables: Tables) -> ExerciseJudgement: ...


class WordsModule(Protocol):
    """An exercise's words.py: app/registry/exercise_words.py says what each table holds. VALUES and
    CHART_SUMMARIES are optional, so they are not members."""

    __name__: str
    TITLE: str
    SCENARIO: str
    QUESTION: str
    OPTIONS: dict[str, str]
    NUMBERS: dict[str, str]
    FINDINGS: dict[str, str]
    STEPS: dict[str, str]


class FiguresModule(Protocol):
    """An exercise's figures.py: figures(result, _=str) -> its charts, each (caption, figure, summary)."""

    __name__: str

    def figures(self, result: ExerciseResult, _: Callable[[str], str] = ..., /) -> Sequence[tuple[str, object, str]]: ...


def required(protocol: type) -> tuple[str, ...]:
    """The names a module must define for `protocol`, in declaration order: its annotated data, then its
    functions. The Registry's check at import and its tests read these, so they and mypy name the same ones."""
    data = [name for name in protocol.__annotations__ if not name.startswith("__")]
    return (*data, *(name for name, member in vars(protocol).items() if callable(member) and not name.startswith("_")))


@dataclass(frozen=True)
class Member:
    """One exercise of a family: its three modules, side by side in its folder; the folder's name is the exercise's."""

    engine: EngineModule
    words: WordsModule
    figures: FiguresModule

    @property
    def name(self) -> str:
        return self.engine.__name__.rsplit(".", 2)[-2]
