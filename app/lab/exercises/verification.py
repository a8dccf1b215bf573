"""Verification before rollout: the guide's experiments, run on the real server."""
from __future__ import annotations

import pandas as pd

from app.lab.deployment import presets
from app.lab.deployment.deployments import LabSettings
from app.lab.exercises.common import readings, sentiment_check
from app.lab.exercises.common.base import Exercise, ExerciseResult, Finding, Steps
from app.lab.scenario.scenario import Scenario
from app.lab.traffic import driver

TEXTS = ["HELLO WORLD", "TRITON SERVER", "BATCHING LAB"]
# One slot, so every later session necessarily reuses the slot of the one before it; a short
# idle timeout so a cancelled session frees it quickly.
ONE_SLOT = LabSettings(scheduler="direct", instances=1, slots=1, idle_timeout_us=300_000)
WAITER_LAG_MS = 250  # under the timeout minus think time: the waiter's own idle clock runs while it waits

EXERCISE = Exercise(
    name="verification",
    options=("both", "sentiment", "recogniser", "neither"),
    correct="sentiment",
)
# The guide's checks, in the order they run (codes of the checks table; words in app/text/exercises/verification.py).
CHECKS = ("interleaved", "after_end", "cancelled", "sentiment", "recogniser")
SEQUENCE_CHECKS = CHECKS[:3]  # the ones run under the sequence batcher
CANCEL_AFTER = 3  # chunks the cancelled session sends before it vanishes


def _owners_ok(run) -> bool:
    """Every chunk read either a fresh cell (first chunk) or state its own session wrote."""
    tags = {p.index: p.tag for p in run.plans}
    q = run.requests
    own = q.apply(lambda r: int(r["state_owner"]) in (0, tags[int(r["session"])]), axis=1)
    return bool(own.all())


def _first_chunk(run, session: int):
    q = run.requests
    return q[(q["session"] == session) & (q["chunk"] == 0)].iloc[0]


def _same_slot(run, a: int, b: int) -> bool:
    s = run.sessions.set_index("session")
    return bool(s.loc[a, "slots"] and s.loc[a, "slots"][:1] == s.loc[b, "slots"][:1])


def run(server, deployer, progress=None) -> ExerciseResult:
    steps = Steps(progress, 7)
    findings, runs = [], {}

    def check(found: Finding, as_expected: bool) -> None:
        """One of the guide's checks (its code is a CHECKS code), with whether it held."""
        findings.append(Finding(found.code, {"as_expected": bool(as_expected), **found.values}))

    steps("interleaved", sessions=len(TEXTS))
    direct = deployer.apply(presets.get("the_fix").settings, owner="ex-verify").model
    inter = driver.run(server, Scenario(model=direct, texts=TEXTS, think_ms=15.0, jitter_ms=10.0, seed=8))
    runs["interleaved"] = inter
    own = _owners_ok(inter)
    check(Finding("interleaved", {"sessions": len(TEXTS), "verdicts": readings.verdict_counts(inter), "own": own}),
          inter.all_intact and own)

    steps("deploy_one_slot", timeout=ONE_SLOT.idle_timeout_us / 1e6)
    single = deployer.apply(ONE_SLOT, owner="ex-verify-slot").model
    steps("after_end")
    after_end = driver.run(server, Scenario(model=single, texts=TEXTS[:2], think_ms=10.0, jitter_ms=0.0, concurrency=1))
    runs["after_end"] = after_end
    first = _first_chunk(after_end, 1)
    reused = _same_slot(after_end, 0, 1)
    check(Finding("after_end", {"state_in": int(first["state_in"]), "state_owner": int(first["state_owner"]), "reused": reused}),
          int(first["state_in"]) == 0 and int(first["state_owner"]) == 0 and reused and after_end.all_intact)

    steps("cancelled", chunks=CANCEL_AFTER)
    cancelled = driver.run(
        server,
        Scenario(model=single, texts=TEXTS[:2], think_ms=20.0, jitter_ms=0.0, stagger_ms=WAITER_LAG_MS,
                 abandon={0: CANCEL_AFTER}),
    )
    runs["cancelled"] = cancelled
    first = _first_chunk(cancelled, 1)
    later = cancelled.sessions.set_index("session").loc[1]
    wait = float(readings.backlog_waits(cancelled).set_index("session").loc[1, "wait_ms"])
    check(Finding("cancelled", {"verdict": str(later["verdict"]), "state_owner": int(first["state_owner"]), "wait": wait}),
          later["verdict"] == "intact" and int(first["state_owner"]) == 0 and _same_slot(cancelled, 0, 1))

    steps("sentiment", modes=len(sentiment_check.MODES))
    sentiment = sentiment_check.compare(server)
    sentiment_same = bool(sentiment["identical"].all())
    check(Finding("sentiment", {"diff": float(sentiment["max_score_diff"].max()),
                                "labels_identical": bool(sentiment["labels_identical"].all()),
                                "tolerance": sentiment_check.SCORE_TOLERANCE}), sentiment_same)

    steps("recogniser")
    dynamic = deployer.apply(presets.get("the_mistake").settings, owner="ex-verify-dyn").model
    alone = driver.run(server, Scenario(model=dynamic, texts=TEXTS, think_ms=10.0, jitter_ms=5.0, concurrency=1, seed=8))
    together = driver.run(server, Scenario(model=dynamic, texts=TEXTS, think_ms=10.0, jitter_ms=5.0, seed=8))
    runs["dynamic_alone"], runs["dynamic_together"] = alone, together
    same_text = list(alone.sessions["received_text"]) == list(together.sessions["received_text"])
    recogniser_same = bool(alone.all_intact and together.all_intact and same_text)
    check(Finding("recogniser", {"alone": readings.verdict_counts(alone), "together": readings.verdict_counts(together)}),
          not recogniser_same)
    steps("measuring")

    checks = pd.DataFrame([{"check": f.code, "as_expected": f.values["as_expected"]} for f in findings])
    transcripts = pd.concat(
        [
            alone.sessions[["session", "expected_text", "received_text", "verdict"]].assign(arrival="one_at_a_time"),
            together.sessions[["session", "expected_text", "received_text", "verdict"]].assign(arrival="all_at_once"),
        ],
        ignore_index=True,
    )
    outcome = {(True, False): "sentiment", (True, True): "both", (False, True): "recogniser"}.get(
        (sentiment_same, recogniser_same), "neither"
    )
    numbers = {
        "checks_as_expected": int(checks["as_expected"].sum()),
        "checks": len(checks),
        "sentiment_identical": sentiment_same,
        "sentiment_max_score_diff": float(sentiment["max_score_diff"].max()),
        "recogniser_dynamic_consistent": recogniser_same,
        "recogniser_dynamic_wrong_symbols": int(alone.sessions["wrong_symbols"].sum() + together.sessions["wrong_symbols"].sum()),
    }
    sequence_ok = bool(checks.set_index("check").loc[list(SEQUENCE_CHECKS), "as_expected"].all())
    explanation = [
        Finding("why_stateless", {"diff": numbers["sentiment_max_score_diff"]}),
        Finding("why_recogniser", {"wrong": numbers["recogniser_dynamic_wrong_symbols"]}),
        Finding("why_sequence_passed") if sequence_ok else Finding("why_sequence_failed"),
        Finding("why_every_deployment"),
    ]
    steps.finish()
    return ExerciseResult(
        exercise=EXERCISE,
        outcome=outcome,
        numbers=numbers,
        tables={"checks": checks, "sentiment": sentiment, "recogniser_transcripts": transcripts},
        explanation=explanation,
        findings=findings,
        runs=runs,
    )
