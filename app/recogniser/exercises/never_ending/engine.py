"""Never-ending sequences: the idle timeout, slow clients, dead clients, and who cleans up."""
from __future__ import annotations

from typing import TYPE_CHECKING

import pandas as pd

from app.exercise_kit import Exercise, ExerciseJudgement, Finding, Measured, Number, Steps, Tables, models, readings
from app.lab.deployment import LabSettings
from app.lab.observation import START_REFUSAL
from app.lab.scenario.scenario import Scenario, random_texts
from app.recogniser.engine import driver

if TYPE_CHECKING:
    from app.lab.deployment import Deployer
    from app.lab.progress import Progress
    from app.lab.records import RunResult
    from app.lab.server import LabServer

TIMEOUTS_MS = (200, 600)
THINKS_MS = (100, 400)
SLOW_TEXT = "HELLO"
# The waiting client arrives this long after the dead one fell silent: its own idle clock
# runs from its arrival (seen on this server), so it must not wait in the backlog longer
# than the timeout minus its think time, or it is reaped right after it gets the slot.
WAITER_LAG_MS = 300
EVICT_MODEL = "asr_ex_idle_evict"
EVICT_S = 0.4
PAUSE_MS = 1000
EVICT_TEXT = "HELLO WORLD"

EXERCISE = Exercise(
    name="never_ending",
    options=("served", "reaped", "fresh", "waits"),
    correct="reaped",
)


def _slow(model: str, think_ms: float) -> Scenario:
    return Scenario(model=model, texts=[SLOW_TEXT], think_ms=think_ms, jitter_ms=0.0)


def _dead(model: str) -> Scenario:
    return Scenario(
        model=model,
        texts=["DEAD CLIENT", "WAITING"],
        think_ms=30.0,
        jitter_ms=0.0,
        stagger_ms=WAITER_LAG_MS,
        abandon={0: 2},  # two chunks, then silence and no END
    )


def _evict(model: str) -> Scenario:
    return Scenario(
        model=model,
        texts=[EVICT_TEXT, random_texts(1, 20, seed=5)[0]],
        think_ms=40.0,
        jitter_ms=0.0,
        pauses={0: (2, PAUSE_MS)},  # session 1 falls silent after its third chunk
    )


EVICT_SETTINGS = LabSettings(scheduler="direct", instances=1, slots=2, idle_timeout_us=5_000_000, state_key="session")


def load_evicting_model(server: LabServer) -> str:
    """A session-keyed deployment whose model drops cells idle for EVICT_S (its own clean-up)."""
    return models.load_with_parameters(server, EVICT_MODEL, EVICT_SETTINGS, idle_evict_s=EVICT_S)


GRID_COLUMNS = ["timeout_ms", "think_ms", "verdict", "reaped", "chunks_answered", "chunks", "model_requests", "message"]
CHUNK_COLUMNS = ["chunk", "t_send", "state_in", "state_owner", "symbol", "expected", "error"]


def _slow_cell(result: RunResult, timeout: int, think: float) -> dict[str, object]:
    """One grid cell: what the slow client's one session got, and whether Triton refused a chunk for lacking START."""
    answered = int((result.requests["error"] == "").sum())
    return {
        "timeout_ms": timeout,
        "think_ms": think,
        "verdict": result.sessions.iloc[0]["verdict"],
        "start_refused": any(START_REFUSAL in e for e in result.requests["error"]),
        "chunks_answered": answered,
        "chunks": len(SLOW_TEXT),
        "model_requests": int(result.server.get("inference_count", answered)),
        "message": next((e for e in result.requests["error"] if e), ""),
    }


def _dead_row(result: RunResult, timeout: int) -> dict[str, object]:
    """How long the session behind the dead one waited for its slot, from when the dead one fell silent."""
    waits = readings.backlog_waits(result).set_index("session")
    q = result.requests
    silent_at = q[(q["session"] == 0) & (q["error"] == "")]["t_recv"].max()
    return {
        "timeout_ms": timeout,
        "waiter_arrived_after_silence_ms": (waits.loc[1, "arrived_s"] - silent_at) * 1000,
        "waiter_blocked_ms": float(waits.loc[1, "wait_ms"]),
        "waiter_verdict": result.sessions.set_index("session").loc[1, "verdict"],
    }


def measure(server: LabServer, deployer: Deployer, progress: Progress | None = None) -> Measured:
    """Per idle timeout: a slow client at each think time and a dead one; then the model's own clean-up."""
    steps = Steps(progress, len(TIMEOUTS_MS) * (2 + len(THINKS_MS)) + 3)
    runs, grid, dead = {}, [], []
    for timeout in TIMEOUTS_MS:
        steps("deploying", timeout=timeout)
        settings = LabSettings(scheduler="direct", instances=1, slots=1, idle_timeout_us=timeout * 1000)
        model = deployer.apply(settings).model
        for think in THINKS_MS:
            steps("slow", think=think, timeout=timeout)
            runs[f"slow_t{timeout}_think{think}"] = result = driver.run(server, _slow(model, think))
            grid.append(_slow_cell(result, timeout, think))
        steps("dead", timeout=timeout)
        runs[f"dead_t{timeout}"] = result = driver.run(server, _dead(model))
        dead.append(_dead_row(result, timeout))

    steps("deploying_evict", evict=EVICT_S)
    evict_model = load_evicting_model(server)
    steps("pause", pause=PAUSE_MS)
    runs["evict"] = evict = driver.run(server, _evict(evict_model))
    steps("measuring")
    q = evict.requests
    paused = q[q["session"] == 0].sort_values("chunk")[CHUNK_COLUMNS].reset_index(drop=True)
    tables = {"grid": pd.DataFrame(grid), "dead_client": pd.DataFrame(dead), "evict_chunks": paused,
              "evict_sessions": evict.sessions[["session", "tag", "verdict"]]}
    return Measured(tables=tables, runs=runs)


def _outcome(key_cell: pd.Series) -> str:
    """What the question's cell (short timeout, long think time) got."""
    if key_cell["reaped"]:
        return "reaped"
    return {"lost": "fresh", "intact": "served"}.get(key_cell["verdict"], "waits")


def _grid(measured: pd.DataFrame) -> pd.DataFrame:
    """Reaped: Triton refused a chunk for lacking START (it had ended the idle sequence) and the session failed."""
    grid = measured.assign(reaped=measured["start_refused"] & (measured["verdict"] == "error"))
    return grid[GRID_COLUMNS]


def _cell(grid: pd.DataFrame, timeout: int, think: float) -> pd.Series:
    return grid[(grid["timeout_ms"] == timeout) & (grid["think_ms"] == think)].iloc[0]


def _dead_at(dead: pd.DataFrame, timeout: int) -> pd.Series:
    return dead[dead["timeout_ms"] == timeout].iloc[0]


def _numbers(grid: pd.DataFrame, key_cell: pd.Series, long_dead: pd.Series, short_dead: pd.Series, before: pd.Series, resumed: pd.Series,
             paused_session: pd.Series) -> dict[str, Number]:
    return {
        "slow_reaped_at_short_timeout": bool(key_cell["reaped"]),
        "slow_chunks_answered_before_reap": int(key_cell["chunks_answered"]),
        "model_requests_for_reaped_session": int(key_cell["model_requests"]),
        "slow_intact_at_long_timeout": bool(_cell(grid, TIMEOUTS_MS[-1], THINKS_MS[-1])["verdict"] == "intact"),
        "cells_reaped": int(grid["reaped"].sum()),
        "dead_blocked_ms_long_timeout": float(long_dead["waiter_blocked_ms"]),
        "dead_blocked_ms_short_timeout": float(short_dead["waiter_blocked_ms"]),
        "evict_after_pause_state_owner": int(resumed["state_owner"]),
        "evict_after_pause_state_in": int(resumed["state_in"]),
        "evict_before_pause_state_owner_is_own": int(before["state_owner"]) == int(paused_session["tag"]),
        "evict_after_pause_error": resumed["error"] or None,  # Triton's own text, None when accepted
        "evict_verdict": {str(paused_session["verdict"]): 1},  # the paused session's verdict, as verdict counts
    }


def judge(tables: Tables) -> ExerciseJudgement:
    """From the grid of slow-client cells, the dead-client waits and the paused session's chunks."""
    grid, dead, chunks = _grid(tables["grid"]), tables["dead_client"], tables["evict_chunks"]
    key_cell = _cell(grid, TIMEOUTS_MS[0], THINKS_MS[-1])
    long_dead, short_dead = _dead_at(dead, TIMEOUTS_MS[-1]), _dead_at(dead, TIMEOUTS_MS[0])
    before, resumed = (chunks[chunks["chunk"] == k].iloc[0] for k in (2, 3))
    paused_session = tables["evict_sessions"].set_index("session").loc[0]
    numbers = _numbers(grid, key_cell, long_dead, short_dead, before, resumed, paused_session)
    after_pause = {"pause": PAUSE_MS, "evict": EVICT_S, "timeout": EVICT_SETTINGS.idle_timeout_us / 1e6,
                   "message": resumed["error"], "state_in": int(resumed["state_in"]), "owner": int(resumed["state_owner"]),
                   "verdict": paused_session["verdict"]}
    blocked = {"long": TIMEOUTS_MS[-1], "long_wait": float(long_dead["waiter_blocked_ms"]),
               "short": TIMEOUTS_MS[0], "short_wait": float(short_dead["waiter_blocked_ms"])}
    findings = [
        *[
            Finding("grid_reaped", {"timeout": r.timeout_ms, "think": r.think_ms, "answered": r.chunks_answered})
            if r.reaped
            else Finding("grid_verdict", {"timeout": r.timeout_ms, "think": r.think_ms, "verdict": r.verdict})
            for r in grid.itertuples()
        ],
        Finding("refusal", {"message": key_cell["message"]}) if key_cell["message"] else Finding("no_refusal"),
        Finding("model_requests", {"requests": int(key_cell["model_requests"])}),
        Finding("dead_blocked", blocked),
        Finding("evict_refused", after_pause) if resumed["error"] else Finding("evict_accepted", after_pause),
    ]
    if long_dead["waiter_verdict"] == "error":
        findings.append(Finding("waiter_reaped", {"who": 1}))
    explanation = [
        Finding("reaper"),
        Finding("cannot_tell"),
        Finding("slow_reaped", {"refusal": START_REFUSAL}),
        Finding("dead_holds", dict(blocked)),
        Finding("choose"),
        Finding("never_tells"),
        Finding("model_cleans", {"evict": EVICT_S, "owner": int(resumed["state_owner"])}),
        Finding("keep_longer"),
    ]
    return ExerciseJudgement(outcome=_outcome(key_cell), numbers=numbers, findings=findings, explanation=explanation,
                     tables={"grid": grid, "dead_client": dead, "evict_chunks": chunks})
