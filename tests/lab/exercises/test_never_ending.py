"""Idle timeout on the real server, run once: slow clients reaped, dead clients hold slots, the model cleans up."""
from __future__ import annotations

import pytest

from app.charts import exercises as charts
from app.i18n import words
from app.lab.exercises import never_ending
from app.text import exercises as text


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
    run = result.runs[key]
    session = run.sessions.iloc[0]
    assert session["verdict"] == "error"
    full = "must specify the START flag on the first request of the sequence"
    assert session["detail_code"] == "refused" and full in session["detail_values"]["error"]
    assert any(full in e for e in run.requests["error"])
    # The finding quotes Triton's own refusal, verbatim, in both languages.
    refusal = next(f for f in result.findings if f.code == "refusal")
    assert full in refusal.values["message"]
    for lang in ("en", "zh"):
        assert full in text.finding("never_ending", refusal, words(lang))


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
    assert n["evict_after_pause_error"] is None  # Triton still considered the sequence alive
    assert n["evict_after_pause_state_owner"] == 0 and n["evict_after_pause_state_in"] == 0
    assert n["evict_verdict"] == {"lost": 1}
    evict = next(f for f in result.findings if f.code.startswith("evict_"))
    assert evict.code == "evict_accepted"
    assert evict.values["owner"] == 0 and evict.values["state_in"] == 0 and evict.values["verdict"] == "lost"


def test_findings_carry_the_grid_and_the_blocking_times(result):
    n = result.numbers
    grid = [f for f in result.findings if f.code in ("grid_reaped", "grid_verdict")]
    assert len(grid) == len(never_ending.TIMEOUTS_MS) * len(never_ending.THINKS_MS)
    assert sum(f.code == "grid_reaped" for f in grid) == n["cells_reaped"] >= 1
    key = next(f for f in grid if (f.values["timeout"], f.values["think"]) == (min(never_ending.TIMEOUTS_MS), max(never_ending.THINKS_MS)))
    assert key.code == "grid_reaped" and key.values["answered"] == n["slow_chunks_answered_before_reap"]
    dead = next(f for f in result.findings if f.code == "dead_blocked")
    assert dead.values["long_wait"] == n["dead_blocked_ms_long_timeout"]
    assert dead.values["short_wait"] == n["dead_blocked_ms_short_timeout"]
    model = next(f for f in result.findings if f.code == "model_requests")
    assert model.values["requests"] == n["model_requests_for_reaped_session"]
    assert [f.code for f in result.explanation] == [
        "reaper", "cannot_tell", "slow_reaped", "dead_holds", "choose", "never_tells", "model_cleans", "keep_longer"]


def test_every_finding_renders_in_both_languages(result):
    rendered = [text.finding("never_ending", f, words(lang)) for f in result.findings + result.explanation for lang in ("en", "zh")]
    assert all(rendered)
    assert set(result.numbers) == set(text.module("never_ending").NUMBERS)
    assert set(never_ending.EXERCISE.options) == set(text.module("never_ending").OPTIONS)
    for lang in ("en", "zh"):
        assert all(fig.layout.title.text for _, fig in charts.figures(result, words(lang)))


def test_eviction_model_has_its_own_name_and_parameter(lab_server, result):
    config = lab_server.client().get_model_config(never_ending.EVICT_MODEL)
    assert config["parameters"]["idle_evict_s"]["string_value"] == str(never_ending.EVICT_S)
    assert config["parameters"]["state_key"]["string_value"] == "session"
