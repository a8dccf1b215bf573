"""Each engine package has one public interface, its __init__'s __all__, and app code uses only that.

The rule, read from the source with `ast` (no import of the callers):
- app code outside an engine package imports from the package itself (`from app.checker.engine
  import run_check`), never from one of its modules (`app.checker.engine.run`), and only names its
  `__all__` lists; a module is imported from its package only where `__all__` lists it as a
  namespace (`from app.lab.observation import server_log`). Modules inside a package import
  their siblings freely.
- no module in app/ imports another module's private (_underscored) name.
- tests/ and benchmarks/ may import a package's modules, to test or time what is inside them.
"""
from __future__ import annotations

import ast
import functools
import importlib
from pathlib import Path

import pytest

REPO_ROOT = Path(__file__).resolve().parents[1]
APP = REPO_ROOT / "app"
PACKAGES = ("app.checker.engine", "app.exercise_kit", "app.lab.traffic", "app.lab.deployment", "app.lab.server", "app.lab.observation")


def _module_name(path: Path) -> str:
    parts = path.relative_to(REPO_ROOT).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


@functools.cache  # the tree does not change during a run; two tests walk it
def _sources() -> list[tuple[Path, str, ast.Module]]:
    return [(p, _module_name(p), ast.parse(p.read_text(), filename=str(p))) for p in sorted(APP.rglob("*.py"))]


@functools.cache
def _public(package: str) -> set[str]:
    return set(importlib.import_module(package).__all__)


def _engine_package(dotted: str) -> str | None:
    """The engine package a dotted module name falls in (`app.checker.engine.run` -> app.checker.engine)."""
    return next((p for p in PACKAGES if _inside(dotted, p)), None)


def _inside(module: str, package: str) -> bool:
    return module == package or module.startswith(f"{package}.")


def _interface_breaches(path: Path, module: str, tree: ast.Module) -> list[str]:
    where = f"{path.relative_to(REPO_ROOT)}"
    found = []
    aliases: dict[str, str] = {}  # local name -> engine package, for `from app.lab import traffic`
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            for alias in node.names:
                package = _engine_package(alias.name)
                if package and not _inside(module, package) and alias.name != package:
                    found.append(f"{where}:{node.lineno}: import {alias.name} (import from {package})")
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            if any(p.rpartition(".")[0] == node.module for p in PACKAGES):
                for alias in node.names:
                    named = f"{node.module}.{alias.name}"
                    if named in PACKAGES and not _inside(module, named):
                        aliases[alias.asname or alias.name] = named
                continue
            package = _engine_package(node.module)
            if not package or _inside(module, package):
                continue
            if node.module != package:
                found.append(f"{where}:{node.lineno}: from {node.module} import ... (import from {package})")
                continue
            for alias in node.names:
                if alias.name not in _public(package):
                    found.append(f"{where}:{node.lineno}: from {package} import {alias.name}: not in its __all__")
    for node in ast.walk(tree):
        if isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name) and node.value.id in aliases:
            package = aliases[node.value.id]
            if node.attr not in _public(package):
                found.append(f"{where}:{node.lineno}: {node.value.id}.{node.attr}: not in {package}.__all__")
    return found


def _private(name: str) -> bool:
    """_name is private; `_` (the translation function by convention) and __dunder__ are not."""
    return name.startswith("_") and name != "_" and not name.startswith("__")


def _private_imports(path: Path, tree: ast.Module) -> list[str]:
    return [f"{path.relative_to(REPO_ROOT)}:{node.lineno}: from {node.module} import {alias.name}"
            for node in ast.walk(tree) if isinstance(node, ast.ImportFrom)
            for alias in node.names if _private(alias.name)]


def test_app_code_imports_each_engine_package_through_its_interface():
    breaches = [b for path, module, tree in _sources() for b in _interface_breaches(path, module, tree)]
    assert not breaches, "\n".join(breaches)


def test_no_module_imports_another_modules_private_name():
    found = [p for path, _module, tree in _sources() for p in _private_imports(path, tree)]
    assert not found, "\n".join(found)


@pytest.mark.parametrize("package", PACKAGES)
def test_every_name_an_interface_lists_is_there_and_the_package_says_what_it_is(package):
    imported = importlib.import_module(package)
    init = package.replace(".", "/") + "/__init__.py"
    assert (imported.__doc__ or "").strip(), f"{init} needs a docstring saying what the package is"
    missing = [name for name in imported.__all__ if not hasattr(imported, name)]
    assert not missing, f"{package}.__all__ lists {missing}, which it does not define"
    assert len(set(imported.__all__)) == len(imported.__all__), f"{package}.__all__ lists a name twice"


def test_the_rule_sees_a_breach_and_names_its_line():
    """The checks above could pass by seeing nothing: a module written to break each rule is caught."""
    source = ("from app.checker.engine.run import run_check\nimport app.lab.server.connection\n"
              "from app.checker.engine import engine\nfrom app.lab import traffic\ntraffic.report\n"
              "from app.checker.engine.judge import _private\n")
    tree = ast.parse(source)
    path = APP / "ui" / "example.py"
    breaches = _interface_breaches(path, "app.ui.example", tree)
    assert [b.split(": ", 1)[0] for b in breaches] == [f"app/ui/example.py:{n}" for n in (1, 2, 3, 6, 5)], breaches
    assert _private_imports(path, tree) == ["app/ui/example.py:6: from app.checker.engine.judge import _private"]
    assert not _interface_breaches(APP / "checker" / "engine" / "x.py", "app.checker.engine.x", ast.parse("from app.checker.engine.run import run_check\n"))
