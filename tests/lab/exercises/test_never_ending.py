"""Idle timeout on the real server, run once: slow clients reaped, dead clients hold slots, the model cleans up."""
from __future__ import annotations

import pytest

from app.lab.exercises import never_ending


@pytest.fixture(scope="module")
def result(exercise_result):
    return exercise_result("never_ending")


def test_slow_client_is_reaped_below_its_think_time(result):
    grid = result.tables["grid"].set_index(["timeout_ms", "think_ms"])
    reaped = grid.loc[(min(never_ending.TIMEOUTS_MS), max(never_ending.THINKS_MS))]
    assert result.outcome == "reaped"
    assert reaped["verdict"] == "error"
    assert never_ending.START_REFUSAL in reaped["message"]
    assert reaped["chunks_answered"] < reaped["chunks"]


def test_reaped_session_is_reported_as_error_with_the_servers_message(result):
    key = f"slow_t{min(never_ending.TIMEOUTS_MS)}_think{max(never_ending.THINKS_MS)}"
    session = result.runs[key].sessions.iloc[0]
    assert session["verdict"] == "error"
    assert "must specify the START flag on the first request of the sequence" in session["detail"]


def test_the_reaper_sends_the_model_nothing(result):
    # The model ran exactly the chunks that were answered: the reap itself reached it as nothing.
    assert result.numbers["model_requests_for_reaped_session"] == result.numbers["slow_chunks_answered_before_reap"]


def test_slow_client_survives_a_timeout_above_its_think_time(result):
    grid = result.tables["grid"].set_index(["timeout_ms", "think_ms"])
    for think in never_ending.THINKS_MS:
        assert grid.loc[(max(never_ending.TIMEOUTS_MS), think), "verdict"] == "intact"


def test_dead_client_blocks_the_next_session_until_the_timeout(result):
    n = result.numbers
    assert n["dead_blocked_ms_long_timeout"] > 100
    assert n["dead_blocked_ms_long_timeout"] > n["dead_blocked_ms_short_timeout"]


def test_model_evicts_idle_cells_on_its_own(result):
    n = result.numbers
    assert n["evict_before_pause_state_owner_is_own"]
    assert n["evict_after_pause_error"] == "none"  # Triton still considered the sequence alive
    assert n["evict_after_pause_state_owner"] == 0 and n["evict_after_pause_state_in"] == 0
    assert n["evict_verdict"] == "lost"


def test_eviction_model_has_its_own_name_and_parameter(lab_server, result):
    config = lab_server.client().get_model_config(never_ending.EVICT_MODEL)
    assert config["parameters"]["idle_evict_s"]["string_value"] == str(never_ending.EVICT_S)
    assert config["parameters"]["state_key"]["string_value"] == "session"
