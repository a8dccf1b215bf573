"""The families of exercises and where each keeps its parts: the recogniser's failure modes
(app/exercises/<name>/) and the generator's (app/generation/exercises/<name>/), each exercise a folder
with engine.py, words.py and figures.py side by side.

Every consumer (the Failure modes page, the CLI's `exercise` command, the words and figures lookups,
the registry tests) lists and runs exercises through here, so both families appear everywhere in
teaching order, the recogniser's first. Each family's package offers the same API: REGISTRY,
EXERCISES, get(name), run(name, server, deployer, progress), judge(name, measured).

It sits with the recogniser's exercises, not in the lab engine (which knows nothing of the generation feature),
and finds each family's modules by name (importlib), as app/exercises/words.py and app/exercises/figures.py find
each exercise's: the two features share a layer and the generator's exercises import app/exercises/common, so an
import of the generation feature from here would close a cycle.
"""
from __future__ import annotations

import importlib
from dataclasses import dataclass
from types import ModuleType
from typing import TYPE_CHECKING

from app.exercises.common import Exercise, ExerciseResult, Measured

if TYPE_CHECKING:
    from app.lab.deployment import Deployer
    from app.lab.progress import Progress
    from app.lab.server import LabServer


@dataclass(frozen=True)
class Family:
    name: str
    package: str  # the family's registry package
    engine: str  # the module of exercise {name} that defines EXERCISE, measure and judge
    words: str  # its words module
    figures: str  # its figures module
    tests: str  # its test module, from the repository's root


FAMILIES = (
    Family("recogniser", "app.exercises", "app.exercises.{name}.engine", "app.exercises.{name}.words",
           "app.exercises.{name}.figures", "tests/exercises/test_{name}.py"),
    Family("generation", "app.generation.exercises", "app.generation.exercises.{name}.engine",
           "app.generation.exercises.{name}.words", "app.generation.exercises.{name}.figures",
           "tests/generation/exercises/test_{name}.py"),
)


def registry(family: Family) -> ModuleType:
    return importlib.import_module(family.package)


def names() -> list[str]:
    """Every exercise, in teaching order: family by family."""
    return [name for family in FAMILIES for name in registry(family).REGISTRY]


def family_of(name: str) -> Family:
    for family in FAMILIES:
        if name in registry(family).REGISTRY:
            return family
    raise ValueError(f"no exercise {name!r}: choose one of {', '.join(names())}")


def get(name: str) -> Exercise:
    exercise: Exercise = registry(family_of(name)).get(name)
    return exercise


def run(name: str, server: LabServer, deployer: Deployer, progress: Progress | None = None) -> ExerciseResult:
    result: ExerciseResult = registry(family_of(name)).run(name, server, deployer, progress)
    return result


def judge(name: str, measured: Measured) -> ExerciseResult:
    result: ExerciseResult = registry(family_of(name)).judge(name, measured)
    return result


def module_path(name: str, part: str) -> str:
    """The dotted path of exercise `name`'s part: "engine", "words" or "figures"."""
    return str(getattr(family_of(name), part)).format(name=name)


def part(name: str, which: str) -> ModuleType:
    return importlib.import_module(module_path(name, which))
