"""The config review (app/checker/engine/review/, its configs.py) as the check runs it.

The review is its own engine; the check runs it on the config the server reported, with the
figures the user stated (think time, sessions, their clients' IDs, backend, GPUs) and the version
the server reported, and keeps its findings beside the verdicts. Offline, the version is the
user's (--triton-version), or none. This module sits beside the review package, not in it: it
reads the check's options, which read the review's Expectations (a cycle the import contract forbids).
"""
from __future__ import annotations

from dataclasses import replace
from pathlib import Path

from app.checker.engine import review
from app.checker.engine.facts import ModelFacts
from app.checker.engine.options import CheckOptions
from app.checker.engine.review import configs


def findings(facts: ModelFacts, options: CheckOptions, version: str | None = None) -> list[review.ReviewFinding]:
    """The review of the served config for the server's version, as live_version() read it (None:
    none it could read, so the checks that depend on it say so)."""
    expect = replace(options.expectations(), triton_version=version)
    return review.review(configs.from_server_json(facts.config), expect)


def live_version(reported: str | None) -> str | None:
    """The server's version as the review reads it; anything else is no version at all (an
    external server's own business, not a mistake of the user's)."""
    return reported if review.parse_version(reported) is not None else None


def offline(path: Path, options: CheckOptions) -> dict[str, list[review.ReviewFinding]]:
    """Findings per model for a config.pbtxt, a model folder or a repository (no server)."""
    return review.review_target(Path(path), options.expectations())
