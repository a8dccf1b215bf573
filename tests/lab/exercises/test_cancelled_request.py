"""Cancelled and timed-out requests on the real server: what giving up on one chunk does to a sequence."""
from __future__ import annotations

import pytest

from app.charts import exercises as charts
from app.i18n import words
from app.lab.exercises import cancelled_request as ex
from app.lab.observation.server_log import LogCode
from app.text import exercises as text


@pytest.fixture(scope="module")
def result(exercise_result):
    return exercise_result("cancelled_request")


def test_grpc_timeout_ends_the_sequence_so_the_next_chunk_is_refused(result):
    n = result.numbers
    assert result.outcome == "refused"
    assert n["grpc_timeout_error"] == "Deadline Exceeded"
    assert ex.START_REFUSAL in n["next_chunk_error"]
    assert n["retry_outcome"] == "refused_no_start"
    found = {f.code: f.values for f in result.findings}
    assert found["grpc_timeout"] == {"timeout": ex.SHORT_TIMEOUT_S, "chunk": ex.GIVE_UP_AT + 1,
                                     "after": n["grpc_timeout_after_s"], "error": "Deadline Exceeded"}
    assert found["next_refused_no_start"]["chunk"] == ex.GIVE_UP_AT + 2
    assert ex.START_REFUSAL in found["next_refused_no_start"]["error"]
    assert "retry_refused_no_start" in found


def test_the_freed_slot_goes_to_the_clients_new_sequence(result):
    n = result.numbers
    assert n["restart_took_the_freed_slot"] and n["restart_slot"] == n["cancelled_sequence_slot"]
    assert n["restart_symbols_right"] == n["restart_chunks"] == len(ex.TEXT)


def test_an_http_timeout_leaves_the_chunk_running_and_a_retry_applies_it_twice(result):
    n = result.numbers
    assert n["http_timeout_error"]
    assert n["http_timed_out_chunk_was_applied"]
    assert n["http_retry_state_in"] != n["http_retry_should_read"]
    assert n["http_wrong_symbols_after_retry"] > 0
    applied = next(f for f in result.findings if f.code == "http_applied_twice").values
    assert (applied["state_in"], applied["should_read"], applied["wrong"]) == (
        n["http_retry_state_in"], n["http_retry_should_read"], n["http_wrong_symbols_after_retry"])


def test_a_timeout_above_the_worst_queue_wait_keeps_the_session_intact(result):
    assert result.numbers["long_timeout_symbols_right"] == result.numbers["long_timeout_chunks"] == len(ex.TEXT)


def test_the_server_log_shows_each_grpc_release_and_none_for_http(lab_server, result):
    if not lab_server.is_embedded:
        pytest.skip("an external server's log is not readable here")
    n = result.numbers
    assert n["log_release_for_grpc_give_ups"] and not n["log_release_for_http_give_up"]
    log = result.tables["server_log"]
    released = log[log["code"] == "cancelled_released"]
    assert all("Releasing canceled sequence CORRID" in line for line in released["line"])
    # The page's log panel carries the same lines.
    assert result.log is not None and result.log.available
    assert result.log.count(LogCode.CANCELLED_RELEASED) == n["log_cancelled_sequences_released"] >= 3
    logged = next(f for f in result.findings if f.code == "log_releases").values
    assert logged == {"released": n["log_cancelled_sequences_released"], "grpc": True, "http": False}


def test_every_finding_renders_in_both_languages_and_the_words_quote_the_constants(result):
    rendered = [text.finding("cancelled_request", f, words(lang)) for f in result.findings + result.explanation
                for lang in ("en", "zh")]
    assert all(rendered)
    assert "Deadline Exceeded" in text.finding("cancelled_request", result.findings[0], words("en"))
    assert [f.code for f in result.explanation][:2] == ["why_deadline", "why_release"]
    scenario = text.module("cancelled_request").SCENARIO
    assert f"about {ex.QUEUE_WAIT_S:g} s" in scenario and f"client_timeout = {ex.SHORT_TIMEOUT_S:g} s" in scenario
    assert f"chunk {ex.GIVE_UP_AT + 1} times out" in scenario
    assert f"chunk {ex.GIVE_UP_AT + 2}," in text.module("cancelled_request").QUESTION
    for lang in ("en", "zh"):
        assert charts.figures(result, words(lang))
