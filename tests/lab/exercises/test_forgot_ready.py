"""Forgot READY on the real server: padding rows corrupt live sessions; honouring READY fixes it."""
from __future__ import annotations

import pytest


def _robust(result) -> bool:
    return result.outcome == "garbage" and result.numbers["honoured_intact"]


@pytest.fixture(scope="module")
def result(exercise_run):
    return exercise_run("forgot_ready", ok=_robust)


def test_ignoring_ready_folds_padding_into_live_sessions(result):
    n = result.numbers
    assert result.outcome == "garbage"
    assert n["ignored_sessions_read_padding"] >= 1
    sessions = result.tables["sessions"]
    broken = sessions[(sessions["run"] == "READY ignored") & (sessions["verdict"] == "garbage")]
    assert (broken["read_state_of"] == "padding").any()


def test_direct_runs_padding_rows(result):
    assert result.numbers["padding_rows_run"] > 0


def test_honouring_ready_keeps_every_session_intact(result):
    assert result.numbers["honoured_intact"]
    sessions = result.tables["sessions"]
    assert set(sessions[sessions["run"] == "READY honoured"]["verdict"]) == {"intact"}
