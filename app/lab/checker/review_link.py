"""The config review (issue 17 part 1: app/lab/checker/review.py and configs.py) as the check runs it.

The review is its own engine; the check runs it on the config the server reported, with the
figures the user stated (think time, sessions), and keeps its findings beside the verdicts.
"""
from __future__ import annotations

from pathlib import Path

from app.lab.checker import configs, review
from app.lab.checker.facts import ModelFacts
from app.lab.checker.options import CheckOptions


def expectations(options: CheckOptions) -> review.Expectations:
    """What the user stated, in the review's terms; figures the check does not know stay None."""
    return review.Expectations(think_ms=options.think_ms, sessions=options.sessions)


def findings(facts: ModelFacts, options: CheckOptions) -> list[review.ReviewFinding]:
    return review.review(configs.from_server_json(facts.config), expectations(options))


def offline(path: Path, options: CheckOptions) -> dict[str, list[review.ReviewFinding]]:
    """Findings per model for a config.pbtxt, a model folder or a repository (no server)."""
    return review.review_target(Path(path), expectations(options))
