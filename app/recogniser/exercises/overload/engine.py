"""Overload: more sessions than slots, an idle timeout that keeps running in the backlog.

The sequence batcher has no queue policy: a sequence that finds no free slot waits in the
backlog for as long as it takes, and nothing is refused at the door. But Triton stamps a
sequence's idle clock when its request arrives, and the reaper ends an assigned sequence
whose clock has run past max_sequence_idle_microseconds. A session that waited in the backlog
longer than the timeout (minus its think time) is therefore reaped right after it finally gets
a slot: its first chunk is answered, its second is refused for lacking START.
"""
from __future__ import annotations

from collections.abc import Mapping
from dataclasses import replace
from typing import TYPE_CHECKING, Any, TypedDict

import pandas as pd

from app.exercise_kit import Exercise, ExerciseJudgement, Finding, Measured, Number, Steps, Tables, readings
from app.lab.deployment import LabSettings
from app.lab.observation import START_REFUSAL, LogCode
from app.lab.scenario.scenario import Scenario, random_texts
from app.recogniser.engine import driver

if TYPE_CHECKING:
    from app.lab.deployment import Deployer
    from app.lab.progress import Progress
    from app.lab.records import RunResult
    from app.lab.server import LabServer

IDLE_TIMEOUT_US = 2_000_000  # 2 s: a realistic timeout for a client that thinks 40 ms between chunks
BASE = LabSettings(scheduler="direct", instances=1, slots=4, idle_timeout_us=IDLE_TIMEOUT_US, state_key="slot")
CAPACITY = BASE.instances * BASE.slots
LOADS = (2, 4, 8)  # sessions = load x capacity, all opened at once
CHUNKS = 10
THINK_MS = 40.0
OVERLOAD = LOADS[-1]
# The remedies, each tried at the heaviest load: (code, settings, client admission limit). What each
# costs is said by its finding (words.py beside it, FINDINGS["remedy_<code>"]).
REMEDIES = (
    ("admission_limit", BASE, CAPACITY),
    ("more_slots", replace(BASE, slots=16), 0),
    ("longer_idle_timeout", replace(BASE, idle_timeout_us=10_000_000), 0),
)

EXERCISE = Exercise(
    name="overload",
    options=("refused", "wait", "reaped", "corrupt"),
    correct="reaped",
    log_verbose=1,  # the backlog, the reaper and the START-flag refusals are VERBOSE(1) in Triton 2.51
)


def _scenario(model: str, sessions: int, concurrency: int = 0) -> Scenario:
    return Scenario(model=model, texts=random_texts(sessions, CHUNKS, seed=60 + sessions), think_ms=THINK_MS,
                    jitter_ms=5.0, concurrency=concurrency, seed=60 + sessions)


def measure(server: LabServer, deployer: Deployer, progress: Progress | None = None) -> Measured:
    """Each load on the base deployment, then each remedy at the heaviest load: every request's
    error, each session's wait to start and verdict, and what the server logged per run."""
    steps = Steps(progress, 2 + len(LOADS) + 2 * len(REMEDIES))
    steps("deploy", instances=BASE.instances, slots=BASE.slots, timeout=IDLE_TIMEOUT_US / 1e6)
    base = deployer.apply(BASE).model
    runs: dict[str, RunResult] = {}
    what_ran: list[_Ran] = []
    for load in LOADS:
        steps("load", sessions=load * CAPACITY, load=load)
        runs[f"{load}x"] = driver.run(server, _scenario(base, load * CAPACITY))
        what_ran.append({"run": f"{load}x", "load": load, "remedy": ""})
    for label, settings, limit in REMEDIES:
        values = dict(sessions=OVERLOAD * CAPACITY, slots=settings.slots, timeout=settings.idle_timeout_us / 1e6, limit=limit)
        _announce(steps, label, "deploy", values)
        model = base if settings == BASE else deployer.apply(settings).model
        _announce(steps, label, "run", values)
        runs[label] = driver.run(server, _scenario(model, OVERLOAD * CAPACITY, concurrency=limit))
        what_ran.append({"run": label, "load": OVERLOAD, "remedy": label})
    steps("measuring")
    return Measured(tables=_tabulate(runs, what_ran), runs=runs)


class _Ran(TypedDict):
    """One run of measure(): its label, the load (times capacity) and the remedy ("" for a load on the base deployment)."""

    run: str
    load: int
    remedy: str


def _tabulate(runs: dict[str, RunResult], what_ran: list[_Ran]) -> Tables:
    """requests: run, session, chunk, error. sessions: run, session, wait_s, verdict.
    runs: run, load, remedy ("" for a load on the base deployment), wall_s, and the server's log
    counts (None without a log) of backlogged sequences and reaper force-ends."""
    requests, sessions, logged = [], [], []
    for row in what_ran:
        run = runs[row["run"]]
        requests.append(run.requests[["session", "chunk", "error"]].assign(run=row["run"]))
        waits = readings.backlog_waits(run).set_index("session")
        # All sessions want to start at 0: a client-side limit delays the send, the backlog the run.
        wait_s = waits["arrived_s"] + waits["wait_ms"] / 1000
        sessions.append(pd.DataFrame({"run": row["run"], "session": run.sessions["session"].astype(int).to_numpy(),
                                      "wait_s": wait_s.loc[run.sessions["session"]].astype(float).to_numpy(),
                                      "verdict": run.sessions["verdict"].to_numpy()}))
        log = run.log if run.log is not None and run.log.available else None
        logged.append({**row, "wall_s": float(run.wall_s),
                       "backlog_logged": log.count(LogCode.BACKLOG_ENQUEUED) if log else None,
                       "reaper_force_ends_logged": log.count(LogCode.REAPER_FORCE_END) if log else None})
    return {"requests": pd.concat(requests, ignore_index=True), "sessions": pd.concat(sessions, ignore_index=True),
            "runs": pd.DataFrame(logged)}


def _first_refusal(mine: pd.DataFrame) -> tuple[int | None, str]:
    """The first chunk (0-based) the server refused, with Triton's message; (None, "") if none was."""
    refused = mine[mine["error"] != ""].sort_values("chunk")
    if refused.empty:
        return None, ""
    return int(refused["chunk"].iloc[0]), str(refused["error"].iloc[0])


def _ended(sessions: pd.DataFrame, requests: pd.DataFrame) -> pd.DataFrame:
    """Each session's end: reaped (a later chunk refused for lacking START), refused at its first
    chunk, and how many chunks were answered (the sessions figure's table)."""
    by_session = dict(list(requests.groupby(["run", "session"])))
    rows = []
    for s in sessions.itertuples():
        mine = by_session.get((s.run, s.session), requests.iloc[:0])
        refused_at, message = _first_refusal(mine) if s.verdict == "error" else (None, "")
        rows.append({
            "reaped": refused_at is not None and refused_at > 0 and START_REFUSAL in message,
            "refused_at_start": refused_at == 0,
            "chunks_answered": int((mine["error"] == "").sum()),
        })
    return pd.concat([sessions.reset_index(drop=True), pd.DataFrame(rows, columns=["reaped", "refused_at_start", "chunks_answered"])], axis=1)


def _logged(value: Any) -> int | None:  # a table cell: a count, NaN or None
    return None if value is None or pd.isna(value) else int(value)


def _summary(sessions: pd.DataFrame, run: Any) -> dict[str, Number]:  # run: a row of tables["runs"]
    """One run (a load or a remedy): its sessions' waits and ends, and what the server logged."""
    row = {
        "run": run.run,
        "sessions": len(sessions),
        "mean_wait_s": float(sessions["wait_s"].mean()),
        "max_wait_s": float(sessions["wait_s"].max()),
        "intact": int((sessions["verdict"] == "intact").sum()),
        "reaped": int(sessions["reaped"].sum()),
        "refused_at_start": int(sessions["refused_at_start"].sum()),
        "wall_s": float(run.wall_s),
        "backlog_logged": _logged(run.backlog_logged),
        "reaper_force_ends_logged": _logged(run.reaper_force_ends_logged),
    }
    return row if run.remedy else {**row, "load": int(run.load)}


def _outcome(sessions: pd.DataFrame) -> str:
    if sessions["refused_at_start"].any():
        return "refused"
    if (~sessions["verdict"].isin(["intact", "error"])).any():
        return "corrupt"
    if sessions["reaped"].any():
        return "reaped"
    return "wait"


def judge(tables: Tables) -> ExerciseJudgement:
    """From every session's requests and wait, per run: at the heaviest load, was anyone refused,
    corrupted or reaped, or did they all just wait?"""
    per_session = _ended(tables["sessions"], tables["requests"])
    summaries = [(run.remedy, _summary(per_session[per_session["run"] == run.run], run)) for run in tables["runs"].itertuples()]
    loads = pd.DataFrame([summary for remedy, summary in summaries if not remedy])
    remedies = pd.DataFrame([summary for remedy, summary in summaries if remedy])
    first_reaped = next((r for r in loads.itertuples() if r.reaped), None)  # the lightest load at which someone was reaped
    numbers = _numbers(per_session, loads, remedies, first_reaped)
    explanation = [
        Finding("why_no_queue_policy", {"refused": numbers["refused_at_start"]}),
        Finding("why_idle_clock"),
        Finding("why_reaped", {"load": int(first_reaped.load)}) if first_reaped else Finding("why_none_reaped"),
        Finding("why_remedies"),
    ]
    return ExerciseJudgement(outcome=_outcome(per_session[per_session["run"] == f"{OVERLOAD}x"]), numbers=numbers,
                     findings=_findings(numbers, loads, remedies), explanation=explanation,
                     tables={"sessions": per_session, "loads": loads, "remedies": remedies})


def _numbers(per_session: pd.DataFrame, loads: pd.DataFrame, remedies: pd.DataFrame, first_reaped: Any) -> dict[str, Number]:
    reaped = per_session[per_session["reaped"] & per_session["run"].isin(loads["run"])]
    got = sorted(int(n) for n in set(reaped["chunks_answered"]))
    return {
        "capacity_sequences": CAPACITY,
        "idle_timeout_s": IDLE_TIMEOUT_US / 1e6,
        **{f"max_wait_s_{r.run}": r.max_wait_s for r in loads.itertuples()},
        **{f"reaped_{r.run}": r.reaped for r in loads.itertuples()},
        "refused_at_start": int(loads["refused_at_start"].sum()),
        "first_load_with_reaping": first_reaped.run if first_reaped else None,  # a load code, "8x"
        "shortest_wait_s_of_a_reaped_session": float(reaped["wait_s"].min()) if not reaped.empty else None,
        "chunks_a_reaped_session_got": ", ".join(str(n) for n in got) or None,
        **{f"reaped_with_{r.run}": r.reaped for r in remedies.itertuples()},
        **{f"max_wait_s_with_{r.run}": r.max_wait_s for r in remedies.itertuples()},
    }


def _findings(numbers: Mapping[str, Number], loads: pd.DataFrame, remedies: pd.DataFrame) -> list[Finding]:
    findings = [
        Finding("load", {"load": int(r.load), "sessions": int(r.sessions), "max_wait": r.max_wait_s, "mean_wait": r.mean_wait_s,
                         "reaped": int(r.reaped), "refused": int(r.refused_at_start)})
        for r in loads.itertuples()
    ]
    timeout_s = IDLE_TIMEOUT_US / 1e6
    if numbers["shortest_wait_s_of_a_reaped_session"] is not None:
        # Every reaped session got the same number of chunks answered (one, in the slot it finally got).
        findings.append(Finding("reaped_sessions", {"wait": numbers["shortest_wait_s_of_a_reaped_session"], "timeout": timeout_s,
                                                    "chunks": numbers["chunks_a_reaped_session_got"]}))
    else:
        findings.append(Finding("none_reaped", {"timeout": timeout_s}))
    heavy = loads.set_index("run").loc[f"{OVERLOAD}x"]
    if heavy["backlog_logged"] is not None and not pd.isna(heavy["backlog_logged"]):
        findings.append(Finding("log_heavy", {"load": OVERLOAD, "backlog": int(heavy["backlog_logged"]),
                                              "reaped": int(heavy["reaper_force_ends_logged"])}))
    findings += [_remedy(r.run, {"max_wait": r.max_wait_s, "reaped": int(r.reaped), "wall": r.wall_s, "limit": CAPACITY})
                 for r in remedies.itertuples()]
    return findings


def _announce(steps: Steps, remedy: str, phase: str, values: Mapping[str, object]) -> None:
    """The step of one remedy (a REMEDIES code): deploying it ("deploy"), then running the load on it ("run")."""
    {
        ("admission_limit", "deploy"): lambda: steps("deploy_admission_limit", **values),
        ("admission_limit", "run"): lambda: steps("run_admission_limit", **values),
        ("more_slots", "deploy"): lambda: steps("deploy_more_slots", **values),
        ("more_slots", "run"): lambda: steps("run_more_slots", **values),
        ("longer_idle_timeout", "deploy"): lambda: steps("deploy_longer_idle_timeout", **values),
        ("longer_idle_timeout", "run"): lambda: steps("run_longer_idle_timeout", **values),
    }[(remedy, phase)]()


def _remedy(remedy: str, values: Mapping[str, object]) -> Finding:
    """What one remedy (a REMEDIES code) did at the heaviest load; its words say what it costs."""
    return {
        "admission_limit": Finding("remedy_admission_limit", values),
        "more_slots": Finding("remedy_more_slots", values),
        "longer_idle_timeout": Finding("remedy_longer_idle_timeout", values),
    }[remedy]
