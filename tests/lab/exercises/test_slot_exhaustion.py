"""Slot exhaustion on the real server, run once: sessions beyond capacity wait in the backlog, no errors."""
from __future__ import annotations

import pytest

from app.lab.exercises import slot_exhaustion


@pytest.fixture(scope="module")
def result(exercise_result):
    return exercise_result("slot_exhaustion")


def test_sessions_beyond_capacity_wait_without_errors(result):
    n = result.numbers
    assert result.outcome == "wait"
    assert n["errors"] == 0
    # 5 sessions on 2 slots: at least the ones that found no free slot waited for one.
    assert n["direct_sessions_waited"] >= 1
    assert n["direct_max_wait_ms"] > slot_exhaustion.WAITED_MS
    sessions = result.tables["sessions"]
    assert set(sessions["verdict"]) == {"intact"}
    assert len(sessions) == 2 * slot_exhaustion.SESSIONS


def test_oldest_has_the_same_capacity_limit(result):
    assert result.numbers["oldest_sessions_waited"] >= 1
    assert result.numbers["oldest_max_wait_ms"] > slot_exhaustion.WAITED_MS


def test_slots_are_held_far_more_than_the_instance_computes(result):
    n = result.numbers
    assert n["direct_slots_held_pct"] > n["direct_instance_busy_pct"]


def test_sweep_wait_grows_with_sessions(result):
    sweep = result.tables["sweep"]
    assert set(sweep["sessions"]) == set(slot_exhaustion.SWEEP)
    for strategy, rows in sweep.groupby("strategy"):
        waits = rows.set_index("sessions")["max_wait_ms"]
        assert waits[max(slot_exhaustion.SWEEP)] > waits[min(slot_exhaustion.SWEEP)], strategy
        assert rows["intact"].all()


def test_result_is_reported_as_text_and_json(result):
    text = result.summary_table()
    assert "Slot exhaustion" in text and "direct_max_wait_ms" in text
    data = result.to_json()
    assert data["exercise"] == "slot_exhaustion" and data["outcome"] == "wait"
    assert {"sessions", "holding", "sweep"} <= set(data["tables"])
    assert set(data["runs"]) == {"direct", "oldest"}
