"""Forgot READY: a slot-keyed direct model that processes the scheduler's padding rows."""
from __future__ import annotations

from dataclasses import replace
from typing import TYPE_CHECKING

import pandas as pd

from app.exercise_kit import Exercise, ExerciseJudgement, Finding, Measured, Number, Steps, Tables, readings
from app.lab.records import Traffic
from app.recogniser.engine import driver, presets

if TYPE_CHECKING:
    from app.lab.deployment import Deployer
    from app.lab.progress import Progress
    from app.lab.server import LabServer

PRESET = "forgot_ready"
# Six talkers with spread think times, 16 chunks each: enough padding rows to hit a session on most runs.
TRAFFIC = Traffic(sessions=6, chunks=16, spread_think=True)

EXERCISE = Exercise(
    name="forgot_ready",
    options=("intact", "garbage", "refused"),
    correct="garbage",
)


SESSION_COLUMNS = ["session", "verdict", "read_state_of", "first_wrong", "wrong_symbols", "detail_code", "expected_text", "received_text"]
RUNS = ("ready_ignored", "ready_honoured")


def measure(server: LabServer, deployer: Deployer, progress: Progress | None = None) -> Measured:
    """The preset as shipped (READY ignored), then the same traffic with READY honoured."""
    steps = Steps(progress, 4)
    preset = presets.get(PRESET)
    steps("ignored", sessions=TRAFFIC.sessions)
    _, broken = presets.run_preset(server, deployer, PRESET, traffic=TRAFFIC)
    steps("deploying")
    fixed_model = deployer.apply(replace(preset.settings, honour_ready=True)).model
    steps("honoured")
    fixed = driver.run(server, TRAFFIC.scenario(fixed_model))
    steps("measuring")
    runs = {"ready_ignored": broken, "ready_honoured": fixed}
    sessions = pd.concat([run.sessions[SESSION_COLUMNS].assign(run=label) for label, run in runs.items()], ignore_index=True)
    sessions["read_state_of"] = sessions["read_state_of"].fillna("").astype(str).replace("nan", "")
    return Measured(tables={"sessions": sessions, "server": readings.server_counts(runs)}, runs=runs)


def _outcome(sessions: pd.DataFrame) -> str:
    verdicts = set(sessions["verdict"])
    if "error" in verdicts:
        return "refused"
    return "intact" if verdicts == {"intact"} else "garbage"


def _padding_rows(counts: pd.Series) -> int:
    """Rows the model ran beyond the requests sent: direct's padding for idle or empty slots."""
    return max(0, readings.rows_run(counts) - int(counts["inference_count"]))


def judge(tables: Tables) -> ExerciseJudgement:
    """From each run's sessions and the server's batch counts: did ignoring READY corrupt anyone?"""
    sessions = tables["sessions"]
    server = tables["server"].set_index("run")
    broken, fixed = (sessions[sessions["run"] == label] for label in RUNS)
    from_padding = broken[broken["read_state_of"] == "padding"]
    fixed_intact = bool((fixed["verdict"] == "intact").all())
    numbers: dict[str, Number] = {
        "ignored_verdicts": readings.verdict_tally(broken),
        "ignored_sessions_corrupted": int((broken["verdict"] != "intact").sum()),
        "ignored_sessions_read_padding": len(from_padding),
        "ignored_wrong_symbols": int(broken["wrong_symbols"].sum()),
        "padding_rows_run": _padding_rows(server.loc["ready_ignored"]),
        "requests": int(server.loc["ready_ignored", "inference_count"]),
        "honoured_intact": fixed_intact,
        "honoured_padding_rows_run": _padding_rows(server.loc["ready_honoured"]),
    }
    findings = [
        Finding("ignored", {"verdicts": numbers["ignored_verdicts"], "padding": len(from_padding)}),
        Finding("padding_rows", {"padding": numbers["padding_rows_run"], "requests": numbers["requests"],
                                 "batch_sizes": str(server.loc["ready_ignored", "batch_sizes"])}),
        *[Finding("session_padding", {"who": int(r.session), "verdict": r.verdict}) for r in from_padding.itertuples()],
        Finding("honoured_intact", {"skipped": numbers["honoured_padding_rows_run"]}) if fixed_intact
        else Finding("honoured_verdicts", {"verdicts": readings.verdict_tally(fixed), "skipped": numbers["honoured_padding_rows_run"]}),
    ]
    explanation = [
        Finding("direct_width"),
        Finding("padding_request"),
        Finding("this_run", {"padding": numbers["padding_rows_run"]}),
        Finding("folded"),
        Finding("varies"),
        Finding("fixed_intact") if fixed_intact else Finding("fixed_verdicts", {"verdicts": readings.verdict_tally(fixed)}),
        Finding("rule"),
    ]
    return ExerciseJudgement(outcome=_outcome(broken), numbers=numbers, findings=findings, explanation=explanation,
                     tables={"sessions": sessions})
