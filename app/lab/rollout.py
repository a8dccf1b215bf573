"""Pre-rollout verification on the live server: the experiments lesson 7 asks a team to run.

Each check returns what it saw, not only pass/fail, so the page can show the evidence.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Callable

from app.lab import driver, sentiment
from app.lab.presets import Traffic

Progress = Callable[[int, int], None]
TARGETS = ("asr_sequence_direct", "asr_sequence_oldest", "asr_dynamic")


@dataclass
class CheckResult:
    name: str
    passed: bool
    detail: str
    evidence: dict = field(default_factory=dict)


def interleaved_intact(server, model: str, progress: Progress | None = None) -> CheckResult:
    """Eight sessions interleaved on the deployment: every transcript must come back intact."""
    result = driver.run(server, Traffic(sessions=8, length=20, seed=11).scenario(model), progress=progress)
    counts = result.sessions["verdict"].value_counts().to_dict()
    ok = result.all_intact
    detail = (
        "all 8 interleaved sessions came back intact"
        if ok
        else "corrupted sessions: " + ", ".join(f"{n} {v}" for v, n in counts.items() if v != "intact")
    )
    return CheckResult("Interleaved sessions stay intact", ok, detail, {"verdicts": counts})


def fresh_after_end(server, model: str, progress: Progress | None = None) -> CheckResult:
    """Sessions run to END, then new ones start: each new first chunk must read state 0 (nothing inherited)."""
    first = driver.run(server, Traffic(sessions=4, length=8, seed=21).scenario(model), progress=progress)
    second = driver.run(server, Traffic(sessions=4, length=8, seed=22).scenario(model), progress=progress)
    openings = second.requests[second.requests["chunk"] == 0]
    inherited = openings[(openings["state_in"] != 0) | (openings["state_owner"] != 0)]
    ok = inherited.empty and (openings["error"] == "").all()
    detail = (
        "every new sequence read STATE_IN 0 at its first chunk"
        if ok
        else f"{len(inherited)} of {len(openings)} new sequences began with state left by earlier requests"
    )
    return CheckResult(
        "A new sequence after END inherits nothing", bool(ok), detail,
        {"first_chunk_state_in": openings["state_in"].tolist(), "earlier_run_intact": first.all_intact},
    )


def sentiment_split_invariant(server, count: int = 48) -> CheckResult:
    """The stateless model gives each review the same answer however requests are batched."""
    texts = sentiment.reviews(count, seed=5)
    runs = [
        sentiment.send(server, texts, concurrency=1, mode="singles"),
        sentiment.send(server, texts, concurrency=12, order=sentiment.shuffled(count, 9), mode="12 at once, shuffled"),
        sentiment.as_one_batch(server, texts),
    ]
    agreement = sentiment.agreement(runs)
    detail = (
        f"labels identical across {len(runs)} batch splits; {sentiment.describe_diff(agreement.max_score_diff)}"
        if agreement.identical
        else f"labels identical: {agreement.labels_identical}; largest score difference {agreement.max_score_diff:.1e}"
    )
    return CheckResult(
        "The sentiment model is identical across batch splits", agreement.identical, detail,
        {"batch_sizes": {r.mode: r.server.get("batch_sizes", {}) for r in runs}},
    )


def run_all(server, model: str, progress: Progress | None = None) -> list[CheckResult]:
    if model not in TARGETS:
        raise ValueError(f"choose one of {', '.join(TARGETS)} to verify, not {model!r}")
    return [
        interleaved_intact(server, model, progress),
        fresh_after_end(server, model, progress),
        sentiment_split_invariant(server),
    ]
