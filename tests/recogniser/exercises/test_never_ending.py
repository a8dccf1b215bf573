"""Idle timeout: the judge on hand-made tables, one test per outcome; then the real server, run once:
slow clients reaped, dead clients hold slots, the model cleans up."""
from __future__ import annotations

import pandas as pd
import pytest

from app.exercise_kit import ExerciseResult, Finding, Measured
from app.i18n import languages, words
from app.lab.observation import START_REFUSAL
from app.recogniser.exercises.never_ending import engine as never_ending
from app.registry import exercise_words as text
from tests.exercises.renderings import TRANSLATED, untranslated, untranslated_figures
from tests.lab.idle_gaps import assert_intact_unless_idle_too_long, largest_gaps_s
from tests.server_calls import ask

REFUSAL = "inference request for sequence 7 to model 'm' must specify the START flag on the first request of the sequence"
KEY = (200, 400)  # the question's cell: short timeout, think time above it


def _cell(timeout, think, verdict="intact", refused=False, answered=5, message=""):
    return {"timeout_ms": timeout, "think_ms": think, "verdict": verdict, "start_refused": refused, "chunks_answered": answered,
            "chunks": 5, "model_requests": answered, "message": message}


def _tables(key: dict | None = None, waiter_verdict: str = "intact", after_pause_error: str = "") -> dict:
    """Hand-made measurements: the 2 x 2 grid of slow-client cells (all intact unless `key` replaces the
    question's cell), the dead client's waiter blocked 550 ms at 600 ms and 150 ms at 200 ms, and the
    paused session (tag 11) reading its own state before the pause and a fresh cell after it."""
    grid = [key if key and (t, th) == KEY else _cell(t, th) for t in never_ending.TIMEOUTS_MS for th in never_ending.THINKS_MS]
    dead = [{"timeout_ms": 200, "waiter_arrived_after_silence_ms": 20.0, "waiter_blocked_ms": 150.0, "waiter_verdict": "intact"},
            {"timeout_ms": 600, "waiter_arrived_after_silence_ms": 20.0, "waiter_blocked_ms": 550.0, "waiter_verdict": waiter_verdict}]
    owners, states = [0, 11, 11, 0, 11], [0, 3, 4, 0, 2]
    chunks = [{"chunk": k, "t_send": 0.04 * k + (1.0 if k >= 3 else 0.0), "state_in": s, "state_owner": o, "symbol": 5,
               "expected": 5 if k != 3 else 6, "error": after_pause_error if k == 3 else ""}
              for k, (o, s) in enumerate(zip(owners, states, strict=True))]
    sessions = [{"session": 0, "tag": 11, "verdict": "lost"}, {"session": 1, "tag": 12, "verdict": "intact"}]
    return {"grid": pd.DataFrame(grid), "dead_client": pd.DataFrame(dead), "evict_chunks": pd.DataFrame(chunks),
            "evict_sessions": pd.DataFrame(sessions)}


REAPED = _cell(*KEY, verdict="error", refused=True, answered=1, message=REFUSAL)


def test_judge_reaped_when_the_next_chunk_is_refused_for_lacking_start():
    judged = never_ending.judge(_tables(REAPED, waiter_verdict="error"))
    n = judged.numbers
    assert judged.outcome == "reaped"
    assert (n["slow_reaped_at_short_timeout"], n["slow_chunks_answered_before_reap"], n["model_requests_for_reaped_session"]) == (True, 1, 1)
    assert (n["cells_reaped"], n["slow_intact_at_long_timeout"]) == (1, True)
    assert (n["dead_blocked_ms_long_timeout"], n["dead_blocked_ms_short_timeout"]) == (550.0, 150.0)
    assert (n["evict_after_pause_state_owner"], n["evict_after_pause_state_in"], n["evict_after_pause_error"]) == (0, 0, None)
    assert n["evict_before_pause_state_owner_is_own"] and n["evict_verdict"] == {"lost": 1}
    grid = [(f.code, f.values["timeout"], f.values["think"]) for f in judged.findings[:4]]
    assert grid == [("grid_verdict", 200, 100), ("grid_reaped", 200, 400), ("grid_verdict", 600, 100), ("grid_verdict", 600, 400)]
    assert judged.findings[1].values["answered"] == 1
    assert judged.findings[4] == Finding("refusal", {"message": REFUSAL})
    assert judged.findings[6] == Finding("dead_blocked", {"long": 600, "long_wait": 550.0, "short": 200, "short_wait": 150.0})
    assert judged.findings[7].code == "evict_accepted" and judged.findings[7].values["owner"] == 0
    assert judged.findings[-1] == Finding("waiter_reaped", {"who": 1})
    assert list(judged.tables["grid"]["reaped"]) == [False, True, False, False]
    assert judged.explanation[6] == Finding("model_cleans", {"evict": never_ending.EVICT_S, "owner": 0})


def test_judge_fresh_when_the_chunk_is_answered_from_a_reset_state():
    judged = never_ending.judge(_tables(_cell(*KEY, verdict="lost")))
    assert judged.outcome == "fresh"
    assert judged.numbers["cells_reaped"] == 0 and not judged.numbers["slow_reaped_at_short_timeout"]
    assert judged.findings[1] == Finding("grid_verdict", {"timeout": 200, "think": 400, "verdict": "lost"})
    assert judged.findings[4] == Finding("no_refusal")
    assert "waiter_reaped" not in [f.code for f in judged.findings]


def test_judge_served_when_the_slow_client_is_intact():
    judged = never_ending.judge(_tables(_cell(*KEY)))
    assert judged.outcome == "served"
    assert judged.numbers["slow_chunks_answered_before_reap"] == 5


def test_judge_waits_for_anything_else_even_an_error_that_is_not_a_reap():
    # Refused, but not for a missing START: not the reaper's doing, so not "reaped".
    judged = never_ending.judge(_tables(_cell(*KEY, verdict="error", answered=2, message="model busy")))
    assert judged.outcome == "waits"
    assert judged.numbers["cells_reaped"] == 0
    assert judged.findings[4] == Finding("refusal", {"message": "model busy"})


def test_judge_reports_a_refused_chunk_after_the_pause():
    judged = never_ending.judge(_tables(REAPED, after_pause_error="sequence evicted"))
    assert judged.numbers["evict_after_pause_error"] == "sequence evicted"
    assert judged.findings[7].code == "evict_refused" and judged.findings[7].values["message"] == "sequence evicted"


@pytest.mark.parametrize("lang", TRANSLATED)
def test_judged_findings_and_figures_render_translated(lang):
    """Every template the judge can pick, on the hand-made tables, in every translated language."""
    reaped = never_ending.judge(_tables(REAPED, waiter_verdict="error", after_pause_error="sequence evicted"))
    fresh = never_ending.judge(_tables(_cell(*KEY, verdict="lost")))
    assert not untranslated("never_ending", reaped.findings + reaped.explanation + fresh.findings, lang)
    result = ExerciseResult.of(never_ending.EXERCISE, Measured(tables=_tables(REAPED)), reaped)
    assert not untranslated_figures(result, lang)


@pytest.fixture(scope="module")
def result(exercise_result):
    """One real run. Why what these tests pin is certain (Triton stamps a sequence's idle clock
    at each request's arrival and its reaper wakes at the earliest expiry: sequence_batch_scheduler.cc,
    r24.10, Enqueue and ReaperThread; jitter is 0 in every scenario here):
    - `reaped`: at timeout 200 ms a client that thinks 400 ms after each reply is idle twice the
      timeout, so its sequence is force-ended before its second chunk, which is refused for lacking
      START; the reaper's null request never reaches the model, so the model ran only what was answered.
    - intact at 600 ms: 100 and 400 ms of thinking stay under 600 ms, the latter by 200 ms less a round
      trip, which a loaded machine can use up: that test reads the gaps the run had.
    - the dead client: 1 slot; the waiter arrives 300 ms after the dead one's START. At 600 ms the
      slot stays held until the reaper frees it, about 300 ms after the waiter arrived; at 200 ms it
      is free before the waiter arrives.
    - the model's eviction: session 1 sends 20 chunks 40 ms apart (>= 760 ms), so it makes the model
      execute (which evicts at the end of execute) more than EVICT_S after session 0's third chunk and
      before session 0's fourth, sent after a 1 s pause; 1 s is far below Triton's 5 s timeout, so
      Triton accepts the chunk and the model answers it from a fresh cell (owner 0, `lost`)."""
    return exercise_result("never_ending")


def test_slow_client_is_reaped_below_its_think_time(result):
    grid = result.tables["grid"].set_index(["timeout_ms", "think_ms"])
    reaped = grid.loc[(min(never_ending.TIMEOUTS_MS), max(never_ending.THINKS_MS))]
    assert result.outcome == "reaped"
    assert reaped["verdict"] == "error"
    assert START_REFUSAL in reaped["message"]
    assert reaped["chunks_answered"] < reaped["chunks"]


def test_reaped_session_is_reported_as_error_with_the_servers_message(result):
    key = f"slow_t{min(never_ending.TIMEOUTS_MS)}_think{max(never_ending.THINKS_MS)}"
    run = result.runs[key]
    session = run.sessions.iloc[0]
    assert session["verdict"] == "error"
    full = "must specify the START flag on the first request of the sequence"
    assert session["detail_code"] == "refused" and full in session["detail_values"]["error"]
    assert any(full in e for e in run.requests["error"])
    # The finding quotes Triton's own refusal, verbatim, in every language.
    refusal = next(f for f in result.findings if f.code == "refusal")
    assert full in refusal.values["message"]
    for lang in languages():
        assert full in text.finding("never_ending", refusal, words(lang))


def test_the_reaper_sends_the_model_nothing(result):
    # The model ran exactly the chunks that were answered: the reap itself reached it as nothing.
    assert result.numbers["model_requests_for_reaped_session"] == result.numbers["slow_chunks_answered_before_reap"]


def test_slow_client_survives_a_timeout_above_its_think_time(result):
    # Certain only while each gap between its requests stays under the timeout: a loaded runner can
    # stretch a reply past the 200 ms margin of the 400 ms think (tests/lab/idle_gaps.py).
    grid = result.tables["grid"].set_index(["timeout_ms", "think_ms"])
    timeout = max(never_ending.TIMEOUTS_MS)
    for think in never_ending.THINKS_MS:
        (gap_s,) = largest_gaps_s(result.runs[f"slow_t{timeout}_think{think}"].requests)  # its one session
        assert_intact_unless_idle_too_long(grid.loc[(timeout, think), "verdict"], gap_s, timeout / 1000, think)


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


def test_every_finding_renders_in_every_language(result):
    for lang in TRANSLATED:
        assert not untranslated("never_ending", result.findings + result.explanation, lang)
        assert not untranslated_figures(result, lang)
    assert set(result.numbers) == set(text.module("never_ending").NUMBERS)
    assert set(never_ending.EXERCISE.options) == set(text.module("never_ending").OPTIONS)


def test_eviction_model_has_its_own_name_and_parameter(lab_server, result):
    assert result.log is not None and any(e.values.get("model") == never_ending.EVICT_MODEL for e in result.log.entries)
    # The run may have been another pytest-xdist worker's, on its own server: the exercise's own
    # loader leaves the model as it is where that run loaded it, and loads it here otherwise.
    name = never_ending.load_evicting_model(lab_server)
    config = ask(lab_server, "get_model_config", name)
    assert name == never_ending.EVICT_MODEL
    assert config["parameters"]["idle_evict_s"]["string_value"] == str(never_ending.EVICT_S)
    assert config["parameters"]["state_key"]["string_value"] == "session"


def hand_made_tables() -> dict:
    """This exercise's judge tables made by hand, for its figures and their summaries
    (tests/recogniser/exercises/test_exercise_chart_summaries.py)."""
    return _tables(REAPED, waiter_verdict="error")
