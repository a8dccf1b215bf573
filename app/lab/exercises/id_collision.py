"""Correlation ID collision: two clients pick the same sequence ID on the oldest strategy."""
from __future__ import annotations

import pandas as pd

from app.lab.deployment import presets
from app.lab.exercises.common import readings
from app.lab.exercises.common.base import Exercise, ExerciseResult, Finding, Steps
from app.lab.observation.server_log import LogCode
from app.lab.scenario.ids import unique_ids
from app.lab.scenario.scenario import Scenario
from app.lab.traffic import driver

# Different lengths: the shorter session's END comes first, which matters once they merge.
TEXTS = ["HELLO WORLD ONE", "GOODBYE MOON TWO"]
START_REFUSAL = "must specify the START flag"

EXERCISE = Exercise(
    name="id_collision",
    options=("refused", "apart", "merged"),
    correct="merged",
)
SESSION_COLUMNS = ["session", "corrid", "verdict", "read_state_of", "detail_code", "expected_text", "received_text"]


def _outcome(collide) -> str:
    q = collide.requests
    if ((q["chunk"] == 0) & (q["error"] != "")).any():
        return "refused"
    if collide.all_intact:
        return "apart"
    return "merged"


def _chunks(run) -> pd.DataFrame:
    """Per chunk: whose state it read, as a code (own, other, fresh, refused, unknown; `other_session`
    the 0-based index of the session whose state it was), and whether it was right."""
    owners = {p.tag: p.index for p in run.plans}
    rows = []
    for r in run.requests.sort_values(["t_send"]).itertuples():
        other = None
        if r.error:
            read = "refused"
        elif r.state_owner == 0:
            read = "fresh"
        elif owners.get(r.state_owner) == r.session:
            read = "own"
        elif r.state_owner in owners:
            read, other = "other", int(owners[r.state_owner])
        else:
            read = "unknown"
        rows.append(
            {
                "session": int(r.session),
                "chunk": int(r.chunk),
                "t_send": float(r.t_send),
                "instance": int(r.instance),
                "read_state_of": read,
                "other_session": other,
                "right": (not r.error) and int(r.symbol) == int(r.expected),
                "error": r.error,
            }
        )
    return pd.DataFrame(rows, columns=["session", "chunk", "t_send", "instance", "read_state_of", "other_session", "right", "error"])


def _session_finding(r) -> Finding:
    """A broken session of the same-ID run: its verdict, and whose state it read when that was the other's."""
    other = r.read_state_of
    if r.verdict == "foreign" and isinstance(other, (int, float)) and other == other:
        return Finding("session_foreign", {"who": int(r.session), "other": int(other)})
    return Finding("session_verdict", {"who": int(r.session), "verdict": r.verdict})


def run(server, deployer, progress=None) -> ExerciseResult:
    steps = Steps(progress, 4)
    steps("deploying")
    model = deployer.apply(presets.get("oldest_right").settings, owner="ex-id-collision").model
    shared = unique_ids(1)[0]
    steps("same_id", corrid=str(shared))
    collide = driver.run(
        server, Scenario(model=model, texts=TEXTS, think_ms=30.0, jitter_ms=5.0, stagger_ms=15.0, corrids=[shared, shared], seed=2)
    )
    steps("unique_ids")
    fixed = driver.run(server, Scenario(model=model, texts=TEXTS, think_ms=30.0, jitter_ms=5.0, stagger_ms=15.0, seed=2))
    steps("measuring")

    chunks = pd.concat([_chunks(collide).assign(run="same_id"), _chunks(fixed).assign(run="unique_ids")], ignore_index=True)
    mine = chunks[chunks["run"] == "same_id"]
    cross = mine[mine["read_state_of"] == "other"]
    refused = mine[mine["error"] != ""]
    refusal = refused.iloc[0] if not refused.empty else None
    sessions = pd.concat(
        [
            collide.sessions[SESSION_COLUMNS].assign(run="same_id"),
            fixed.sessions[SESSION_COLUMNS].assign(run="unique_ids"),
        ],
        ignore_index=True,
    )
    ended_first = int(min(range(len(TEXTS)), key=lambda i: len(TEXTS[i])))
    # Triton's own evidence: it logs a WARNING (at any verbosity) when a START meets an ID in flight.
    conflicts = [e for e in collide.log.entries if e.code == LogCode.SEQUENCE_CONFLICT and e.corrid == str(shared)]
    numbers = {
        "shared_corrid": str(shared),
        "collide_verdicts": readings.verdict_counts(collide),
        "collide_foreign_sessions": int((collide.sessions["verdict"] == "foreign").sum()),
        "collide_chunks_reading_other_session": len(cross),
        "collide_chunks_right": int(mine["right"].sum()),
        "collide_chunks": len(mine),
        "collide_refused_chunks": len(refused),
        "refused_after_other_end": bool(refusal is not None and refusal["session"] != ended_first),
        "fixed_intact": bool(fixed.all_intact),
        "conflict_warnings_logged": len(conflicts) if collide.log.available else None,
    }
    outcome = _outcome(collide)
    findings = [
        Finding("same_id", {"verdicts": numbers["collide_verdicts"], "cross": len(cross), "chunks": len(mine)}),
        *[_session_finding(r) for r in collide.sessions.itertuples() if r.verdict != "intact"],
        Finding("unique_intact") if fixed.all_intact else Finding("unique_verdicts", {"verdicts": readings.verdict_counts(fixed)}),
    ]
    if conflicts:
        findings.append(Finding("log_warning", {"level": conflicts[0].level.name, "message": conflicts[0].message}))
    elif not collide.log.available:
        findings.append(Finding("log_unavailable"))
    if refusal is not None:
        findings.append(Finding("refused_after_end", {"who": int(refusal["session"]), "chunk": int(refusal["chunk"]) + 1,
                                                      "ended": ended_first, "message": refusal["error"]}))
    explanation = [Finding("mechanism")]
    if outcome == "merged":
        explanation.append(Finding("seen_merged", {"cross": len(cross), "chunks": len(mine)}))
    elif outcome == "refused":
        explanation.append(Finding("seen_refused"))
    else:
        explanation.append(Finding("seen_apart"))
    if conflicts:
        explanation.append(Finding("log_only_trace"))
    explanation.append(Finding("fix"))
    explanation.append(Finding("fixed_intact") if fixed.all_intact else Finding("fixed_verdicts", {"verdicts": readings.verdict_counts(fixed)}))
    steps.finish()
    return ExerciseResult(
        exercise=EXERCISE,
        outcome=outcome,
        numbers=numbers,
        tables={"chunks": chunks, "sessions": sessions},
        explanation=explanation,
        findings=findings,
        runs={"same_id": collide, "unique_ids": fixed},
    )
