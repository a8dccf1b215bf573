"""Correlation ID collision: two clients pick the same sequence ID on the oldest strategy."""
from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

import pandas as pd

from app.exercise_kit import Exercise, ExerciseJudgement, Finding, Measured, Number, Steps, Tables, readings
from app.lab.observation import LogCode
from app.lab.scenario.ids import unique_ids
from app.lab.scenario.scenario import Scenario
from app.recogniser.engine import driver, presets

if TYPE_CHECKING:
    from app.lab.deployment import Deployer
    from app.lab.progress import Progress
    from app.lab.server import LabServer

# Different lengths: the shorter session's END comes first, which matters once they merge.
TEXTS = ["HELLO WORLD ONE", "GOODBYE MOON TWO"]

EXERCISE = Exercise(
    name="id_collision",
    options=("refused", "apart", "merged"),
    correct="merged",
)
SESSION_COLUMNS = ["session", "corrid", "verdict", "read_state_of", "detail_code", "expected_text", "received_text"]
REQUEST_COLUMNS = ["session", "chunk", "t_send", "instance", "state_owner", "symbol", "expected", "error"]
CHUNK_COLUMNS = ["session", "chunk", "t_send", "instance", "read_state_of", "other_session", "right", "error"]
RUNS = ("same_id", "unique_ids")
ENDED_FIRST = int(min(range(len(TEXTS)), key=lambda i: len(TEXTS[i])))  # the shorter session plans to send its END first


def measure(server: LabServer, deployer: Deployer, progress: Progress | None = None) -> Measured:
    """Two sessions on oldest under one shared correlation ID, then the same two under IDs of their own."""
    steps = Steps(progress, 4)
    steps("deploying")
    model = deployer.apply(presets.get("oldest_right").settings).model
    shared = unique_ids(1)[0]
    steps("same_id", corrid=str(shared))
    collide = driver.run(
        server, Scenario(model=model, texts=TEXTS, think_ms=30.0, jitter_ms=5.0, stagger_ms=15.0, corrids=[shared, shared], seed=2)
    )
    steps("unique_ids")
    fixed = driver.run(server, Scenario(model=model, texts=TEXTS, think_ms=30.0, jitter_ms=5.0, stagger_ms=15.0, seed=2))
    steps("measuring")
    runs = dict(zip(RUNS, (collide, fixed), strict=True))
    logs = {label: run.log for label, run in runs.items()}
    tables = {
        "requests": pd.concat([run.requests[REQUEST_COLUMNS].assign(run=label) for label, run in runs.items()], ignore_index=True),
        "sessions": pd.concat([run.sessions[[*SESSION_COLUMNS, "tag"]].assign(run=label) for label, run in runs.items()],
                              ignore_index=True),
        "server_log": readings.log_lines(logs),
        "logs": readings.logs_read(logs),
    }
    return Measured(tables=tables, runs=runs)


def _chunks(requests: pd.DataFrame, sessions: pd.DataFrame) -> pd.DataFrame:
    """Per chunk of one run: whose state it read, as a code (own, other, fresh, refused, unknown; `other_session`
    the 0-based index of the session whose state it was), and whether it was right."""
    owners = dict(zip(sessions["tag"], sessions["session"], strict=True))
    rows = []
    for r in requests.sort_values(["t_send"]).itertuples():
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
        rows.append({"session": int(r.session), "chunk": int(r.chunk), "t_send": float(r.t_send), "instance": int(r.instance),
                     "read_state_of": read, "other_session": other, "right": (not r.error) and int(r.symbol) == int(r.expected),
                     "error": r.error})
    return pd.DataFrame(rows, columns=CHUNK_COLUMNS)


def _outcome(chunks: pd.DataFrame, sessions: pd.DataFrame) -> str:
    """Of the same-ID run: refused when a session's first chunk was, apart when both stayed intact."""
    if ((chunks["chunk"] == 0) & (chunks["error"] != "")).any():
        return "refused"
    if (sessions["verdict"] == "intact").all():
        return "apart"
    return "merged"


def _session_finding(r: Any) -> Finding:  # r: a row of the run's sessions
    """A broken session of the same-ID run: its verdict, and whose state it read when that was the other's."""
    other = r.read_state_of
    if r.verdict == "foreign" and isinstance(other, (int, float)) and other == other:
        return Finding("session_foreign", {"who": int(r.session), "other": int(other)})
    return Finding("session_verdict", {"who": int(r.session), "verdict": r.verdict})


def _conflicts(tables: Tables, corrid: str) -> tuple[pd.DataFrame, bool]:
    """Triton's own evidence: the WARNING it logs (at any verbosity) when a START meets an ID in flight."""
    log = tables["server_log"]
    read = bool(tables["logs"].set_index("run").loc["same_id", "available"])
    mine = log[(log["run"] == "same_id") & (log["code"] == LogCode.SEQUENCE_CONFLICT.value) & (log["corrid"] == corrid)]
    return mine, read


def _fixed_findings(fixed: pd.DataFrame) -> tuple[Finding, Finding]:
    """How the unique-ID run came out: as a finding and as the explanation's last sentence."""
    if (fixed["verdict"] == "intact").all():
        return Finding("unique_intact"), Finding("fixed_intact")
    verdicts = readings.verdict_tally(fixed)
    return Finding("unique_verdicts", {"verdicts": verdicts}), Finding("fixed_verdicts", {"verdicts": verdicts})


def _ended_first(mine: pd.DataFrame) -> int:
    """The session whose END the server answered first: the one that ended the shared sequence. The
    shorter session plans to, but on a busy machine the other's END can come first (the margin is
    one chunk's think time), so the run says which; ENDED_FIRST where no END was answered."""
    last = mine.groupby("session")["chunk"].transform("max")
    ends = mine[(mine["chunk"] == last) & (mine["error"] == "")].sort_values("t_send")
    return int(ends.iloc[0]["session"]) if not ends.empty else ENDED_FIRST


def _numbers(mine: pd.DataFrame, collide: pd.DataFrame, fixed: pd.DataFrame, conflicts: pd.DataFrame, log_read: bool) -> dict[str, Number]:
    refused = mine[mine["error"] != ""]
    return {
        "shared_corrid": str(collide["corrid"].iloc[0]),
        "collide_verdicts": readings.verdict_tally(collide),
        "collide_foreign_sessions": int((collide["verdict"] == "foreign").sum()),
        "collide_chunks_reading_other_session": int((mine["read_state_of"] == "other").sum()),
        "collide_chunks_right": int(mine["right"].sum()),
        "collide_chunks": len(mine),
        "collide_refused_chunks": len(refused),
        "refused_after_other_end": bool(not refused.empty and refused.iloc[0]["session"] != _ended_first(mine)),
        "fixed_intact": bool((fixed["verdict"] == "intact").all()),
        "conflict_warnings_logged": len(conflicts) if log_read else None,
    }


def _findings(n: Mapping[str, Number], mine: pd.DataFrame, collide: pd.DataFrame, conflicts: pd.DataFrame, log_read: bool, unique: Finding) -> list[Finding]:
    findings = [
        Finding("same_id", {"verdicts": n["collide_verdicts"], "cross": n["collide_chunks_reading_other_session"], "chunks": len(mine)}),
        *[_session_finding(r) for r in collide.itertuples() if r.verdict != "intact"],
        unique,
    ]
    if not conflicts.empty:
        findings.append(Finding("log_warning", {"level": conflicts.iloc[0]["level"], "message": conflicts.iloc[0]["message"]}))
    elif not log_read:
        findings.append(Finding("log_unavailable"))
    refused = mine[mine["error"] != ""]
    if not refused.empty:
        first = refused.iloc[0]
        findings.append(Finding("refused_after_end", {"who": int(first["session"]), "chunk": int(first["chunk"]) + 1,
                                                      "ended": _ended_first(mine), "message": first["error"]}))
    return findings


def judge(tables: Tables) -> ExerciseJudgement:
    """From each chunk's STATE_OWNER, the sessions' verdicts and the server log: did the shared ID merge the sessions?"""
    requests, sessions = tables["requests"], tables["sessions"]
    by_run = {label: (requests[requests["run"] == label], sessions[sessions["run"] == label]) for label in RUNS}
    chunks = pd.concat([_chunks(*by_run[label]).assign(run=label) for label in RUNS], ignore_index=True)
    collide, fixed = by_run["same_id"][1], by_run["unique_ids"][1]
    mine = chunks[chunks["run"] == "same_id"]
    conflicts, log_read = _conflicts(tables, str(collide["corrid"].iloc[0]))
    n = _numbers(mine, collide, fixed, conflicts, log_read)
    outcome = _outcome(mine, collide)
    unique, fixed_sentence = _fixed_findings(fixed)
    seen = {"merged": Finding("seen_merged", {"cross": n["collide_chunks_reading_other_session"], "chunks": len(mine)}),
            "refused": Finding("seen_refused"), "apart": Finding("seen_apart")}[outcome]
    explanation = [Finding("mechanism"), seen, *([Finding("log_only_trace")] if not conflicts.empty else []), Finding("fix"),
                   fixed_sentence]
    return ExerciseJudgement(outcome=outcome, numbers=n, findings=_findings(n, mine, collide, conflicts, log_read, unique),
                     explanation=explanation, tables={"chunks": chunks, "sessions": sessions[[*SESSION_COLUMNS, "run"]]})
