"""Forgot READY: a slot-keyed direct model that processes the scheduler's padding rows."""
from __future__ import annotations

from dataclasses import replace

import pandas as pd

from app.lab.deployment import presets
from app.lab.exercises.common import readings
from app.lab.exercises.common.base import Exercise, ExerciseResult, Finding, Steps
from app.lab.traffic import driver

PRESET = "forgot_ready"
# Six staggered talkers, 16 chunks each: enough padding rows to hit a session on most runs.
TRAFFIC = presets.Traffic(sessions=6, length=16, staggered=True)

EXERCISE = Exercise(
    name="forgot_ready",
    options=("intact", "garbage", "refused"),
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
    steps("ignored", sessions=TRAFFIC.sessions)
    _, broken = presets.run_preset(server, deployer, PRESET, owner="ex-forgot-ready", traffic=TRAFFIC)
    steps("deploying")
    fixed_model = deployer.apply(replace(preset.settings, honour_ready=True), owner="ex-ready-honoured").model
    steps("honoured")
    fixed = driver.run(server, TRAFFIC.scenario(fixed_model))
    steps("measuring")

    columns = ["session", "verdict", "read_state_of", "first_wrong", "wrong_symbols", "detail_code", "expected_text", "received_text"]
    sessions = pd.concat(
        [broken.sessions[columns].assign(run="ready_ignored"), fixed.sessions[columns].assign(run="ready_honoured")],
        ignore_index=True,
    )
    sessions["read_state_of"] = sessions["read_state_of"].fillna("").astype(str).replace("nan", "")
    from_padding = broken.sessions[broken.sessions["read_state_of"].astype(str) == "padding"]
    numbers = {
        "ignored_verdicts": readings.verdict_counts(broken),
        "ignored_sessions_corrupted": int((broken.sessions["verdict"] != "intact").sum()),
        "ignored_sessions_read_padding": len(from_padding),
        "ignored_wrong_symbols": int(broken.sessions["wrong_symbols"].sum()),
        "padding_rows_run": _padding_rows(broken),
        "requests": int(broken.server.get("inference_count", len(broken.requests))),
        "honoured_intact": bool(fixed.all_intact),
        "honoured_padding_rows_run": _padding_rows(fixed),
    }
    outcome = _outcome(broken)
    batch_sizes = broken.server.get("batch_sizes")
    findings = [
        Finding("ignored", {"verdicts": numbers["ignored_verdicts"], "padding": len(from_padding)}),
        Finding("padding_rows", {"padding": numbers["padding_rows_run"], "requests": numbers["requests"],
                                 "batch_sizes": str(batch_sizes)}),
        *[Finding("session_padding", {"who": int(r.session), "verdict": r.verdict}) for r in from_padding.itertuples()],
        Finding("honoured_intact", {"skipped": numbers["honoured_padding_rows_run"]}) if fixed.all_intact
        else Finding("honoured_verdicts", {"verdicts": readings.verdict_counts(fixed), "skipped": numbers["honoured_padding_rows_run"]}),
    ]
    explanation = [
        Finding("direct_width"),
        Finding("padding_request"),
        Finding("this_run", {"padding": numbers["padding_rows_run"]}),
        Finding("folded"),
        Finding("varies"),
        Finding("fixed_intact") if fixed.all_intact else Finding("fixed_verdicts", {"verdicts": readings.verdict_counts(fixed)}),
        Finding("rule"),
    ]
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

