"""Correlation ID collision: two clients pick the same sequence ID on the oldest strategy."""
from __future__ import annotations

import pandas as pd
import plotly.express as px
import plotly.graph_objects as go

from app.lab import driver, presets
from app.lab.exercises import measure, plots
from app.lab.exercises.base import Exercise, ExerciseResult, Option, Steps
from app.lab.ids import unique_ids
from app.lab.scenario import Scenario
from app.lab.server_log import LogCode

# Different lengths: the shorter session's END comes first, which matters once they merge.
TEXTS = ["HELLO WORLD ONE", "GOODBYE MOON TWO"]
START_REFUSAL = "must specify the START flag"

EXERCISE = Exercise(
    name="id_collision",
    title="Correlation ID collision: two clients, one sequence ID",
    scenario=(
        "A recogniser runs on the oldest strategy and, correctly for oldest, keeps each session's "
        "state under its correlation ID. Two client apps each pick the sequence ID themselves, say "
        "from a counter that starts at the same number, and both open a stream with that ID at the "
        "same moment over separate connections."
    ),
    question="What does Triton do with the second client's START for an ID that is already in flight?",
    options=(
        Option("refused", "It refuses it: that sequence ID is already in use."),
        Option("apart", "It keeps the two streams apart: each connection is its own sequence."),
        Option("merged", "It treats both as one sequence: they read each other's state, and the first END ends it for both."),
    ),
    correct="merged",
)


def _outcome(collide) -> str:
    q = collide.requests
    if ((q["chunk"] == 0) & (q["error"] != "")).any():
        return "refused"
    if collide.all_intact:
        return "apart"
    return "merged"


def _chunks(run) -> pd.DataFrame:
    """Per chunk: whose state it read (own, the other session's, fresh) and whether it was right."""
    owners = {p.tag: p.index for p in run.plans}
    rows = []
    for r in run.requests.sort_values(["t_send"]).itertuples():
        if r.error:
            read = "refused"
        elif r.state_owner == 0:
            read = "fresh"
        elif owners.get(r.state_owner) == r.session:
            read = "own"
        elif r.state_owner in owners:
            read = measure.session_label(owners[r.state_owner])
        else:
            read = "unknown"
        rows.append(
            {
                "session": int(r.session),
                "chunk": int(r.chunk),
                "t_send": float(r.t_send),
                "instance": int(r.instance),
                "read_state_of": read,
                "right": (not r.error) and int(r.symbol) == int(r.expected),
                "error": r.error,
            }
        )
    return pd.DataFrame(rows)


def run(server, deployer, progress=None) -> ExerciseResult:
    steps = Steps(progress, 4)
    steps("Deploying oldest with state keyed by correlation ID")
    model = deployer.apply(presets.get("oldest_right").settings, owner="ex-id-collision").model
    shared = unique_ids(1)[0]
    steps(f"Two clients, both with correlation ID {shared}")
    collide = driver.run(
        server, Scenario(model=model, texts=TEXTS, think_ms=30.0, jitter_ms=5.0, stagger_ms=15.0, corrids=[shared, shared], seed=2)
    )
    steps("The fix: the same two clients with unique IDs")
    fixed = driver.run(server, Scenario(model=model, texts=TEXTS, think_ms=30.0, jitter_ms=5.0, stagger_ms=15.0, seed=2))
    steps("Measuring")

    chunks = pd.concat([_chunks(collide).assign(run="same ID"), _chunks(fixed).assign(run="unique IDs")], ignore_index=True)
    mine = chunks[chunks["run"] == "same ID"]
    cross = mine[mine["read_state_of"].str.startswith("session")]
    refused = mine[mine["error"] != ""]
    refusal = refused.iloc[0] if not refused.empty else None
    sessions = pd.concat(
        [
            collide.sessions[["session", "corrid", "verdict", "read_state_of", "detail", "expected_text", "received_text"]].assign(run="same ID"),
            fixed.sessions[["session", "corrid", "verdict", "read_state_of", "detail", "expected_text", "received_text"]].assign(run="unique IDs"),
        ],
        ignore_index=True,
    )
    ended_first = int(min(range(len(TEXTS)), key=lambda i: len(TEXTS[i])))
    # Triton's own evidence: it logs a WARNING (at any verbosity) when a START meets an ID in flight.
    conflicts = [e for e in collide.log.entries if e.code == LogCode.SEQUENCE_CONFLICT and e.corrid == str(shared)]
    numbers = {
        "shared_corrid": str(shared),
        "collide_verdicts": ", ".join(f"{k} {v}" for k, v in measure.verdict_counts(collide).items()),
        "collide_foreign_sessions": int((collide.sessions["verdict"] == "foreign").sum()),
        "collide_chunks_reading_other_session": len(cross),
        "collide_chunks_right": int(mine["right"].sum()),
        "collide_chunks": len(mine),
        "collide_refused_chunks": len(refused),
        "refused_after_other_end": bool(refusal is not None and refusal["session"] != ended_first),
        "fixed_intact": bool(fixed.all_intact),
        "conflict_warnings_logged": len(conflicts) if collide.log.available else "log not available",
    }
    outcome = _outcome(collide)
    findings = [
        f"same ID: verdicts {numbers['collide_verdicts']}; {len(cross)} of {len(mine)} chunks read the other "
        "session's state.",
        *[f"{measure.session_label(r.session)}: {r.verdict}, {r.detail}" for r in collide.sessions.itertuples() if r.detail],
        f"unique IDs: {'every session intact' if fixed.all_intact else measure.verdict_counts(fixed)}.",
    ]
    if conflicts:
        findings.append(f"Triton's log, {conflicts[0].level.name}: {conflicts[0].message}")
    if refusal is not None:
        findings.append(
            f"{measure.session_label(refusal['session'])}'s chunk {refusal['chunk'] + 1} was refused after "
            f"{measure.session_label(ended_first)} sent END: {refusal['error']}"
        )
    mechanism = (
        "Triton identifies a sequence only by its correlation ID; it does not know which client or connection "
        "a request came from. "
    )
    if outcome == "merged":
        seen = (
            "On this server a START for an ID already in flight is not refused: the second client's chunks join "
            "the running sequence (its START resets the model's state for that ID), and from then on both "
            "clients' chunks update one state cell, the one keyed by the shared ID, so each reads what the other "
            f"wrote ({len(cross)} of {len(mine)} chunks did) and both transcripts are corrupted, with the verdict "
            "'foreign' naming the other session. When the shorter stream sends END the sequence is over for both: "
            "the longer stream's next chunk has no START and is refused. "
        )
    elif outcome == "refused":
        seen = "On this run the server refused the second client's START for the ID in flight: one client got an error. "
    else:
        seen = "On this run both transcripts came back intact: the two streams did not overlap in time. "
    if conflicts:
        seen += (
            "The only trace on the server side is a WARNING in Triton's log (quoted in the log panel): the "
            "sequence 'has a conflict' and the previous one 'will be terminated early'. The clients get no error "
            "for it. "
        )
    explanation = mechanism + seen + (
        "Nothing in the server can tell two clients apart by ID; the fix is on the client side: IDs unique across "
        "every client of the model (a UUID string, or a counter with a per-process random prefix, as this lab "
        "uses). With them both sessions came back "
        f"{'intact' if fixed.all_intact else 'with ' + ', '.join(f'{k} {v}' for k, v in measure.verdict_counts(fixed).items())}."
    )
    steps.finish()
    return ExerciseResult(
        EXERCISE,
        outcome,
        numbers,
        {"chunks": chunks, "sessions": sessions},
        explanation,
        findings,
        {"same_id": collide, "unique_ids": fixed},
    )


def figures(result: ExerciseResult) -> list[tuple[str, go.Figure]]:
    """The exercise's charts, each drawn from one of the result's tables."""
    chunks = result.tables["chunks"].assign(who=lambda f: plots.sessions(f))
    chunks["letter"] = chunks["right"].map(plots.LETTER)
    colours = {**plots.READ_COLOURS, "session 1": "#9467bd", "session 2": "#e377c2"}
    fig = px.scatter(chunks, x="t_send", y="who", color="read_state_of", symbol="letter", facet_row="run",
                     color_discrete_map=colours, labels={"t_send": "sent at (s)", "who": "", "read_state_of": "read state of"},
                     title="Whose state each chunk read")
    fig.update_traces(marker_size=10)
    return [("Chunks", plots.layout(fig, 420))]
