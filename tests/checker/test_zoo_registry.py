"""The zoo and its tests kept in step: every model folder under zoo/ is loaded by some test module's
zoo_fixture and named again in that module's tests, so a model added to the zoo cannot sit untested."""
from __future__ import annotations

import ast
from pathlib import Path

from tests.checker.conftest import ZOO

MODELS = {p.name for p in ZOO.iterdir() if (p / "config.pbtxt").is_file()}


def _strings(node: ast.AST) -> set[str]:
    return {n.value for n in ast.walk(node) if isinstance(n, ast.Constant) and isinstance(n.value, str)}


def _loaded_and_used() -> tuple[set[str], set[str]]:
    """Models named in a zoo_fixture(...) call, and models named anywhere else in the same modules."""
    loaded: set[str] = set()
    used: set[str] = set()
    for path in Path(__file__).parent.glob("test_*.py"):
        tree = ast.parse(path.read_text())
        fixtures = [n for n in ast.walk(tree) if isinstance(n, ast.Call) and getattr(n.func, "id", "") == "zoo_fixture"]
        here = set().union(*(_strings(f) for f in fixtures)) & MODELS
        loaded |= here
        # a name that occurs only inside the fixture call is loaded but never checked
        used |= {m for m in here if sum(1 for n in ast.walk(tree) if isinstance(n, ast.Constant) and n.value == m) > 1}
    return loaded, used


def test_every_zoo_model_is_loaded_and_checked_by_a_test():
    loaded, used = _loaded_and_used()
    assert MODELS - loaded == set(), "zoo models no test module loads"
    assert MODELS - used == set(), "zoo models loaded but named in no test"
