"""Forgot READY: a slot-keyed direct model that processes the scheduler's padding rows."""
from __future__ import annotations

from dataclasses import replace

import pandas as pd
import plotly.express as px
import plotly.graph_objects as go

from app.lab import driver, presets
from app.lab.exercises import measure, plots
from app.lab.exercises.base import Exercise, ExerciseResult, Option, Steps

PRESET = "forgot_ready"
# Six staggered talkers, 16 chunks each: enough padding rows to hit a session on most runs.
TRAFFIC = presets.Traffic(sessions=6, length=16, staggered=True)

EXERCISE = Exercise(
    name="forgot_ready",
    title="Forgot READY: padding rows folded into live sessions",
    scenario=(
        "The recogniser runs on the direct sequence batcher (2 instances x 4 slots), state kept per "
        "batch slot, which direct makes safe. But its execute() processes every row it is handed and "
        "never looks at the READY control input. Six clients stream at different paces (think times "
        "from 5 to 65 ms), so at any moment some slots hold a live session whose next chunk has not "
        "arrived yet."
    ),
    question="What happens to the sessions?",
    options=(
        Option("intact", "All intact: direct pins each session to its slot, so nothing else touches its state."),
        Option("garbage", "Some are corrupted: rows the scheduler fills with padding are processed and overwrite their state."),
        Option("refused", "Triton refuses requests that arrive while a batch is being formed."),
    ),
    correct="garbage",
)


def _outcome(run) -> str:
    verdicts = set(run.sessions["verdict"])
    if "error" in verdicts:
        return "refused"
    return "intact" if verdicts == {"intact"} else "garbage"


def _padding_rows(run) -> int:
    """Rows the model ran beyond the requests sent: direct's padding for idle or empty slots."""
    rows = sum(size * count for size, count in run.server.get("batch_sizes", {}).items())
    return max(0, rows - int(run.server.get("inference_count", 0)))


def run(server, deployer, progress=None) -> ExerciseResult:
    steps = Steps(progress, 4)
    preset = presets.get(PRESET)
    steps("Direct with honour_ready = false: six staggered sessions")
    _, broken = presets.run_preset(server, deployer, PRESET, owner="ex-forgot-ready", traffic=TRAFFIC)
    steps("Deploying the same with honour_ready = true")
    fixed_model = deployer.apply(replace(preset.settings, honour_ready=True), owner="ex-ready-honoured").model
    steps("The same sessions, READY honoured")
    fixed = driver.run(server, TRAFFIC.scenario(fixed_model))
    steps("Measuring")

    columns = ["session", "verdict", "read_state_of", "first_wrong", "wrong_symbols", "detail", "expected_text", "received_text"]
    sessions = pd.concat(
        [broken.sessions[columns].assign(run="READY ignored"), fixed.sessions[columns].assign(run="READY honoured")],
        ignore_index=True,
    )
    sessions["read_state_of"] = sessions["read_state_of"].fillna("").astype(str).replace("nan", "")
    from_padding = broken.sessions[broken.sessions["read_state_of"].astype(str) == "padding"]
    numbers = {
        "ignored_verdicts": ", ".join(f"{k} {v}" for k, v in measure.verdict_counts(broken).items()),
        "ignored_sessions_corrupted": int((broken.sessions["verdict"] != "intact").sum()),
        "ignored_sessions_read_padding": len(from_padding),
        "ignored_wrong_symbols": int(broken.sessions["wrong_symbols"].sum()),
        "padding_rows_run": _padding_rows(broken),
        "requests": int(broken.server.get("inference_count", len(broken.requests))),
        "honoured_intact": bool(fixed.all_intact),
        "honoured_padding_rows_run": _padding_rows(fixed),
    }
    outcome = _outcome(broken)
    findings = [
        f"READY ignored: {numbers['ignored_verdicts']}; {len(from_padding)} session(s) read state a padding row wrote.",
        f"the model ran {numbers['padding_rows_run']} padding rows beside {numbers['requests']} real requests "
        f"(batch sizes {broken.server.get('batch_sizes')}).",
        *[f"{measure.session_label(r.session)}: {r.detail}" for r in from_padding.itertuples()],
        f"READY honoured: {'all intact' if fixed.all_intact else measure.verdict_counts(fixed)}, with "
        f"{numbers['honoured_padding_rows_run']} padding rows skipped.",
    ]
    explanation = (
        "Direct gives each sequence a fixed slot, and every execution hands the model a batch as wide as the "
        "highest occupied slot. A slot whose session is alive but has not sent its next chunk yet, and any "
        "empty slot below the highest busy one, gets a padding request: READY = 0, CORRID = 0, and input data "
        f"that is not initialised. This run produced {numbers['padding_rows_run']} such rows. A model that ignores "
        "READY decodes that garbage and writes it into the slot's state, which belongs to a live session, so "
        "its next real chunk builds on a wrong letter (verdict 'garbage', STATE_OWNER = the padding marker). "
        "Which sessions are hit depends on who was thinking when others sent, so it varies from run to run. "
        "The same model honouring READY skipped the padding rows "
        f"and every session came back {'intact' if fixed.all_intact else str(measure.verdict_counts(fixed))}. "
        "Return a response for every row, but touch state only where READY is 1."
    )
    steps.finish()
    return ExerciseResult(
        EXERCISE,
        outcome,
        numbers,
        {"sessions": sessions},
        explanation,
        findings,
        {"ready_ignored": broken, "ready_honoured": fixed},
    )


def figures(result: ExerciseResult) -> list[tuple[str, go.Figure]]:
    """The exercise's charts, each drawn from one of the result's tables."""
    s = result.tables["sessions"].assign(who=lambda f: plots.sessions(f))
    fig = px.bar(s, x="who", y="wrong_symbols", color="verdict", facet_row="run", color_discrete_map=plots.VERDICT_COLOURS,
                 labels={"who": "", "wrong_symbols": "wrong symbols"}, title="Wrong symbols per session")
    return [("Sessions", plots.layout(fig, 420))]
