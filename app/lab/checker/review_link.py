"""The config review (issue 17 part 1: app/lab/checker/review.py and configs.py) as the check runs it.

The review is its own engine; the check runs it on the config the server reported, with the
figures the user stated (think time, sessions), and stores its findings beside the verdicts.
Where those modules are not installed the check still runs and says the review is unavailable.
"""
from __future__ import annotations

from pathlib import Path

from app.lab.checker.facts import ModelFacts
from app.lab.checker.options import CheckOptions


def _modules():
    try:
        from app.lab.checker import configs, review
    except ImportError:
        return None
    return configs, review


def expectations(options: CheckOptions):
    """What the user stated, in the review's terms; figures the check does not know stay None."""
    modules = _modules()
    if modules is None:
        return None
    return modules[1].Expectations(think_ms=options.think_ms, sessions=options.sessions)


def findings(facts: ModelFacts, options: CheckOptions) -> tuple[list, str | None]:
    """(findings, None), or ([], why there are none) when the review is not installed."""
    modules = _modules()
    if modules is None:
        return [], "review_not_installed"
    configs, review = modules
    return list(review.review(configs.from_server_json(facts.config), expectations(options))), None


def offline(path: Path, options: CheckOptions) -> dict[str, list]:
    """Findings per model for a config.pbtxt, a model folder or a repository (no server).
    LabError review_not_installed where the review is missing."""
    modules = _modules()
    if modules is None:
        from app.lab.problems import LabError

        raise LabError("check_review_not_installed")
    return modules[1].review_target(Path(path), expectations(options))
