"""The one loader of exercise engines, for both families (the recogniser's registry, app/exercises, and
the generator's, app/generation/exercises): it sits with what exercises share, below both registries."""
from __future__ import annotations

import importlib
from types import ModuleType

from app.exercises.common.base import Exercise


def load_exercise(module_name: str, name: str, guide: str) -> ModuleType:
    """An exercise's engine module, checked: it defines EXERCISE (an Exercise named `name`),
    measure and judge. Every family's registry loads its members through this; `guide` is the
    file that says what a member must define, named in the error."""
    module = importlib.import_module(module_name)
    missing = [attr for attr in ("EXERCISE", "measure", "judge") if not hasattr(module, attr)]
    if missing:
        raise ImportError(f"exercise module {module.__name__} lacks {', '.join(missing)}: see {guide}")
    if not isinstance(module.EXERCISE, Exercise) or module.EXERCISE.name != name:
        raise ImportError(f"exercise module {module.__name__}: EXERCISE must be an Exercise named {name!r}")
    return module
