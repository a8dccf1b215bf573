"""The config review (issue 17 part 1: app/lab/checker/review.py and configs.py) as the check runs it.

The review is its own engine; the check runs it on the config the server reported, with the
figures the user stated (think time, sessions, their clients' IDs, backend, GPUs), and keeps its
findings beside the verdicts.
"""
from __future__ import annotations

from pathlib import Path

from app.lab.checker import configs, review
from app.lab.checker.facts import ModelFacts
from app.lab.checker.options import CheckOptions


def findings(facts: ModelFacts, options: CheckOptions) -> list[review.ReviewFinding]:
    return review.review(configs.from_server_json(facts.config), options.expectations())


def offline(path: Path, options: CheckOptions) -> dict[str, list[review.ReviewFinding]]:
    """Findings per model for a config.pbtxt, a model folder or a repository (no server)."""
    return review.review_target(Path(path), options.expectations())
