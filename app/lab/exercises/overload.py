"""Overload: more sessions than slots, an idle timeout that keeps running in the backlog.

The sequence batcher has no queue policy: a sequence that finds no free slot waits in the
backlog for as long as it takes, and nothing is refused at the door. But Triton stamps a
sequence's idle clock when its request arrives, and the reaper ends an assigned sequence
whose clock has run past max_sequence_idle_microseconds. A session that waited in the backlog
longer than the timeout (minus its think time) is therefore reaped right after it finally gets
a slot: its first chunk is answered, its second is refused for lacking START.
"""
from __future__ import annotations

from dataclasses import replace

import pandas as pd

from app.lab.deployment.deployments import LabSettings
from app.lab.exercises.common import readings
from app.lab.exercises.common.base import Exercise, ExerciseResult, Finding, Steps
from app.lab.observation.server_log import LogCode
from app.lab.scenario.scenario import Scenario, random_texts
from app.lab.traffic import driver

IDLE_TIMEOUT_US = 2_000_000  # 2 s: a realistic timeout for a client that thinks 40 ms between chunks
BASE = LabSettings(scheduler="direct", instances=1, slots=4, idle_timeout_us=IDLE_TIMEOUT_US, state_key="slot")
CAPACITY = BASE.instances * BASE.slots
LOADS = (2, 4, 8)  # sessions = load x capacity, all opened at once
CHUNKS = 10
THINK_MS = 40.0
START_REFUSAL = "must specify the START flag"
OVERLOAD = LOADS[-1]
# The remedies, each tried at the heaviest load: (code, settings, client admission limit). What each
# costs is said by its finding (app/text/exercises/overload.py, FINDINGS["remedy_<code>"]).
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


def _sessions(run, label: str) -> pd.DataFrame:
    """Per session: how long it waited to start (in the client, then in the backlog) and how it ended."""
    waits = readings.backlog_waits(run).set_index("session")
    q = run.requests
    answered = q[q["error"] == ""].groupby("session").size()
    rows = []
    for s in run.sessions.itertuples():
        refused_at, message = _first_refusal(q[q["session"] == s.session]) if s.verdict == "error" else (None, "")
        rows.append({
            "run": label,
            "session": int(s.session),
            # All sessions want to start at 0: a client-side limit delays the send, the backlog the run.
            "wait_s": float(waits.loc[s.session, "arrived_s"] + waits.loc[s.session, "wait_ms"] / 1000),
            "verdict": s.verdict,
            "reaped": refused_at is not None and refused_at > 0 and START_REFUSAL in message,
            "refused_at_start": refused_at == 0,
            "chunks_answered": int(answered.get(s.session, 0)),
        })
    return pd.DataFrame(rows)


def _first_refusal(mine: pd.DataFrame) -> tuple[int | None, str]:
    """The first chunk (0-based) the server refused, with Triton's message; (None, "") if none was."""
    refused = mine[mine["error"] != ""].sort_values("chunk")
    if refused.empty:
        return None, ""
    return int(refused["chunk"].iloc[0]), str(refused["error"].iloc[0])


def _summary(run, sessions: pd.DataFrame, label: str, **extra) -> dict:
    log = run.log
    return {
        "run": label,
        "sessions": len(sessions),
        "mean_wait_s": float(sessions["wait_s"].mean()),
        "max_wait_s": float(sessions["wait_s"].max()),
        "intact": int((sessions["verdict"] == "intact").sum()),
        "reaped": int(sessions["reaped"].sum()),
        "refused_at_start": int(sessions["refused_at_start"].sum()),
        "wall_s": float(run.wall_s),
        "backlog_logged": log.count(LogCode.BACKLOG_ENQUEUED) if log is not None and log.available else None,
        "reaper_force_ends_logged": log.count(LogCode.REAPER_FORCE_END) if log is not None and log.available else None,
        **extra,
    }


def _outcome(sessions: pd.DataFrame) -> str:
    if sessions["refused_at_start"].any():
        return "refused"
    if (~sessions["verdict"].isin(["intact", "error"])).any():
        return "corrupt"
    if sessions["reaped"].any():
        return "reaped"
    return "wait"


def _announce(steps: Steps, remedy: str, phase: str, values: dict) -> None:
    """The step of one remedy (a REMEDIES code): deploying it ("deploy"), then running the load on it ("run")."""
    {
        ("admission_limit", "deploy"): lambda: steps("deploy_admission_limit", **values),
        ("admission_limit", "run"): lambda: steps("run_admission_limit", **values),
        ("more_slots", "deploy"): lambda: steps("deploy_more_slots", **values),
        ("more_slots", "run"): lambda: steps("run_more_slots", **values),
        ("longer_idle_timeout", "deploy"): lambda: steps("deploy_longer_idle_timeout", **values),
        ("longer_idle_timeout", "run"): lambda: steps("run_longer_idle_timeout", **values),
    }[(remedy, phase)]()


def _remedy(remedy: str, values: dict) -> Finding:
    """What one remedy (a REMEDIES code) did at the heaviest load; its words say what it costs."""
    return {
        "admission_limit": Finding("remedy_admission_limit", values),
        "more_slots": Finding("remedy_more_slots", values),
        "longer_idle_timeout": Finding("remedy_longer_idle_timeout", values),
    }[remedy]


def run(server, deployer, progress=None) -> ExerciseResult:
    steps = Steps(progress, 2 + len(LOADS) + 2 * len(REMEDIES))
    steps("deploy", instances=BASE.instances, slots=BASE.slots, timeout=IDLE_TIMEOUT_US / 1e6)
    base = deployer.apply(BASE, owner="ex-overload").model
    runs, per_session, loads = {}, [], []
    for load in LOADS:
        label = f"{load}x"
        steps("load", sessions=load * CAPACITY, load=load)
        result = driver.run(server, _scenario(base, load * CAPACITY))
        runs[label] = result
        s = _sessions(result, label)
        per_session.append(s)
        loads.append(_summary(result, s, label, load=load))

    remedies = []
    for label, settings, limit in REMEDIES:
        values = dict(sessions=OVERLOAD * CAPACITY, slots=settings.slots, timeout=settings.idle_timeout_us / 1e6, limit=limit)
        _announce(steps, label, "deploy", values)
        model = base if settings == BASE else deployer.apply(settings, owner=f"ex-overload-{label.split('_')[-1]}").model
        _announce(steps, label, "run", values)
        result = driver.run(server, _scenario(model, OVERLOAD * CAPACITY, concurrency=limit))
        runs[label] = result
        s = _sessions(result, label)
        per_session.append(s)
        remedies.append(_summary(result, s, label))
    steps("measuring")

    per_session = pd.concat(per_session, ignore_index=True)
    loads, remedies = pd.DataFrame(loads), pd.DataFrame(remedies)
    heavy = per_session[per_session["run"] == f"{OVERLOAD}x"]
    outcome = _outcome(heavy)
    by_load = loads.set_index("run")
    first_reaped = next((r for r in loads.itertuples() if r.reaped), None)
    reaped = per_session[per_session["reaped"] & per_session["run"].isin(by_load.index)]
    got = sorted(int(n) for n in set(reaped["chunks_answered"]))
    numbers = {
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
    findings = [
        Finding("load", {"load": int(r.load), "sessions": int(r.sessions), "max_wait": r.max_wait_s, "mean_wait": r.mean_wait_s,
                         "reaped": int(r.reaped), "refused": int(r.refused_at_start)})
        for r in loads.itertuples()
    ]
    timeout_s = IDLE_TIMEOUT_US / 1e6
    if not reaped.empty:
        # Every reaped session got the same number of chunks answered (one, in the slot it finally got).
        findings.append(Finding("reaped_sessions", {"wait": float(reaped["wait_s"].min()), "timeout": timeout_s,
                                                    "chunks": numbers["chunks_a_reaped_session_got"]}))
    else:
        findings.append(Finding("none_reaped", {"timeout": timeout_s}))
    heavy_log = by_load.loc[f"{OVERLOAD}x"]
    if heavy_log["backlog_logged"] is not None and not pd.isna(heavy_log["backlog_logged"]):
        findings.append(Finding("log_heavy", {"load": OVERLOAD, "backlog": int(heavy_log["backlog_logged"]),
                                              "reaped": int(heavy_log["reaper_force_ends_logged"])}))
    findings += [_remedy(r.run, {"max_wait": r.max_wait_s, "reaped": int(r.reaped), "wall": r.wall_s, "limit": CAPACITY})
                 for r in remedies.itertuples()]
    explanation = [
        Finding("why_no_queue_policy", {"refused": numbers["refused_at_start"]}),
        Finding("why_idle_clock"),
        Finding("why_reaped", {"load": int(first_reaped.load)}) if first_reaped else Finding("why_none_reaped"),
        Finding("why_remedies"),
    ]
    steps.finish()
    return ExerciseResult(exercise=EXERCISE, outcome=outcome, numbers=numbers,
                          tables={"sessions": per_session, "loads": loads, "remedies": remedies},
                          explanation=explanation, findings=findings, runs=runs)
