"""Pre-rollout verification on the live server: the experiments lesson 7 asks a team to run.

Each check returns what it saw, not only pass/fail, so the page can show the evidence: a
check code (`name`), and a detail code with its values; words in app/text/rollout.py.
"""
from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field

from app.lab.cases import sentiment
from app.lab.deployment.presets import Traffic
from app.lab.problems import LabError
from app.lab.traffic import driver

Progress = Callable[[int, int], None]
TARGETS = ("asr_sequence_direct", "asr_sequence_oldest", "asr_dynamic")


@dataclass
class CheckResult:
    name: str  # the check's code
    passed: bool
    detail: str  # a detail code
    evidence: dict = field(default_factory=dict)
    values: dict = field(default_factory=dict)  # what the detail's words need


def interleaved_intact(server, model: str, progress: Progress | None = None) -> CheckResult:
    """Eight sessions interleaved on the deployment: every transcript must come back intact."""
    result = driver.run(server, Traffic(sessions=8, length=20, seed=11).scenario(model), progress=progress)
    counts = result.sessions["verdict"].value_counts().to_dict()
    ok = result.all_intact
    broken = {v: n for v, n in counts.items() if v != "intact"}
    return CheckResult("interleaved_intact", ok, "all_intact" if ok else "corrupted", {"verdicts": counts},
                       {"sessions": len(result.sessions), "verdicts": broken})


def fresh_after_end(server, model: str, progress: Progress | None = None) -> CheckResult:
    """Sessions run to END, then new ones start: each new first chunk must read state 0 (nothing inherited)."""
    first = driver.run(server, Traffic(sessions=4, length=8, seed=21).scenario(model), progress=progress)
    second = driver.run(server, Traffic(sessions=4, length=8, seed=22).scenario(model), progress=progress)
    openings = second.requests[second.requests["chunk"] == 0]
    inherited = openings[(openings["state_in"] != 0) | (openings["state_owner"] != 0)]
    ok = inherited.empty and (openings["error"] == "").all()
    return CheckResult(
        "fresh_after_end", bool(ok), "fresh" if ok else "inherited",
        {"first_chunk_state_in": openings["state_in"].tolist(), "earlier_run_intact": first.all_intact},
        {"inherited": len(inherited), "sequences": len(openings)},
    )


def sentiment_split_invariant(server, count: int = 48) -> CheckResult:
    """The stateless model gives each review the same answer however requests are batched."""
    texts = sentiment.reviews(count, seed=5)
    runs = [
        sentiment.send(server, texts, concurrency=1),
        sentiment.send(server, texts, concurrency=12, order=sentiment.shuffled(count, 9), mode=sentiment.AT_ONCE_SHUFFLED),
        sentiment.as_one_batch(server, texts),
    ]
    agreement = sentiment.agreement(runs)
    return CheckResult(
        "sentiment_split_invariant", agreement.identical, "identical" if agreement.identical else "differs",
        {"batch_sizes": {r.mode: r.server.get("batch_sizes", {}) for r in runs}},
        {"splits": len(runs), "labels_identical": agreement.labels_identical, "max_score_diff": agreement.max_score_diff},
    )


def run_all(server, model: str, progress: Progress | None = None) -> list[CheckResult]:
    if model not in TARGETS:
        raise LabError("verify_target_unknown", value=model, choices=", ".join(TARGETS))
    return [
        interleaved_intact(server, model, progress),
        fresh_after_end(server, model, progress),
        sentiment_split_invariant(server),
    ]
