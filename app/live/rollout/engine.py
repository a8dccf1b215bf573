"""Lesson 7's pre-rollout checks: the deployment checker run on the lab's own deployments.

There is one verification engine, app/checker/engine (`batching-lab check`, the "Check a deployment"
page): the lesson runs its `run_check` on a deployment the lab ships, on the lab's own
server, and shows its report. What this module adds is the lesson's choice of deployments, the
options that keep a run short, and which of the lesson's readings a result calls for (codes;
words in words.py).
"""
from __future__ import annotations

from typing import TYPE_CHECKING

from app.checker.engine import CheckOptions, CheckResult, default_ignored_outputs, run_check, target_on_server
from app.lab.problems import LabError
from app.lab.traffic import OnWait

if TYPE_CHECKING:
    from app.lab.deployment import Deployer
    from app.lab.progress import Progress
    from app.lab.server import LabServer

# The recogniser under the sequence batcher (both strategies), under the dynamic batcher (the
# mistake), and the stateless sentiment model under the dynamic batcher.
TARGETS = ("asr_sequence_direct", "asr_sequence_oldest", "asr_dynamic", "sentiment")

# Short runs on a 2-core CPU machine, every check still with steps to compare: sessions of 2 to 6
# steps (the checker mixes short and long ones; the abandoned and cancelled checks need one of at
# least 3, and the first session is always 6 long), the checker's own session count (None: enough
# to fill every slot and reach the backlog, 16 on these deployments, and the config review is not
# told a figure the team did not give) and its default 5 ms think time. Measured on 2 cores:
# asr_sequence_direct with its one-instance copy about 20 s (its two abandon rounds wait for the
# 5 s idle timeout), asr_dynamic about 2 s, sentiment about 5 s. No client faults: the lesson
# teaches the rollout guide's verification, and the slow client alone would add one more idle
# timeout and more to every run (the Check page and the CLI play them by default).
OPTIONS = CheckOptions(steps=6, faults=False)

# What a result teaches (READINGS in words.py).
READINGS = ("sequence_held", "stateless_held", "recogniser_keeps_state", "broken")


def check(server: LabServer, model: str, options: CheckOptions = OPTIONS, progress: Progress | None = None,
          on_wait: OnWait | None = None) -> CheckResult:
    """The checker on `model`, which must be loaded on the lab's `server`; progress(done, planned,
    stage) and on_wait as run_check calls them (from this thread)."""
    return run_check(target_on_server(server, model), options, progress=progress, on_wait=on_wait)


def check_target(server: LabServer, deployer: Deployer, model: str, progress: Progress | None = None,
                 on_wait: OnWait | None = None) -> CheckResult:
    """One of the lesson's TARGETS, loaded if it is not, checked with OPTIONS."""
    if model not in TARGETS:
        raise LabError("verify_target_unknown", value=model, choices=", ".join(TARGETS))
    deployer.ensure(model)
    return check(server, model, OPTIONS, progress, on_wait)


def reading(result: CheckResult) -> str:
    """Which of the lesson's READINGS a result calls for: every check held (on the sequence path,
    or on the stateless one), the stateless checks found the lab's recogniser keeping state (the
    lesson 3 mistake), or a check broke."""
    if not result.exit_code:
        return "sequence_held" if result.facts.sequence else "stateless_held"
    recogniser = bool(default_ignored_outputs(result.facts))  # the lab's recogniser: it reports where it ran
    if recogniser and not result.facts.sequence and any(d["code"] == "keeps_state" for d in result.judgement.diagnoses):
        return "recogniser_keeps_state"
    return "broken"
