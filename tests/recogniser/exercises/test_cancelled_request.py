"""Cancelled and timed-out requests: what giving up on one chunk does to a sequence.

The judge's outcomes on hand-made request tables first, then one real run on the server."""
from __future__ import annotations

import pandas as pd
import pytest

from app.exercise_kit import Finding
from app.i18n import languages, words
from app.lab.observation import START_REFUSAL, LogCode
from app.lab.scenario.alphabet import to_symbols
from app.recogniser.exercises.cancelled_request import engine as ex
from app.registry import exercise_figures as charts
from app.registry import exercise_words as text
from tests.exercises.renderings import assert_translated

SYMBOLS = to_symbols(ex.TEXT)
DEADLINE = "Deadline Exceeded"
HTTP_TIMEOUT = "timed out"
CORRIDS = {"grpc_carry_on": "11", "grpc_retry": "12", "http_retry": "13", "grpc_restart": "14", "grpc_long_timeout": "16"}


def _no_start(corrid: str) -> str:
    return (f"inference request for sequence {corrid} to model '{ex.MODEL}' must specify the START flag "
            "on the first request of the sequence")


def _chunks(next_chunk: dict, retry: dict, http_state_in: int, restart_slot: int = 1) -> pd.DataFrame:
    """Hand-made requests of the five clients, as measure() sends them: `next_chunk` and `retry` are
    what came back for the chunk after the timed-out one and for the retry of it ({error, symbol}),
    `http_state_in` is the STATE_IN the HTTP retry read. Chunks before the give-up run on slot 1."""
    rows = []

    def send(run, chunk, *, error="", symbol=None, state_in=None, slot=1, latency_ms=40.0, corrid=None):
        right = {"symbol": SYMBOLS[chunk], "state_in": SYMBOLS[chunk - 1] if chunk else 0, "slot": slot}
        replied = {"symbol": -1, "state_in": -1, "slot": -1} if error else {  # the driver's record of an error
            k: given if given is not None else right[k] for k, given in (("symbol", symbol), ("state_in", state_in), ("slot", slot))}
        rows.append({"run": run, "step": sum(r["run"] == run for r in rows) + 1, "chunk": chunk, "corrid": corrid or CORRIDS[run],
                     "expected": SYMBOLS[chunk], "error": error, "latency_ms": latency_ms, **replied})

    def give_up(run, error=DEADLINE):
        send(run, 0)
        send(run, 1)
        send(run, ex.GIVE_UP_AT, error=error, latency_ms=301.0)

    give_up("grpc_carry_on")
    send("grpc_carry_on", ex.GIVE_UP_AT + 1, **next_chunk)
    give_up("grpc_retry")
    send("grpc_retry", ex.GIVE_UP_AT, **retry)
    give_up("http_retry", error=HTTP_TIMEOUT)
    applied_twice = http_state_in == SYMBOLS[ex.GIVE_UP_AT]
    send("http_retry", ex.GIVE_UP_AT, state_in=http_state_in, symbol=SYMBOLS[0] if applied_twice else None)
    for k in range(ex.GIVE_UP_AT + 1, len(SYMBOLS)):
        send("http_retry", k, symbol=SYMBOLS[0] if applied_twice else None)
    give_up("grpc_restart")
    for k in range(len(SYMBOLS)):
        send("grpc_restart", k, slot=restart_slot, corrid="15")
    for k in range(len(SYMBOLS)):
        send("grpc_long_timeout", k)
    return pd.DataFrame(rows)


def _tables(next_chunk: dict, retry: dict | None = None, http_state_in: int = SYMBOLS[ex.GIVE_UP_AT], restart_slot: int = 1,
            released=("11", "12", "14"), log_read: bool = True) -> dict:
    retry = retry if retry is not None else {"error": _no_start("12")}
    log = pd.DataFrame([{"code": LogCode.CANCELLED_RELEASED.value, "corrid": c, "line": f"Releasing canceled sequence CORRID {c}"}
                        for c in released], columns=["code", "corrid", "line"])
    return {"chunks": _chunks(next_chunk, retry, http_state_in, restart_slot), "server_log": log,
            "log_verbose": pd.DataFrame({"raised": [log_read]})}


def test_judge_refused_when_the_next_chunk_lacks_start():
    judged = ex.judge(_tables({"error": _no_start("11")}))
    assert judged.outcome == "refused"
    n = judged.numbers
    assert (n["grpc_timeout_error"], n["grpc_timeout_after_s"], n["next_chunk_outcome"]) == (DEADLINE, 0.3, "refused_no_start")
    assert n["next_chunk_error"] == _no_start("11") and n["retry_outcome"] == "refused_no_start"
    # The HTTP retry read the timed-out chunk's own symbol: it had run, and the retry and both chunks after it came out wrong.
    assert (n["http_retry_state_in"], n["http_retry_should_read"], n["http_timed_out_chunk_was_applied"]) == (SYMBOLS[2], SYMBOLS[1], True)
    assert n["http_wrong_symbols_after_retry"] == 3
    assert (n["restart_slot"], n["cancelled_sequence_slot"], n["restart_took_the_freed_slot"]) == (1, 1, True)
    assert (n["restart_symbols_right"], n["restart_chunks"], n["long_timeout_symbols_right"], n["long_timeout_chunks"]) == (5, 5, 5, 5)
    assert (n["log_cancelled_sequences_released"], n["log_release_for_grpc_give_ups"], n["log_release_for_http_give_up"]) == (3, True, False)
    assert [f.code for f in judged.findings] == [
        "grpc_timeout", "next_refused_no_start", "retry_refused_no_start", "http_applied_twice", "restart", "long_timeout", "log_releases"]
    assert judged.findings[0] == Finding("grpc_timeout", {"timeout": 0.3, "chunk": 3, "after": 0.3, "error": DEADLINE})
    assert judged.findings[1].values == {"chunk": 4, "later": ex.AFTER_GIVING_UP_S, "error": _no_start("11")}
    assert judged.findings[-1].values == {"released": 3, "grpc": True, "http": False}
    assert [f.code for f in judged.explanation] == ["why_deadline", "why_release", "why_http", "why_running", "why_correct_client"]
    chunks = judged.tables["chunks"]
    assert chunks.loc[chunks["run"] == "grpc_carry_on", "outcome"].tolist() == ["right", "right", "gave_up", "refused_no_start"]


def test_judge_served_when_the_next_chunk_comes_back_right():
    judged = ex.judge(_tables({}, retry={}, http_state_in=SYMBOLS[1]))
    assert judged.outcome == "served"
    assert judged.numbers["next_chunk_outcome"] == judged.numbers["retry_outcome"] == "right"
    assert [f.code for f in judged.findings[1:4]] == ["next_right", "retry_right", "http_retry"]
    assert not judged.numbers["http_timed_out_chunk_was_applied"] and judged.numbers["http_wrong_symbols_after_retry"] == 0
    assert judged.findings[3].values["state_in"] == judged.findings[3].values["should_read"] == SYMBOLS[1]


def test_judge_skipped_when_the_next_chunk_is_served_a_wrong_symbol():
    judged = ex.judge(_tables({"symbol": SYMBOLS[0]}, retry={"symbol": SYMBOLS[0]}))
    assert judged.outcome == "skipped"
    assert judged.numbers["next_chunk_outcome"] == judged.numbers["retry_outcome"] == "wrong"
    assert [f.code for f in judged.findings[1:3]] == ["next_wrong", "retry_wrong"]


@pytest.mark.parametrize(("error", "came_back"), [
    (DEADLINE, "gave_up"), ("Locally cancelled by application!", "cancelled"), ("Socket closed", "error")])
def test_judge_waits_when_the_next_chunk_is_neither_served_nor_refused(error, came_back):
    judged = ex.judge(_tables({"error": error}, retry={"error": error}))
    assert judged.outcome == "waits"
    assert judged.numbers["next_chunk_outcome"] == judged.numbers["retry_outcome"] == came_back
    assert (judged.findings[1], judged.findings[2]) == (
        Finding(f"next_{came_back}", {"chunk": 4, "later": ex.AFTER_GIVING_UP_S, "error": error}), Finding(f"retry_{came_back}", {"chunk": 3}))


def test_judge_without_the_servers_log_says_so_and_counts_no_release():
    judged = ex.judge(_tables({"error": _no_start("11")}, released=(), log_read=False, restart_slot=0))
    assert judged.outcome == "refused"
    assert judged.findings[-1] == Finding("log_unavailable")
    assert (judged.numbers["log_cancelled_sequences_released"], judged.numbers["log_release_for_grpc_give_ups"]) == (0, False)
    assert (judged.numbers["restart_slot"], judged.numbers["restart_took_the_freed_slot"]) == (0, False)


@pytest.fixture(scope="module")
def result(exercise_result):
    """One real run. Why what these tests pin is certain: a gate, not timing. The model waits for
    both of its 2 slots (minimum_slot_utilization 1.0) up to max_queue_delay 0.6 s, and every client
    is a lone session, so each chunk is queued 0.6 s before it runs (measure() runs the clients one
    after another under run_queue.hold on a model of its own):
    - a 0.3 s client timeout always runs out while the chunk is queued; gRPC cancels it on the server,
      which releases the sequence when it looks at the queue (at 0.6 s), before the next chunk comes
      AFTER_GIVING_UP_S (0.9 s) later, so that chunk and a retry are refused for lacking START;
    - HTTP cancels nothing: the chunk runs at 0.6 s, so a retry of it applies it twice;
    - the freed slot is the lowest free one, which the client's new sequence then takes;
    - a 1.8 s timeout is above the 0.6 s wait, so the patient session is intact."""
    return exercise_result("cancelled_request")


def test_grpc_timeout_ends_the_sequence_so_the_next_chunk_is_refused(result):
    n = result.numbers
    assert result.outcome == "refused"
    assert n["grpc_timeout_error"] == "Deadline Exceeded"
    assert START_REFUSAL in n["next_chunk_error"]
    assert n["retry_outcome"] == "refused_no_start"
    found = {f.code: f.values for f in result.findings}
    assert found["grpc_timeout"] == {"timeout": ex.SHORT_TIMEOUT_S, "chunk": ex.GIVE_UP_AT + 1,
                                     "after": n["grpc_timeout_after_s"], "error": "Deadline Exceeded"}
    assert found["next_refused_no_start"]["chunk"] == ex.GIVE_UP_AT + 2
    assert START_REFUSAL in found["next_refused_no_start"]["error"]
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


def test_every_finding_is_translated_and_the_words_quote_the_constants(result):
    assert_translated("cancelled_request", result.findings + result.explanation)
    assert DEADLINE in text.finding("cancelled_request", result.findings[0], words("en"))
    assert [f.code for f in result.explanation][:2] == ["why_deadline", "why_release"]
    scenario = text.module("cancelled_request").SCENARIO
    assert f"about {ex.QUEUE_WAIT_S:g} s" in scenario and f"client_timeout = {ex.SHORT_TIMEOUT_S:g} s" in scenario
    assert f"chunk {ex.GIVE_UP_AT + 1} times out" in scenario
    assert f"chunk {ex.GIVE_UP_AT + 2}," in text.module("cancelled_request").QUESTION
    for lang in languages():
        assert [caption for caption, _ in charts.figures(result, words(lang))] == [
            words(lang)("What each client got back"), words(lang)("Server log")]


def _as_measured(tables: dict) -> dict:
    """The judge's tables with the columns only its charts read, as its run writes them
    (app/recogniser/exercises/cancelled_request/engine.py: each chunk's START flag, timeout and note)."""
    chunks = tables["chunks"]
    tables["chunks"] = chunks.assign(start=chunks["chunk"] == 0, timeout_s=1.0, note="")
    return tables


def hand_made_tables() -> dict:
    """This exercise's judge tables made by hand, for its figures and their summaries
    (tests/recogniser/exercises/test_exercise_chart_summaries.py)."""
    return _as_measured(_tables({"error": _no_start("11")}))
