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
import plotly.express as px
import plotly.graph_objects as go

from app.lab import driver
from app.lab.deployments import LabSettings
from app.lab.exercises import measure, plots
from app.lab.exercises.base import Exercise, ExerciseResult, Option, Steps
from app.lab.scenario import Scenario, random_texts
from app.lab.server_log import LogCode

IDLE_TIMEOUT_US = 2_000_000  # 2 s: a realistic timeout for a client that thinks 40 ms between chunks
BASE = LabSettings(scheduler="direct", instances=1, slots=4, idle_timeout_us=IDLE_TIMEOUT_US, state_key="slot")
CAPACITY = BASE.instances * BASE.slots
LOADS = (2, 4, 8)  # sessions = load x capacity, all opened at once
CHUNKS = 10
THINK_MS = 40.0
START_REFUSAL = "must specify the START flag"
OVERLOAD = LOADS[-1]
# The remedies, each tried at the heaviest load: (label, settings, client admission limit, what it costs)
REMEDIES = (
    ("admission limit", BASE, CAPACITY,
     f"sessions still wait to start, in the client now (at most {CAPACITY} in flight), so the client must queue or shed them"),
    ("more slots", replace(BASE, slots=16), 0,
     "bigger batches per execution (direct pads them) and more state held at once; each instance is a process"),
    ("longer idle timeout", replace(BASE, idle_timeout_us=10_000_000), 0,
     "a client that dies without END now holds its slot for 10 s, and the backlog wait is as long as before"),
)

EXERCISE = Exercise(
    name="overload",
    title="Overload: the backlog and the idle timeout",
    scenario=(
        f"A recogniser on the direct sequence batcher has {BASE.instances} instance x {BASE.slots} slots "
        f"(capacity {CAPACITY} sequences) and max_sequence_idle_microseconds = {IDLE_TIMEOUT_US} (2 s). A burst of "
        f"{OVERLOAD * CAPACITY} clients ({OVERLOAD}x capacity) opens streams at the same moment; each sends {CHUNKS} "
        f"chunks, {THINK_MS:.0f} ms apart, and ends with END. Each stream holds its slot for about half a second."
    ),
    question=f"What happens to the {OVERLOAD * CAPACITY} sessions?",
    options=(
        Option("refused", "Triton refuses the sessions beyond capacity at once: the server is busy."),
        Option("wait", "All of them wait their turn in the backlog and complete; only their start is delayed."),
        Option("reaped", "None is refused at the door, but the waits grow with the backlog, and sessions that waited "
                         "longer than the idle timeout are reaped right after they get a slot: their next chunk lacks START."),
        Option("corrupt", "The extra sessions share slots and read each other's state."),
    ),
    correct="reaped",
    log_verbose=1,  # the backlog, the reaper and the START-flag refusals are VERBOSE(1) in Triton 2.51
)


def _scenario(model: str, sessions: int, concurrency: int = 0) -> Scenario:
    return Scenario(model=model, texts=random_texts(sessions, CHUNKS, seed=60 + sessions), think_ms=THINK_MS,
                    jitter_ms=5.0, concurrency=concurrency, seed=60 + sessions)


def _sessions(run, label: str) -> pd.DataFrame:
    """Per session: how long it waited to start (in the client, then in the backlog) and how it ended."""
    waits = measure.backlog_waits(run).set_index("session")
    answered = run.requests[run.requests["error"] == ""].groupby("session").size()
    rows = []
    for s in run.sessions.itertuples():
        refused_at = _refused_chunk(s.detail) if s.verdict == "error" else None
        rows.append({
            "run": label,
            "session": int(s.session),
            # All sessions want to start at 0: a client-side limit delays the send, the backlog the run.
            "wait_s": float(waits.loc[s.session, "arrived_s"] + waits.loc[s.session, "wait_ms"] / 1000),
            "verdict": s.verdict,
            "reaped": refused_at is not None and refused_at > 0 and START_REFUSAL in s.detail,
            "refused_at_start": refused_at == 0,
            "chunks_answered": int(answered.get(s.session, 0)),
        })
    return pd.DataFrame(rows)


def _refused_chunk(detail: str) -> int | None:
    # verdicts.judge writes "chunk N: <server message>" (N from 1) for a refused request.
    head = detail.split(":", 1)[0]
    return int(head.removeprefix("chunk ")) - 1 if head.startswith("chunk ") else None


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


def run(server, deployer, progress=None) -> ExerciseResult:
    steps = Steps(progress, 2 + len(LOADS) + 2 * len(REMEDIES))
    steps(f"Deploying direct, {BASE.instances} x {BASE.slots} slots, idle timeout 2 s")
    base = deployer.apply(BASE, owner="ex-overload").model
    runs, per_session, loads = {}, [], []
    for load in LOADS:
        label = f"{load}x"
        steps(f"{load * CAPACITY} sessions at once ({label} capacity)")
        result = driver.run(server, _scenario(base, load * CAPACITY))
        runs[label] = result
        s = _sessions(result, label)
        per_session.append(s)
        loads.append(_summary(result, s, label, load=load))

    remedies = []
    for label, settings, limit, cost in REMEDIES:
        steps(f"Remedy: {label}")
        model = base if settings == BASE else deployer.apply(settings, owner=f"ex-overload-{label.split()[-1]}").model
        steps(f"{OVERLOAD * CAPACITY} sessions with {label}")
        result = driver.run(server, _scenario(model, OVERLOAD * CAPACITY, concurrency=limit))
        runs[label] = result
        s = _sessions(result, label)
        per_session.append(s)
        remedies.append(_summary(result, s, label, cost=cost))
    steps("Measuring")

    per_session = pd.concat(per_session, ignore_index=True)
    loads, remedies = pd.DataFrame(loads), pd.DataFrame(remedies)
    heavy = per_session[per_session["run"] == f"{OVERLOAD}x"]
    outcome = _outcome(heavy)
    by_load = loads.set_index("run")
    first_reaped = next((r for r in loads.itertuples() if r.reaped), None)
    reaped = per_session[per_session["reaped"] & per_session["run"].isin(by_load.index)]
    numbers = {
        "capacity_sequences": CAPACITY,
        "idle_timeout_s": IDLE_TIMEOUT_US / 1e6,
        **{f"max_wait_s_{r.run}": r.max_wait_s for r in loads.itertuples()},
        **{f"reaped_{r.run}": r.reaped for r in loads.itertuples()},
        "refused_at_start": int(loads["refused_at_start"].sum()),
        "first_load_with_reaping": first_reaped.run if first_reaped else "none",
        "shortest_wait_s_of_a_reaped_session": float(reaped["wait_s"].min()) if not reaped.empty else "none",
        "chunks_a_reaped_session_got": ", ".join(str(n) for n in sorted(set(reaped["chunks_answered"]))) or "none",
        **{f"reaped_with_{r.run.replace(' ', '_')}": r.reaped for r in remedies.itertuples()},
        **{f"max_wait_s_with_{r.run.replace(' ', '_')}": r.max_wait_s for r in remedies.itertuples()},
    }
    findings = [
        "load: " + "; ".join(f"{r.run} ({r.sessions} sessions): longest wait {r.max_wait_s:.2f} s, mean "
                             f"{r.mean_wait_s:.2f} s, {r.reaped} reaped, {r.refused_at_start} refused at the start"
                             for r in loads.itertuples()),
        (f"reaped sessions had waited at least {reaped['wait_s'].min():.2f} s (the idle timeout is "
         f"{IDLE_TIMEOUT_US / 1e6:g} s) and got {numbers['chunks_a_reaped_session_got']} chunk(s) answered before "
         "their next one was refused for lacking START."
         if not reaped.empty else f"no session was reaped: no wait came near the {IDLE_TIMEOUT_US / 1e6:g} s timeout."),
    ]
    heavy_log = by_load.loc[f"{OVERLOAD}x"]
    if heavy_log["backlog_logged"] is not None:
        findings.append(f"Triton's log at {OVERLOAD}x: {int(heavy_log['backlog_logged'])} backlog entries, "
                        f"{int(heavy_log['reaper_force_ends_logged'])} reaper force-ends.")
    findings += [f"remedy '{r.run}': longest wait {r.max_wait_s:.2f} s, {r.reaped} reaped, run took {r.wall_s:.1f} s; "
                 f"cost: {r.cost}." for r in remedies.itertuples()]
    explanation = (
        "The sequence batcher has no queue policy and no limit on its backlog: a sequence that finds every slot "
        f"taken waits, without an error, until one frees. Nothing was refused at the door "
        f"({numbers['refused_at_start']} refusals at the start), and the wait grew with the load, about one stream's "
        "length per wave of sessions ahead. The idle timeout does not stop while a sequence waits: Triton stamps a "
        "sequence's idle clock when its request arrives, and the reaper ends an assigned sequence whose clock has "
        "run past the timeout. "
        + (f"So at {first_reaped.run} the sessions that had waited about as long as the timeout were reaped right "
           "after they got a slot: their first chunk was answered, their second refused for lacking START, and their "
           "slots went to the sessions behind them. "
           if first_reaped else "No wait came near the timeout on this run, so nobody was reaped. ")
        + "Remedies and what they cost: an admission limit in the client (at most as many sessions in flight as "
        "there are slots) keeps the server's backlog empty, so nobody is reaped, but sessions still wait as long to "
        "start, only in the client, where it can show progress or shed load; more slots or instances shorten the "
        "wait, at the price of bigger batches and more processes; a longer idle timeout stops the reaping but not "
        "the wait, and lets a dead client hold its slot longer (see never_ending)."
    )
    steps.finish()
    return ExerciseResult(EXERCISE, outcome, numbers,
                          {"sessions": per_session, "loads": loads, "remedies": remedies},
                          explanation, findings, runs)


def figures(result: ExerciseResult) -> list[tuple[str, go.Figure]]:
    """The exercise's charts, each drawn from one of the result's tables."""
    s = result.tables["sessions"].copy()
    loads = result.tables["loads"]
    s["ended"] = s.apply(lambda r: "reaped after getting a slot" if r.reaped else
                         ("refused at the start" if r.refused_at_start else r.verdict), axis=1)
    by_load = s[s["run"].isin(loads["run"])].merge(loads[["run", "sessions"]], on="run")
    timeout_s = result.numbers["idle_timeout_s"]
    wait = px.strip(by_load, x="sessions", y="wait_s", color="ended",
                    color_discrete_map={"intact": "#2ca02c", "reaped after getting a slot": "#d62728",
                                        "refused at the start": "#7f7f7f"},
                    labels={"sessions": "sessions opened at once", "wait_s": "wait before the first chunk ran (s)", "ended": ""},
                    title=f"Wait against load (capacity {result.numbers['capacity_sequences']})")
    wait.add_hline(y=timeout_s, line_dash="dot", annotation_text=f"idle timeout {timeout_s:g} s")
    remedies = pd.concat([loads[loads["run"] == loads["run"].iloc[-1]], result.tables["remedies"]], ignore_index=True)
    remedies["run"] = remedies["run"].replace({loads["run"].iloc[-1]: f"no remedy ({loads['run'].iloc[-1]})"})
    bars = go.Figure([
        go.Bar(name="longest wait (s)", x=remedies["run"], y=remedies["max_wait_s"], text=remedies["max_wait_s"].round(2)),
        go.Bar(name="sessions reaped", x=remedies["run"], y=remedies["reaped"], text=remedies["reaped"]),
    ])
    bars.update_layout(barmode="group", title="Remedies at the heaviest load: the wait, and who was reaped")
    return [("Wait against load", plots.layout(wait, 380)), ("Remedies", plots.layout(bars))]
