"""Every exception the app defines descends from one root, app/lab/errors.py's BatchingLabError,
and that module's docstring draws the tree with every one of them in it."""
from __future__ import annotations

import importlib
import inspect
import pkgutil

import app
from app.lab import errors
from app.lab.errors import BatchingLabError

# Page scripts run when imported (Streamlit runs them as pages), so they are not walked; they
# define no exceptions.
SCRIPTS = ("app.views", "app.main")
# Signals a module raises and catches inside itself: they never reach a caller.
INTERNAL = {"CopySkipped", "_Bad"}


def defined_exceptions() -> dict[str, type[BaseException]]:
    found: dict[str, type[BaseException]] = {}
    for module_info in pkgutil.walk_packages(app.__path__, "app."):
        name = module_info.name
        if name.startswith(SCRIPTS) or ".migrations" in name:
            continue
        module = importlib.import_module(name)
        for attr, value in vars(module).items():
            if inspect.isclass(value) and issubclass(value, BaseException) and value.__module__ == name:
                found[f"{name}.{attr}"] = value
    return found


def test_every_exception_of_the_app_descends_from_the_root():
    found = defined_exceptions()
    assert len(found) >= 20, sorted(found)  # the walk saw the app's modules
    strays = sorted(name for name, cls in found.items()
                    if not issubclass(cls, BatchingLabError) and name.rsplit(".", 1)[1] not in INTERNAL)
    assert strays == [], strays


def test_the_tree_in_the_roots_docstring_names_every_exception():
    drawn = errors.__doc__ or ""
    missing = sorted(name for name, cls in defined_exceptions().items()
                     if issubclass(cls, BatchingLabError) and cls is not BatchingLabError and f" {cls.__name__}" not in drawn)
    assert missing == [], missing
