"""Cancelled and timed-out requests on the real server: what giving up on one chunk does to a sequence."""
from __future__ import annotations

import pytest

from app.lab.exercises import cancelled_request as ex
from app.lab.server_log import LogCode


@pytest.fixture(scope="module")
def result(exercise_result):
    return exercise_result("cancelled_request")


def test_grpc_timeout_ends_the_sequence_so_the_next_chunk_is_refused(result):
    n = result.numbers
    assert result.outcome == "refused"
    assert n["grpc_timeout_error"] == "Deadline Exceeded"
    assert ex.START_REFUSAL in n["next_chunk_error"]
    assert n["retry_outcome"] == "refused: no START"


def test_the_freed_slot_goes_to_the_clients_new_sequence(result):
    n = result.numbers
    assert n["restart_took_the_freed_slot"] and n["restart_slot"] == n["cancelled_sequence_slot"]
    assert n["restart_symbols_right"] == n["restart_chunks"] == len(ex.TEXT)


def test_an_http_timeout_leaves_the_chunk_running_and_a_retry_applies_it_twice(result):
    n = result.numbers
    assert n["http_timeout_error"] != "none"
    assert n["http_timed_out_chunk_was_applied"]
    assert n["http_retry_state_in"] != n["http_retry_should_read"]
    assert n["http_wrong_symbols_after_retry"] > 0


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
