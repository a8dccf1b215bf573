"""The families of exercises: the recogniser's failure modes (app/recogniser/exercises/family.py) and the generator's
(app/generation/exercises/family.py), each exercise a folder with engine.py, words.py and figures.py side by side.

Every consumer (the Failure modes page, the CLI's `exercise` command, the words and figures lookups,
the registry tests) lists and runs exercises through here, so both families appear everywhere in
teaching order, the recogniser's first. Each family is an app/exercise_kit Registry: the same class, so
every exercise runs one at a time and gets the server log of its runs.

It sits above both features and imports their lists statically: no feature imports it, so no edge closes a loop.
"""
from __future__ import annotations

from typing import TYPE_CHECKING

from app.exercise_kit import Exercise, ExerciseResult, Measured, Member, Registry
from app.generation.exercises.family import EXERCISES as GENERATION
from app.recogniser.exercises.family import EXERCISES as RECOGNISER

if TYPE_CHECKING:
    from app.lab.deployment import Deployer
    from app.lab.progress import Progress
    from app.lab.server import LabServer

FAMILIES: tuple[Registry, ...] = (RECOGNISER, GENERATION)


def names() -> list[str]:
    """Every exercise, in teaching order: family by family."""
    return [name for family in FAMILIES for name in family]


def family_of(name: str) -> Registry:
    for family in FAMILIES:
        if name in family:
            return family
    raise ValueError(f"no exercise {name!r}: choose one of {', '.join(names())}")


def get(name: str) -> Exercise:
    return family_of(name).get(name)


def run(name: str, server: LabServer, deployer: Deployer, progress: Progress | None = None) -> ExerciseResult:
    return family_of(name).run(name, server, deployer, progress)


def judge(name: str, measured: Measured) -> ExerciseResult:
    return family_of(name).judge(name, measured)


def member(name: str) -> Member:
    """Exercise `name`'s engine, words and figures modules, typed by their Protocols (app/exercise_kit/parts.py)."""
    return family_of(name).member(name)
