"""Forgot READY on the real server, run once: padding rows corrupt live sessions; honouring READY fixes it."""
from __future__ import annotations

import pytest

from app.lab import analysis, evidence


@pytest.fixture(scope="module")
def result(exercise_result):
    return exercise_result("forgot_ready")


def test_ignoring_ready_folds_padding_into_live_sessions(result):
    assert result.outcome == "garbage"
    broken = result.runs["ready_ignored"]
    # The model's own report: a session's first wrong chunk read state a padding row wrote.
    hit = evidence.broke_on_padding(broken)
    assert hit, broken.sessions[["session", "verdict", "detail"]].to_dict("records")
    assert result.numbers["ignored_sessions_read_padding"] == len(hit)
    sessions = broken.sessions.set_index("session")
    assert set(sessions.loc[hit, "read_state_of"]) == {"padding"}
    # Direct still pins each session to its slot: no other session's state is ever read.
    assert not evidence.broke_on_another_session(broken) and not evidence.strangers_read(broken)


def test_direct_runs_padding_rows(result):
    # Two independent counts: the server's batch statistics and this run's trace.
    assert result.numbers["padding_rows_run"] > 0
    assert len(analysis.padding_rows(result.runs["ready_ignored"].requests)) > 0


def test_honouring_ready_keeps_every_session_intact(result):
    fixed = result.runs["ready_honoured"]
    assert list(fixed.sessions["received_text"]) == [p.text for p in fixed.plans]
    assert evidence.read_only_own_state(fixed)
    assert result.numbers["honoured_intact"]
