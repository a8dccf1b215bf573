"""Verification before rollout: the guide's experiments, run on the real server."""
from __future__ import annotations

import pandas as pd

from app.lab.deployment import presets
from app.lab.deployment.deployments import LabSettings
from app.lab.exercises.common import readings, sentiment_check
from app.lab.exercises.common.base import Exercise, Finding, Judgement, Measured, Steps, Tables
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


SESSION_COLUMNS = ["session", "tag", "verdict", "slots", "expected_text", "received_text", "wrong_symbols"]
REQUEST_COLUMNS = ["session", "chunk", "state_in", "state_owner"]
SEQUENCE_RUNS = SEQUENCE_CHECKS  # each sequence check has a run of its own, named as the check


def measure(server, deployer, progress=None) -> Measured:
    """The guide's experiments in order: three on the sequence batcher, then sentiment and recogniser under the dynamic one."""
    steps = Steps(progress, 7)
    runs = {}
    steps("interleaved", sessions=len(TEXTS))
    direct = deployer.apply(presets.get("the_fix").settings, owner="ex-verify").model
    runs["interleaved"] = driver.run(server, Scenario(model=direct, texts=TEXTS, think_ms=15.0, jitter_ms=10.0, seed=8))

    steps("deploy_one_slot", timeout=ONE_SLOT.idle_timeout_us / 1e6)
    single = deployer.apply(ONE_SLOT, owner="ex-verify-slot").model
    steps("after_end")
    runs["after_end"] = driver.run(server, Scenario(model=single, texts=TEXTS[:2], think_ms=10.0, jitter_ms=0.0, concurrency=1))
    steps("cancelled", chunks=CANCEL_AFTER)
    runs["cancelled"] = driver.run(
        server,
        Scenario(model=single, texts=TEXTS[:2], think_ms=20.0, jitter_ms=0.0, stagger_ms=WAITER_LAG_MS,
                 abandon={0: CANCEL_AFTER}),
    )

    steps("sentiment", modes=len(sentiment_check.MODES))
    sentiment = sentiment_check.compare(server)

    steps("recogniser")
    dynamic = deployer.apply(presets.get("the_mistake").settings, owner="ex-verify-dyn").model
    runs["dynamic_alone"] = driver.run(server, Scenario(model=dynamic, texts=TEXTS, think_ms=10.0, jitter_ms=5.0, concurrency=1, seed=8))
    runs["dynamic_together"] = driver.run(server, Scenario(model=dynamic, texts=TEXTS, think_ms=10.0, jitter_ms=5.0, seed=8))
    steps("measuring")
    tables = {
        "sessions": pd.concat([run.sessions[SESSION_COLUMNS].assign(run=label) for label, run in runs.items()], ignore_index=True),
        "requests": pd.concat([runs[label].requests[REQUEST_COLUMNS].assign(run=label) for label in SEQUENCE_RUNS], ignore_index=True),
        "waits": pd.concat([readings.backlog_waits(runs[label]).assign(run=label) for label in SEQUENCE_RUNS], ignore_index=True),
        "sentiment": sentiment,
    }
    return Measured(tables=tables, runs=runs)


def _of(table: pd.DataFrame, label: str) -> pd.DataFrame:
    return table[table["run"] == label]


def _intact(sessions: pd.DataFrame) -> bool:
    return bool((sessions["verdict"] == "intact").all())


def _owners_ok(requests: pd.DataFrame, sessions: pd.DataFrame) -> bool:
    """Every chunk read either a fresh cell (first chunk) or state its own session wrote."""
    tags = dict(zip(sessions["session"], sessions["tag"], strict=True))
    return bool(all(int(owner) in (0, tags[int(who)]) for who, owner in zip(requests["session"], requests["state_owner"], strict=True)))


def _first_chunk(requests: pd.DataFrame, session: int) -> pd.Series:
    return requests[(requests["session"] == session) & (requests["chunk"] == 0)].iloc[0]


def _same_slot(sessions: pd.DataFrame, a: int, b: int) -> bool:
    """Both sessions' first (lowest) slot is the same one."""
    s = sessions.set_index("session")
    return bool(s.loc[a, "slots"] and s.loc[a, "slots"][:1] == s.loc[b, "slots"][:1])


def _interleaved(t: Tables) -> tuple[Finding, bool]:
    sessions = _of(t["sessions"], "interleaved")
    own = _owners_ok(_of(t["requests"], "interleaved"), sessions)
    return Finding("interleaved", {"sessions": len(sessions), "verdicts": readings.verdict_tally(sessions), "own": own}), _intact(sessions) and own


def _after_end(t: Tables) -> tuple[Finding, bool]:
    sessions = _of(t["sessions"], "after_end")
    first = _first_chunk(_of(t["requests"], "after_end"), 1)
    reused = _same_slot(sessions, 0, 1)
    fresh = int(first["state_in"]) == 0 and int(first["state_owner"]) == 0
    return (Finding("after_end", {"state_in": int(first["state_in"]), "state_owner": int(first["state_owner"]), "reused": reused}),
            fresh and reused and _intact(sessions))


def _cancelled(t: Tables) -> tuple[Finding, bool]:
    sessions = _of(t["sessions"], "cancelled")
    first = _first_chunk(_of(t["requests"], "cancelled"), 1)
    later = sessions.set_index("session").loc[1, "verdict"]
    wait = float(_of(t["waits"], "cancelled").set_index("session").loc[1, "wait_ms"])
    return (Finding("cancelled", {"verdict": str(later), "state_owner": int(first["state_owner"]), "wait": wait}),
            later == "intact" and int(first["state_owner"]) == 0 and _same_slot(sessions, 0, 1))


def _sentiment(t: Tables) -> tuple[Finding, bool]:
    s = t["sentiment"]
    return (Finding("sentiment", {"diff": float(s["max_score_diff"].max()), "labels_identical": bool(s["labels_identical"].all()),
                                  "tolerance": sentiment_check.SCORE_TOLERANCE}), bool(s["identical"].all()))


def _recogniser_consistent(t: Tables) -> bool:
    """Both arrivals intact with the same transcripts."""
    alone, together = (_of(t["sessions"], label) for label in ("dynamic_alone", "dynamic_together"))
    return bool(_intact(alone) and _intact(together) and list(alone["received_text"]) == list(together["received_text"]))


def _recogniser(t: Tables) -> tuple[Finding, bool]:
    alone, together = (_of(t["sessions"], label) for label in ("dynamic_alone", "dynamic_together"))
    return (Finding("recogniser", {"alone": readings.verdict_tally(alone), "together": readings.verdict_tally(together)}),
            not _recogniser_consistent(t))


CHECKED_BY = {"interleaved": _interleaved, "after_end": _after_end, "cancelled": _cancelled, "sentiment": _sentiment,
              "recogniser": _recogniser}


def _transcripts(sessions: pd.DataFrame) -> pd.DataFrame:
    """The recogniser's transcripts per arrival, as the figure shows them."""
    columns = ["session", "expected_text", "received_text", "verdict"]
    return pd.concat([_of(sessions, label)[columns].assign(arrival=arrival)
                      for label, arrival in (("dynamic_alone", "one_at_a_time"), ("dynamic_together", "all_at_once"))],
                     ignore_index=True)


def judge(tables: Tables) -> Judgement:
    """Each of the guide's checks from its run's tables; the outcome is which model gave the same answers."""
    findings = []
    for code in CHECKS:
        found, as_expected = CHECKED_BY[code](tables)
        findings.append(Finding(found.code, {"as_expected": bool(as_expected), **found.values}))
    checks = pd.DataFrame([{"check": f.code, "as_expected": f.values["as_expected"]} for f in findings])
    sentiment, sessions = tables["sentiment"], tables["sessions"]
    sentiment_same, recogniser_same = bool(sentiment["identical"].all()), _recogniser_consistent(tables)
    outcome = {(True, False): "sentiment", (True, True): "both", (False, True): "recogniser"}.get((sentiment_same, recogniser_same), "neither")
    dynamic = sessions[sessions["run"].isin(["dynamic_alone", "dynamic_together"])]
    numbers = {
        "checks_as_expected": int(checks["as_expected"].sum()),
        "checks": len(checks),
        "sentiment_identical": sentiment_same,
        "sentiment_max_score_diff": float(sentiment["max_score_diff"].max()),
        "recogniser_dynamic_consistent": recogniser_same,
        "recogniser_dynamic_wrong_symbols": int(dynamic["wrong_symbols"].sum()),
    }
    sequence_ok = bool(checks.set_index("check").loc[list(SEQUENCE_CHECKS), "as_expected"].all())
    explanation = [
        Finding("why_stateless", {"diff": numbers["sentiment_max_score_diff"]}),
        Finding("why_recogniser", {"wrong": numbers["recogniser_dynamic_wrong_symbols"]}),
        Finding("why_sequence_passed") if sequence_ok else Finding("why_sequence_failed"),
        Finding("why_every_deployment"),
        Finding("why_your_own"),  # the same checks on the learner's own model: the "Check a deployment" page
    ]
    return Judgement(outcome=outcome, numbers=numbers, findings=findings, explanation=explanation,
                     tables={"checks": checks, "sentiment": sentiment, "recogniser_transcripts": _transcripts(sessions)})
