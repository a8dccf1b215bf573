"""Leaked state: sessions vanish without END, the reaper frees their slots, the model never hears.

Evidence from three places: the model's own gauge of the state cells it holds
(asr_state_cells on Triton's metrics endpoint, app/lab/state_cells.py), the reaper's lines in
Triton's log (verbosity 1), and the waves themselves (each wave found free slots, so the reaper
did end the earlier sequences).
"""
from __future__ import annotations

import time

import pandas as pd
import plotly.express as px
import plotly.graph_objects as go

from app.lab import driver, run_log, server_log, server_stats, state_cells
from app.lab.deployments import LabSettings
from app.lab.exercises import models, plots
from app.lab.exercises.base import Exercise, ExerciseResult, Option, Steps
from app.lab.scenario import Scenario, random_texts
from app.lab.server_log import LogCode

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
DEPLOYMENTS = {  # label -> (model name, idle_evict_s)
    "no eviction": ("asr_ex_leak_keep", NO_EVICT_S),
    f"idle_evict_s {EVICT_S:g} s": ("asr_ex_leak_evict", EVICT_S),
}

EXERCISE = Exercise(
    name="leaked_state",
    title="Leaked state: the reaper never tells the model",
    scenario=(
        "A recogniser on the oldest strategy keeps each session's state in its own memory, keyed by "
        f"correlation ID; Triton's max_sequence_idle_microseconds is {IDLE_TIMEOUT_US} (0.5 s), with "
        f"{SETTINGS.slots} candidate slots. Mobile clients drop off: {WAVES} waves of {PER_WAVE} sessions, "
        f"{GAP_S:g} s apart, each send {SENT} chunks and vanish without END. The model exports a gauge of the "
        "state cells it holds on Triton's metrics endpoint."
    ),
    question="What happens to the state cells the model keeps for the sessions that vanished?",
    options=(
        Option("freed", "They are freed: when the reaper ends a sequence, Triton tells the model, and the gauge goes back to zero."),
        Option("capped", f"They are reused: the gauge never exceeds the {SETTINGS.slots} slots, since a new sequence takes over a freed slot's state."),
        Option("leak", "They pile up: the model is never told, so every vanished session leaves its cell behind until the model evicts it itself."),
    ),
    correct="leak",
    log_verbose=1,  # the reaper's lines are VERBOSE(1) in Triton 2.51
)


def _wave(model: str, wave: int) -> Scenario:
    return Scenario(model=model, texts=random_texts(PER_WAVE, TEXT_LENGTH, seed=40 + wave), think_ms=20.0, jitter_ms=0.0,
                    abandon={i: SENT for i in range(PER_WAVE)}, seed=40 + wave)


def _closing(model: str) -> Scenario:
    """One healthy session that ends with END: its requests make the model run (and evict)."""
    return Scenario(model=model, texts=["GOOD NIGHT"], think_ms=20.0, jitter_ms=0.0, seed=49)


def _phase(server, label: str, model: str, steps: Steps) -> dict:
    """The waves on one deployment, with the model's gauge sampled throughout."""
    window = server_log.LogWindow.start(server)
    control = server.client()
    executed_before = int(server_stats.model_stats(control, model).get("inference_count", 0))
    runs = []
    with state_cells.Sampler(server.metrics_url, model, every_s=0.1) as cells:
        for wave in range(WAVES):
            steps(f"{label}: wave {wave + 1} of {WAVES}, {PER_WAVE} sessions vanish after {SENT} chunks")
            cells.mark(f"wave {wave + 1}")
            runs.append(driver.run(server, _wave(model, wave)))
            time.sleep(GAP_S if wave < WAVES - 1 else SETTLE_S)
        cells.mark("healthy session")
        runs.append(driver.run(server, _closing(model)))
        time.sleep(0.3)
    log = run_log.capture(window, [model], [p.corrid for r in runs for p in r.plans])
    # Requests the model ran beyond the chunks answered: what the reaper sent it (oldest has no padding).
    executed = int(server_stats.model_stats(control, model).get("inference_count", 0)) - executed_before
    answered = int(sum((r.requests["error"] == "").sum() for r in runs))
    frame = cells.frame()
    total = state_cells.totals(frame)
    if total.empty:
        raise RuntimeError(f"the model's {state_cells.CELLS} metric is not on Triton's metrics endpoint ({server.metrics_url})")
    # Cells are counted from the phase's first reading: an earlier run's leftovers are not this run's.
    start = int(total["cells"].iloc[0])
    return {
        "label": label,
        "runs": runs,
        "cells": frame.assign(deployment=label),
        "marks": cells.marks().assign(deployment=label),
        "tally": {
            "deployment": label,
            "abandoned": WAVES * PER_WAVE,
            "reaped_logged": log.count(LogCode.REAPER_FORCE_END) if log.available else None,
            "cells_at_start": start,
            "peak_cells": int(total["cells"].max()),
            "cells_left": int(total["cells"].iloc[-1]),
            "cells_added": int(total["cells"].iloc[-1]) - start,
            "evicted": int(total["evicted"].iloc[-1] - total["evicted"].iloc[0]),
            "refused_chunks": int(sum((r.requests["error"] != "").sum() for r in runs)),
            "model_requests_beyond_answered": executed - answered,
        },
    }


def _outcome(tally: dict) -> str:
    added = tally["cells_added"]
    if added <= 0:
        return "freed"
    return "capped" if added <= SETTINGS.slots else "leak"


def run(server, deployer, progress=None) -> ExerciseResult:
    del deployer  # the two deployments carry a model parameter the lab's settings do not expose
    steps = Steps(progress, len(DEPLOYMENTS) * (WAVES + 1) + 1)
    phases = []
    for label, (name, evict_s) in DEPLOYMENTS.items():
        steps(f"Deploying oldest, corrid-keyed, idle timeout 0.5 s, {label}")
        model = models.load_with_parameters(server, name, SETTINGS, idle_evict_s=evict_s)
        phases.append(_phase(server, label, model, steps))
    steps("Measuring")

    keep, evict = (p["tally"] for p in phases)
    tally = pd.DataFrame([keep, evict])
    outcome = _outcome(keep)
    logged = keep["reaped_logged"]
    numbers = {
        "sessions_abandoned": keep["abandoned"],
        "reaper_force_ends_logged": logged if logged is not None else "log not available",
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
        f"no eviction: {keep['abandoned']} sessions vanished; the model held {keep['cells_added']} more cells at the "
        f"end than at the start ({keep['cells_at_start']} -> {keep['cells_left']}), with only {SETTINGS.slots} slots.",
        (f"Triton's log: the reaper force-ended {logged} of those sequences, freeing their slots."
         if logged is not None else "Triton's log is not available here (external server)."),
        f"idle_evict_s {EVICT_S:g} s: peak {evict['peak_cells']} cells; the model evicted {evict['evicted']} and held "
        f"{evict['cells_left']} after the closing session.",
        f"refused chunks across both deployments: {numbers['refused_chunks']} (each wave found free slots).",
        f"Triton's statistics: the model ran {keep['model_requests_beyond_answered']} request(s) beyond the chunks it "
        "answered, so the reaper's force-ends never reached it.",
    ]
    explanation = (
        "The sequence batcher tracks a sequence only to give it a slot. When a client goes silent for "
        "max_sequence_idle_microseconds the reaper ends the sequence and frees the slot (its lines in Triton's "
        "log say so at verbosity 1), which is why each new wave found room. The model is not part of that: no "
        "request, no END, no callback reaches it, and the Python backend has no implicit state Triton could "
        f"reset for it. So a model that keys state by correlation ID keeps a cell for every vanished session: "
        f"{keep['cells_added']} new cells for {keep['abandoned']} vanished sessions here, against {SETTINGS.slots} slots, "
        "and on a real server that grows until memory runs out. The model must clean up by itself: ours drops "
        f"cells untouched for idle_evict_s ({EVICT_S:g} s here, longer than Triton's 0.5 s so no live session "
        f"loses its state), and the gauge fell back to {evict['cells_left']}. It evicts while executing, so the "
        "clean-up runs when traffic comes; a model that may sit idle needs a timer too. The same holds for "
        "session-keyed state in a dynamic-batcher model, which has no timeout at all."
    )
    steps.finish()
    runs = {f"{'keep' if i == 0 else 'evict'}_{'wave' + str(k + 1) if k < WAVES else 'closing'}": r
            for i, phase in enumerate(phases) for k, r in enumerate(phase["runs"])}
    return ExerciseResult(
        EXERCISE,
        outcome,
        numbers,
        {"cells": pd.concat([p["cells"] for p in phases], ignore_index=True),
         "marks": pd.concat([p["marks"] for p in phases], ignore_index=True),
         "tally": tally},
        explanation,
        findings,
        runs,
    )


def figures(result: ExerciseResult) -> list[tuple[str, go.Figure]]:
    """The exercise's charts, each drawn from one of the result's tables."""
    cells = state_cells.totals(result.tables["cells"], by=("deployment",))
    gauge = px.line(cells, x="t", y="cells", color="deployment", line_shape="hv", markers=True,
                    labels={"t": "seconds from the first wave", "cells": "state cells the model holds", "deployment": ""},
                    title="The model's own gauge (asr_state_cells) as sessions vanish without END")
    marks = result.tables["marks"]
    for mark in marks.drop_duplicates("label").itertuples():
        gauge.add_vline(x=mark.t, line_dash="dot", line_color="#888", annotation_text=mark.label,
                        annotation_position="top left")
    tally = result.tables["tally"].melt(id_vars="deployment", value_vars=["abandoned", "reaped_logged", "cells_added", "evicted"],
                                        var_name="measure", value_name="count")
    tally["measure"] = tally["measure"].map({"abandoned": "sessions that vanished", "reaped_logged": "reaper force-ends in the log",
                                             "cells_added": "cells the model still holds for them",
                                             "evicted": "cells the model evicted"})
    bars = px.bar(tally.dropna(), x="measure", y="count", color="deployment", barmode="group", text="count",
                  labels={"measure": "", "count": "", "deployment": ""},
                  title="Triton freed every slot; only the model's own eviction freed its state")
    return [("The model's gauge", plots.layout(gauge, 380)), ("Tally", plots.layout(bars))]
