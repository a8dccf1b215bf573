"""Verification before rollout: the guide's experiments, run on the real server."""
from __future__ import annotations

import pandas as pd
import plotly.express as px
import plotly.graph_objects as go

from app.lab import driver, presets
from app.lab.deployments import LabSettings
from app.lab.exercises import measure, plots, sentiment_check
from app.lab.exercises.base import Exercise, ExerciseResult, Option, Steps
from app.lab.scenario import Scenario

TEXTS = ["HELLO WORLD", "TRITON SERVER", "BATCHING LAB"]
# One slot, so every later session necessarily reuses the slot of the one before it; a short
# idle timeout so a cancelled session frees it quickly.
ONE_SLOT = LabSettings(scheduler="direct", instances=1, slots=1, idle_timeout_us=300_000)
WAITER_LAG_MS = 250  # under the timeout minus think time: the waiter's own idle clock runs while it waits

EXERCISE = Exercise(
    name="verification",
    title="Verify before rollout: what must hold, and what must not be assumed",
    scenario=(
        "Before a release the team runs the rollout guide's experiments on the real server: interleaved "
        "sessions with recognisable text, a new session on a slot another just ended, a session cancelled "
        "half-way, and the same inputs sent in different arrival orders and batch splits, both to the "
        "stateless sentiment classifier (dynamic batcher) and to the streaming recogniser behind the "
        "dynamic batcher."
    ),
    question="Which model gives the same answers whatever the arrival order and the way requests are batched?",
    options=(
        Option("both", "Both: every request is computed the same way in any batch."),
        Option("sentiment", "Only the stateless sentiment classifier."),
        Option("recogniser", "Only the recogniser: its chunks carry all it needs."),
        Option("neither", "Neither: batching changes the numbers."),
    ),
    correct="sentiment",
)


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
    checks, runs = [], {}

    steps("Interleaved sessions on the direct deployment")
    direct = deployer.apply(presets.get("the_fix").settings, owner="ex-verify").model
    inter = driver.run(server, Scenario(model=direct, texts=TEXTS, think_ms=15.0, jitter_ms=10.0, seed=8))
    runs["interleaved"] = inter
    checks.append(
        {
            "check": f"{len(TEXTS)} interleaved sessions stay intact, each reading only its own state",
            "expected": "intact",
            "observed": ", ".join(f"{k} {v}" for k, v in measure.verdict_counts(inter).items())
            + ("" if _owners_ok(inter) else "; some chunk read another session's state"),
            "as_expected": bool(inter.all_intact and _owners_ok(inter)),
        }
    )

    steps("Deploying 1 instance x 1 slot, idle timeout 0.3 s")
    single = deployer.apply(ONE_SLOT, owner="ex-verify-slot").model
    steps("A new session after END, on the same slot")
    after_end = driver.run(server, Scenario(model=single, texts=TEXTS[:2], think_ms=10.0, jitter_ms=0.0, concurrency=1))
    runs["after_end"] = after_end
    first = _first_chunk(after_end, 1)
    checks.append(
        {
            "check": "a new sequence after END inherits nothing (same slot, first chunk fresh)",
            "expected": "STATE_IN 0, STATE_OWNER 0 on the reused slot",
            "observed": f"STATE_IN {int(first['state_in'])}, STATE_OWNER {int(first['state_owner'])}, "
            f"slot {'reused' if _same_slot(after_end, 0, 1) else 'not reused'}",
            "as_expected": bool(int(first["state_in"]) == 0 and int(first["state_owner"]) == 0
                                and _same_slot(after_end, 0, 1) and after_end.all_intact),
        }
    )

    steps("A session cancelled after 3 chunks, then a new one on its slot")
    cancelled = driver.run(
        server,
        Scenario(model=single, texts=TEXTS[:2], think_ms=20.0, jitter_ms=0.0, stagger_ms=WAITER_LAG_MS, abandon={0: 3}),
    )
    runs["cancelled"] = cancelled
    first = _first_chunk(cancelled, 1)
    later = cancelled.sessions.set_index("session").loc[1]
    checks.append(
        {
            "check": "a session cancelled mid-way (no END) does not pollute the next one on its slot",
            "expected": "next session intact, first chunk fresh",
            "observed": f"{later['verdict']}; first chunk STATE_OWNER {int(first['state_owner'])}, waited "
            f"{measure.backlog_waits(cancelled).set_index('session').loc[1, 'wait_ms']:.0f} ms for the slot",
            "as_expected": bool(later["verdict"] == "intact" and int(first["state_owner"]) == 0 and _same_slot(cancelled, 0, 1)),
        }
    )

    steps("Sentiment: same reviews, four orders and batch splits")
    sentiment = sentiment_check.compare(server)
    sentiment_same = bool(sentiment["identical"].all())
    checks.append(
        {
            "check": "the stateless sentiment model gives identical results in any order and batch split",
            "expected": f"labels equal, scores within {sentiment_check.SCORE_TOLERANCE:g}",
            "observed": f"max score difference {sentiment['max_score_diff'].max():.2e}; labels "
            f"{'identical' if sentiment['labels_identical'].all() else 'differ'}",
            "as_expected": sentiment_same,
        }
    )

    steps("Recogniser behind the dynamic batcher: one at a time, then all at once")
    dynamic = deployer.apply(presets.get("the_mistake").settings, owner="ex-verify-dyn").model
    alone = driver.run(server, Scenario(model=dynamic, texts=TEXTS, think_ms=10.0, jitter_ms=5.0, concurrency=1, seed=8))
    together = driver.run(server, Scenario(model=dynamic, texts=TEXTS, think_ms=10.0, jitter_ms=5.0, seed=8))
    runs["dynamic_alone"], runs["dynamic_together"] = alone, together
    same_text = list(alone.sessions["received_text"]) == list(together.sessions["received_text"])
    recogniser_same = bool(alone.all_intact and together.all_intact and same_text)
    checks.append(
        {
            "check": "the recogniser behind the dynamic batcher is NOT order-invariant (must not be assumed)",
            "expected": "transcripts change with arrival order",
            "observed": f"one at a time: {measure.verdict_counts(alone)}; all at once: {measure.verdict_counts(together)}",
            "as_expected": not recogniser_same,
        }
    )
    steps("Measuring")

    checks = pd.DataFrame(checks)
    transcripts = pd.concat(
        [
            alone.sessions[["session", "expected_text", "received_text", "verdict"]].assign(arrival="one at a time"),
            together.sessions[["session", "expected_text", "received_text", "verdict"]].assign(arrival="all at once"),
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
    findings = [f"{'OK ' if c.as_expected else 'FAIL'} {c.check}: {c.observed}" for c in checks.itertuples()]
    explanation = (
        "A request to a stateless model carries everything its answer depends on, so the dynamic batcher may "
        "reorder and group requests freely: the sentiment labels were identical in every order and split, and "
        f"scores agreed to {numbers['sentiment_max_score_diff']:.1e} (float sums over different batch shapes may "
        "differ in the last bits, so compare scores with a tolerance and labels exactly). The recogniser's "
        "chunk is not self-contained: its answer depends on state left by the session's earlier chunks, and "
        "behind the dynamic batcher a chunk lands in whatever row of whatever instance is free, so its "
        "transcripts changed with arrival order and were wrong in "
        f"{numbers['recogniser_dynamic_wrong_symbols']} symbols. " + (
            "Under the sequence batcher the same model passed the guide's checks: interleaved sessions read only "
            "their own state, a START on a reused slot began fresh, and a cancelled session's leftover state did "
            "not leak, because START resets the state and the idle timeout freed the slot. "
            if checks["as_expected"].iloc[:3].all()
            else "Under the sequence batcher some of the guide's checks failed on this run (see the table): do not "
            "roll out until they pass. "
        ) + ("Run these checks on every new deployment and after every model change; "
        "they take seconds and catch the failures that unit tests with one client cannot.")
    )
    steps.finish()
    return ExerciseResult(
        EXERCISE,
        outcome,
        numbers,
        {"checks": checks, "sentiment": sentiment, "recogniser_transcripts": transcripts},
        explanation,
        findings,
        runs,
    )


def figures(result: ExerciseResult) -> list[tuple[str, go.Figure]]:
    """The exercise's charts, each drawn from one of the result's tables."""
    checks = result.tables["checks"]
    table = go.Figure(go.Table(
        header=dict(values=["check", "observed", "as expected"], align="left"),
        cells=dict(values=[checks["check"], checks["observed"], checks["as_expected"].map({True: "yes", False: "NO"})],
                   align="left"),
    ))
    table.update_layout(title="The rollout guide's experiments")
    sentiment = result.tables["sentiment"]
    diff = px.bar(sentiment, x="mode", y="max_score_diff", text="batch_sizes",
                  labels={"mode": "", "max_score_diff": "largest score difference vs in-order singles"},
                  title="Sentiment: same reviews, other orders and batches (bar text: batches run, 'N of size')<br>"
                  f"labels identical: {'yes' if sentiment['labels_identical'].all() else 'NO'}; "
                  "scores must agree within 1e-5")
    transcripts = result.tables["recogniser_transcripts"]
    rec = go.Figure(go.Table(
        header=dict(values=["arrival", "expected", "received", "verdict"], align="left"),
        cells=dict(values=[transcripts["arrival"], transcripts["expected_text"], transcripts["received_text"],
                           transcripts["verdict"]], align="left"),
    ))
    rec.update_layout(title="Recogniser behind the dynamic batcher")
    return [("Checks", plots.layout(table, 330)), ("Sentiment", plots.layout(diff)), ("Recogniser", plots.layout(rec, 330))]
