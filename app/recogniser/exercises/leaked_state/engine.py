"""Leaked state: sessions vanish without END, the reaper frees their slots, the model never hears.

Evidence from three places: the model's own gauge of the state cells it holds
(asr_state_cells on Triton's metrics endpoint, app/lab/observation/state_cells.py), the reaper's lines in
Triton's log (verbosity 1), and the waves themselves (each wave found free slots, so the reaper
did end the earlier sequences).
"""
from __future__ import annotations

import time
from typing import TYPE_CHECKING, Any, TypedDict

import pandas as pd

from app.exercise_kit import Exercise, ExerciseJudgement, Finding, Measured, Steps, Tables, models
from app.lab.deployment import LabSettings
from app.lab.observation import LogCode, run_log, server_log, server_stats, state_cells
from app.lab.scenario.scenario import Scenario, random_texts
from app.lab.traffic import run_queue
from app.recogniser.engine import driver

if TYPE_CHECKING:
    from app.lab.deployment import Deployer
    from app.lab.progress import Progress
    from app.lab.server import LabServer

IDLE_TIMEOUT_US = 500_000  # Triton's reaper ends a silent sequence after 0.5 s
SETTINGS = LabSettings(scheduler="oldest", instances=1, slots=12, idle_timeout_us=IDLE_TIMEOUT_US, state_key="corrid")
WAVES = 4
PER_WAVE = 6
SENT = 3  # chunks each abandoned session sends before it vanishes (of TEXT_LENGTH)
TEXT_LENGTH = 8
GAP_S = 1.2  # between waves: past the idle timeout, so the reaper has freed the last wave's slots
SETTLE_S = 1.6  # after the last wave: past the model's eviction age too
EVICT_S = 1.0  # the model's own clean-up: longer than Triton's timeout, as it must be
NO_EVICT_S = 600  # on this exercise's time scale: never
DEPLOYMENTS = {  # code -> (model name, idle_evict_s); words: DEPLOYMENT_LABELS
    "keep": ("asr_ex_leak_keep", NO_EVICT_S),
    "evict": ("asr_ex_leak_evict", EVICT_S),
}

EXERCISE = Exercise(
    name="leaked_state",
    options=("freed", "capped", "leak"),
    correct="leak",
    log_verbose=1,  # the reaper's lines are VERBOSE(1) in Triton 2.51
)
HEALTHY = "healthy"  # the gauge's mark before the closing session; the waves' marks are wave_mark(k)


def wave_mark(wave: int) -> str:
    """The gauge's mark at the start of wave `wave` (counted from 1)."""
    return f"wave_{wave}"


def _wave(model: str, wave: int) -> Scenario:
    return Scenario(model=model, texts=random_texts(PER_WAVE, TEXT_LENGTH, seed=40 + wave), think_ms=20.0, jitter_ms=0.0,
                    abandon={i: SENT for i in range(PER_WAVE)}, seed=40 + wave)


def _closing(model: str) -> Scenario:
    """One healthy session that ends with END: its requests make the model run (and evict)."""
    return Scenario(model=model, texts=["GOOD NIGHT"], think_ms=20.0, jitter_ms=0.0, seed=49)


def measure(server: LabServer, deployer: Deployer, progress: Progress | None = None) -> Measured:
    """The same waves on a model that keeps its cells and on one that evicts them: the model's
    gauge throughout, when each wave began, and per deployment what the server counted."""
    del deployer  # the two deployments carry a model parameter the lab's settings do not expose
    steps = Steps(progress, len(DEPLOYMENTS) * (WAVES + 1) + 1)
    phases = []
    for label, (name, evict_s) in DEPLOYMENTS.items():
        values = dict(timeout=IDLE_TIMEOUT_US / 1e6, evict=EVICT_S)
        if label == "keep":
            steps("deploy_keep", **values)
        else:
            steps("deploy_evict", **values)
        model = models.load_with_parameters(server, name, SETTINGS, idle_evict_s=evict_s)
        phases.append(_phase(server, label, model, steps))
    steps("measuring")
    runs = {f"{p['label']}_{'wave' + str(k + 1) if k < WAVES else 'closing'}": r for p in phases for k, r in enumerate(p["runs"])}
    tables = {
        "cells": pd.concat([p["cells"] for p in phases], ignore_index=True),
        "marks": pd.concat([p["marks"] for p in phases], ignore_index=True),
        "counts": pd.DataFrame([p["counts"] for p in phases]),
    }
    return Measured(tables=tables, runs=runs)


def _phase(server: LabServer, label: str, model: str, steps: Steps) -> dict[str, Any]:  # a run, frames and a counts row
    """The waves on one deployment, with the model's gauge sampled throughout."""
    # The waves and the gauge between them are one measurement: nobody else's run in between.
    with run_queue.hold(server, model):
        window = server_log.LogWindow.start(server)
        control = server.client()
        executed_before = int(server_stats.model_stats(control, model).get("inference_count", 0))
        runs = []
        with state_cells.Sampler(server.metrics_url, model, every_s=0.1) as cells:
            for wave in range(WAVES):
                values = dict(wave=wave + 1, waves=WAVES, sessions=PER_WAVE, chunks=SENT, evict=EVICT_S)
                if label == "keep":
                    steps("wave_keep", **values)
                else:
                    steps("wave_evict", **values)
                cells.mark(wave_mark(wave + 1))
                runs.append(driver.run(server, _wave(model, wave)))
                time.sleep(GAP_S if wave < WAVES - 1 else SETTLE_S)
            cells.mark(HEALTHY)
            runs.append(driver.run(server, _closing(model)))
            window.settle()  # the reaper's last lines, and one more gauge sample
        executed_after = int(server_stats.model_stats(control, model).get("inference_count", 0))
    log = run_log.capture(window, [model], [p.corrid for r in runs for p in r.plans])
    frame = cells.frame()
    if state_cells.totals(frame).empty:
        raise RuntimeError(f"the model's {state_cells.CELLS} metric is not on Triton's metrics endpoint ({server.metrics_url})")
    return {
        "label": label,
        "runs": runs,
        "cells": frame.assign(deployment=label),
        "marks": cells.marks().assign(deployment=label),
        "counts": {
            "deployment": label,
            "abandoned": sum(len(r.plans) for r in runs[:WAVES]),
            "reaped_logged": log.count(LogCode.REAPER_FORCE_END) if log.available else None,
            "model_requests": executed_after - executed_before,  # Triton's statistics: requests the model ran
            "answered": int(sum((r.requests["error"] == "").sum() for r in runs)),
            "refused_chunks": int(sum((r.requests["error"] != "").sum() for r in runs)),
        },
    }


class _Tally(TypedDict):
    """What became of one deployment's cells (_tally)."""

    deployment: str
    abandoned: int
    reaped_logged: int | None  # None: the log is not available
    cells_at_start: int
    peak_cells: int
    cells_left: int
    cells_added: int
    evicted: int
    refused_chunks: int
    model_requests_beyond_answered: int


def _tally(counts: Any, cells: pd.DataFrame) -> _Tally:  # counts: a row of tables["counts"] (pandas rows are untyped)
    """One deployment: what its gauge and the server's counts say became of the vanished sessions' cells."""
    total = state_cells.totals(cells[cells["deployment"] == counts.deployment])
    # Cells are counted from the phase's first reading: an earlier run's leftovers are not this run's.
    start, left = int(total["cells"].iloc[0]), int(total["cells"].iloc[-1])
    return {
        "deployment": counts.deployment,
        "abandoned": int(counts.abandoned),
        "reaped_logged": None if pd.isna(counts.reaped_logged) else int(counts.reaped_logged),
        "cells_at_start": start,
        "peak_cells": int(total["cells"].max()),
        "cells_left": left,
        "cells_added": left - start,
        "evicted": int(total["evicted"].iloc[-1] - total["evicted"].iloc[0]),
        "refused_chunks": int(counts.refused_chunks),
        # Requests the model ran beyond the chunks answered: what the reaper sent it (oldest has no padding).
        "model_requests_beyond_answered": int(counts.model_requests - counts.answered),
    }


def _outcome(tally: _Tally) -> str:
    added = tally["cells_added"]
    if added <= 0:
        return "freed"
    return "capped" if added <= SETTINGS.slots else "leak"


def judge(tables: Tables) -> ExerciseJudgement:
    """From the model's gauge and the server's counts: did the cells of sessions that vanished stay?"""
    tallies = {counts.deployment: _tally(counts, tables["cells"]) for counts in tables["counts"].itertuples()}
    keep, evict = tallies["keep"], tallies["evict"]
    logged = keep["reaped_logged"]
    numbers = {
        "sessions_abandoned": keep["abandoned"],
        "reaper_force_ends_logged": logged,  # None: the log is not available (a finding says so)
        "cells_added_no_eviction": keep["cells_added"],
        "cells_left_no_eviction": keep["cells_left"],
        "peak_cells_no_eviction": keep["peak_cells"],
        "cells_left_with_eviction": evict["cells_left"],
        "peak_cells_with_eviction": evict["peak_cells"],
        "cells_evicted_by_the_model": evict["evicted"],
        "refused_chunks": keep["refused_chunks"] + evict["refused_chunks"],
        "model_requests_for_the_reaps": keep["model_requests_beyond_answered"],
    }
    findings = [
        Finding("keep_cells", {"abandoned": keep["abandoned"], "added": keep["cells_added"], "start": keep["cells_at_start"],
                               "left": keep["cells_left"], "slots": SETTINGS.slots}),
        Finding("reaped", {"reaped": logged}) if logged is not None else Finding("log_unavailable"),
        Finding("evict_cells", {"evict": EVICT_S, "peak": evict["peak_cells"], "evicted": evict["evicted"],
                                "left": evict["cells_left"]}),
        Finding("refused", {"refused": numbers["refused_chunks"]}),
        Finding("model_requests", {"requests": keep["model_requests_beyond_answered"]}),
    ]
    explanation = [
        Finding("why_reaper"),
        Finding("why_model_not_told"),
        Finding("why_cells", {"added": keep["cells_added"], "abandoned": keep["abandoned"], "slots": SETTINGS.slots}),
        Finding("why_eviction", {"evict": EVICT_S, "timeout": IDLE_TIMEOUT_US / 1e6, "left": evict["cells_left"]}),
        Finding("why_timer"),
    ]
    tables = {"cells": tables["cells"], "marks": tables["marks"], "tally": pd.DataFrame(list(tallies.values()))}
    return ExerciseJudgement(outcome=_outcome(keep), numbers=numbers, findings=findings, explanation=explanation, tables=tables)
