"""Config review: the scheduler pitfalls Triton 2.51 (release 24.10) documents, found in a model's
config with no traffic sent.

What the CLI (`batching-lab check --config PATH`), the checker's report and the page call:

    review_target(target, expect=Expectations()) -> dict[str, list[ReviewFinding]]
        target: a ModelConfig, the JSON dict Triton's get_model_config returns, or a path to a
        config.pbtxt, a model folder or a whole model repository. The result is keyed by model
        name, one entry per model (a model folder without config.pbtxt gets NO_CONFIG_FILE).
        Bad files raise LabError (app/checker/engine/review/configs.py) naming the file and line.

    review(config, expect=Expectations()) -> list[ReviewFinding]
        The pure review of one ModelConfig: no server, no files.

A finding is a code, a severity, the config field it concerns and the numbers its sentence needs;
ReviewFinding.to_json() is what the report stores. Words are in app/checker/words/review.py.
Each rule is one row of rules.RULES: its code, severity, scope, the function that finds it
(ids.py, sequences.py, serving.py, by what they read), its lesson section (LESSONS:
'lesson-id#anchor') and the Triton source behind it (SOURCES: repository path and lines at r24.10).

Some pitfalls depend on the Triton release: the review takes the server's version (Expectations.
triton_version, e.g. "2.51.0" for release 24.10: what GET /v2 reports; the live check passes the
server's own, `check --config` the user's --triton-version). Without one, such a check reports
NOT_CHECKED naming the figure instead of assuming a release.

A check that needs a figure only the user knows (think time, sessions, the IDs their clients
send) and was not given one does not guess: it reports NOT_CHECKED naming the figure, except the
idle timeout, which falls back on Triton's documented 1 s default (IDLE_TIMEOUT_DEFAULT).

An iterative sequence is one request that Triton numbers and re-enqueues itself (facts.iterative):
the rules about a client's pauses between requests and the IDs it sends do not apply to it; those
about slots, rows and padding do.
"""
from __future__ import annotations

from pathlib import Path
from typing import Any  # a server config dict: its JSON, untyped in tritonclient

from tritonclient.grpc import model_config_pb2 as mc

from app.checker.engine.review import configs
from app.checker.engine.review.expectations import CORRID_TYPE_CHECK_SINCE, LAB_TRITON_VERSION, Expectations, parse_version
from app.checker.engine.review.facts import strategy
from app.checker.engine.review.findings import Hit, ReviewCode, ReviewFinding, Severity
from app.checker.engine.review.rules import LESSONS, RULES, SEVERITY, SOURCES, Rule, for_config

__all__ = ["CORRID_TYPE_CHECK_SINCE", "LAB_TRITON_VERSION", "LESSONS", "RULES", "SEVERITY", "SOURCES", "Expectations", "ReviewCode",
           "ReviewFinding", "Rule", "Severity", "parse_version", "review", "review_target"]


_UNSTATED = Expectations()  # nothing stated: every check that needs a figure says so


def review(config: mc.ModelConfig, expect: Expectations = _UNSTATED) -> list[ReviewFinding]:
    """Every pitfall found in one config, errors first; pure (no server, no files)."""
    expect.check()
    found = []
    for rule in for_config(strategy(config) is not None):
        assert rule.finds is not None  # for_config gives only rules with a function
        out = rule.finds(config, expect)
        if isinstance(out, Hit):
            found.append(ReviewFinding(rule.code, rule.severity, out.field, out.values))
        elif out is not None:  # the rule lacked figures: say so instead of guessing
            found.append(ReviewFinding(ReviewCode.NOT_CHECKED, SEVERITY[ReviewCode.NOT_CHECKED], out.field,
                                       {"check": str(rule.code), "needs": list(out.needs)}))
    order = list(Severity)
    return sorted(found, key=lambda f: order.index(f.severity))


def review_target(target: mc.ModelConfig | dict[str, Any] | Path | str, expect: Expectations = _UNSTATED) -> dict[str, list[ReviewFinding]]:
    """Findings per model name for a ModelConfig, a server config dict, or a path (config.pbtxt,
    model folder, model repository). Files are read by app/checker/engine/review/configs.py."""
    if isinstance(target, mc.ModelConfig):
        return {target.name: review(target, expect)}
    if isinstance(target, dict):
        config = configs.from_server_json(target)
        return {config.name: review(config, expect)}
    path = Path(target)
    if path.is_file():
        config = configs.load_config(path)
        return {config.name or path.parent.name: review(config, expect)}
    models = [(path.name, configs.load_model_folder(path))] if configs.is_model_folder(path) else configs.load_repository(path)
    return {
        name: review(config, expect) if config is not None else [ReviewFinding(ReviewCode.NO_CONFIG_FILE, SEVERITY[ReviewCode.NO_CONFIG_FILE],
                                                                               "config.pbtxt", {})]
        for name, config in models
    }
