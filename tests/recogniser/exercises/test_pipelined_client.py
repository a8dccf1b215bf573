"""Pipelined clients: arrival order from Triton's trace, per transport.

The judge's outcomes on hand-made arrival orders first, then one real run on the server."""
from __future__ import annotations

import pandas as pd
import pytest

from app.exercise_kit import Finding
from app.i18n import languages, words
from app.recogniser.exercises.pipelined_client import engine as ex
from app.registry import exercise_figures as charts
from app.registry import exercise_words as text
from tests.exercises.renderings import assert_translated

CHUNKS = 3
REFUSAL = "inference request for sequence 7 to model 'asr_sequence_direct' must specify the START flag on the first request of the sequence"


def _tables(http: list[list[tuple[bool, str]]], traced: bool = True) -> dict:
    """Hand-made rounds: for pipelined HTTP, per round and session (overtaken?, verdict); the other ways of
    sending keep order and every session intact (one round of two sessions each). An overtaken session's
    chunk 1 reached the scheduler first; a refused one's chunk 1 carries Triton's refusal."""
    arrival, sessions, timing = [], [], []
    plan = [("http_async", http), *[(label, [[(False, "intact")] * 2]) for label, *_ in ex.RUNS[1:]]]
    for label, rounds in plan:
        for r, round_sessions in enumerate(rounds, start=1):
            timing.append({"run": label, "round": r, "wall_s": 1.234})
            for session, (overtaken, verdict) in enumerate(round_sessions):
                sessions.append({"session": session, "verdict": verdict, "run": label, "round": r})
                ranks = [1, 0, 2] if overtaken else [0, 1, 2]
                for chunk in range(CHUNKS):
                    arrival.append({"session": session, "chunk": chunk, "arrival_rank": ranks[chunk], "out_of_place": ranks[chunk] != chunk,
                                    "verdict": verdict, "error": REFUSAL if verdict == "error" and chunk == 1 else "",
                                    "traced": traced, "run": label, "round": r})
    return {"arrival": pd.DataFrame(arrival), "sessions": pd.DataFrame(sessions), "timing": pd.DataFrame(timing)}


def _http_finding(judged):
    return next(f for f in judged.findings if f.code == "run_http_async")


def test_judge_reordered_when_an_overtaken_session_broke():
    judged = ex.judge(_tables([[(True, "garbage"), (True, "intact"), (False, "intact")], [(False, "intact")] * 3]))
    assert judged.outcome == "reordered"
    n = judged.numbers
    assert (n["http_async_rounds_reordered"], n["http_async_rounds"], n["http_async_sessions_reordered"]) == (1, 2, 2)
    assert (n["http_async_sessions_broken"], n["http_async_reordered_sessions_broken"]) == (1, 1)
    assert n["traced"] and n["grpc_stream_sessions_reordered"] == n["serial_sessions_broken"] == 0
    assert _http_finding(judged) == Finding("run_http_async", {"in_flight": ex.IN_FLIGHT, "rounds_reordered": 1, "rounds": 2,
                                                               "sessions_reordered": 2, "broken": 1, "reordered_broken": 1})
    assert [f.code for f in judged.findings] == [f"run_{label}" for label, *_ in ex.RUNS]
    rounds = judged.tables["rounds"]
    assert rounds[["run", "round", "sessions_reordered", "chunks_out_of_place", "intact", "wrong", "refused", "wall_s"]].iloc[0].tolist() == [
        "http_async", 1, 2, 4, 2, 1, 0, 1.23]
    assert list(rounds["run"]) == ["http_async", "http_async", "grpc_async", "grpc_stream", "serial"]


def test_judge_fixed_by_batcher_when_overtaken_sessions_stayed_intact():
    judged = ex.judge(_tables([[(True, "intact"), (False, "intact")]]))
    assert judged.outcome == "fixed_by_batcher"
    assert (judged.numbers["http_async_sessions_reordered"], judged.numbers["http_async_reordered_sessions_broken"]) == (1, 0)


def test_judge_in_order_when_no_chunk_was_overtaken_and_all_are_intact():
    judged = ex.judge(_tables([[(False, "intact")] * 2] * 3))
    assert judged.outcome == "in_order"
    assert (judged.numbers["http_async_rounds"], judged.numbers["http_async_rounds_reordered"], judged.numbers["http_async_sessions_broken"]) == (3, 0, 0)


def test_judge_all_refused_when_sessions_broke_without_being_overtaken():
    judged = ex.judge(_tables([[(False, "error"), (False, "error")]]))
    assert judged.outcome == "all_refused"
    assert (judged.numbers["http_async_sessions_reordered"], judged.numbers["http_async_sessions_broken"]) == (0, 2)
    assert judged.findings[-1] == Finding("refusal", {"message": REFUSAL})  # Triton's words, the first refusal
    assert judged.tables["rounds"].iloc[0]["refused"] == 2


def test_judge_says_when_the_order_is_the_clients_not_the_servers():
    judged = ex.judge(_tables([[(False, "intact")]], traced=False))
    assert not judged.numbers["traced"] and judged.findings[-1] == Finding("untraced")


@pytest.fixture(scope="module")
def result(exercise_result):
    """One real run, as a learner's. Not certain: `reordered`. Whether pipelined HTTP overtakes a
    chunk in one of its ROUNDS rounds is a race between connections (measured 20 of 20 single runs
    with 10 rounds, 17 of 20 with 5; benchmarks/outcome_reliability.py), and no mechanism rules out
    another outcome: an overtaken session usually breaks (no swap of two or three neighbouring chunks
    of these texts keeps every letter of the running sum mod 27 right, but some of four do), and
    Triton stamps QUEUE_START before it takes the scheduler's lock (sequence_batch_scheduler.cc at
    r24.10, Enqueue), so two chunks sent back to back can be stamped in one order and queued in the
    other. So the tests pin the taught case's evidence when it showed, the trace's when it did not.
    Certain whatever the timing: a serial client sends after each reply and a gRPC stream delivers a
    session's requests in order, so neither reorders; the client sends in chunk order; the server
    saw each chunk once."""
    return exercise_result("pipelined_client")


def test_arrival_order_comes_from_the_servers_trace(result):
    assert result.numbers["traced"]
    arrival = result.tables["arrival"]
    # Every session's chunks were each seen once by the server, ranked within the session.
    for (_, _, _), mine in arrival.groupby(["run", "round", "session"]):
        assert sorted(mine["arrival_rank"]) == list(range(len(mine)))


def test_pipelined_http_reorders_and_the_reordered_sessions_break(result):
    n = result.numbers
    # Whether a round overtakes is a race (the fixture): pinned is what holds either way.
    assert result.outcome in ex.EXERCISE.options and n["http_async_rounds"] == ex.ROUNDS
    overtaken = result.outcome in ("reordered", "fixed_by_batcher")
    assert (n["http_async_sessions_reordered"] > 0) == (n["http_async_rounds_reordered"] > 0) == overtaken
    if result.outcome == "reordered":
        assert n["http_async_reordered_sessions_broken"] > 0
        assert n["http_async_rounds_reordered"] <= n["http_async_rounds"]
    http = next(f for f in result.findings if f.code == "run_http_async").values
    assert http["in_flight"] == ex.IN_FLIGHT and http["rounds"] == ex.ROUNDS
    assert (http["rounds_reordered"], http["sessions_reordered"], http["reordered_broken"]) == (
        n["http_async_rounds_reordered"], n["http_async_sessions_reordered"], n["http_async_reordered_sessions_broken"])


def test_a_stream_per_session_keeps_order_and_every_transcript(result):
    rounds = result.tables["rounds"]
    stream = rounds[rounds["run"] == "grpc_stream"]
    assert len(stream) >= 1
    assert (stream["sessions_reordered"] == 0).all() and (stream["intact"] == ex.SESSIONS).all()


def test_serial_clients_stay_in_order(result):
    assert result.numbers["serial_sessions_reordered"] == 0 and result.numbers["serial_sessions_broken"] == 0
    serial = next(f for f in result.findings if f.code == "run_serial").values
    assert serial["sessions_reordered"] == serial["broken"] == 0


def test_findings_are_one_per_transport_then_the_refusal_as_triton_wrote_it(result):
    codes = [f.code for f in result.findings]
    assert codes[:4] == [f"run_{label}" for label, *_ in ex.RUNS]
    assert set(codes[4:]) <= {"refusal"}  # traced: no "untraced" finding
    for f in result.findings[4:]:
        assert f.values["message"] in set(result.tables["arrival"]["error"])
    assert [f.code for f in result.explanation] == ["why_no_numbers", "why_unary", "why_overtake", "why_stream"]


def test_every_finding_is_translated_and_the_words_quote_the_constants(result):
    assert_translated("pipelined_client", result.findings + result.explanation)
    scenario = text.module("pipelined_client").SCENARIO
    assert scenario.startswith(f"{ex.SESSIONS} streaming sessions") and f"up to {ex.IN_FLIGHT} chunks" in scenario
    for lang in languages():
        _ = words(lang)
        assert [caption for caption, _fig in charts.figures(result, _)] == [_("Reordering per round"), _("Sent vs arrival order"), _("Verdicts")]


def test_a_reordered_session_was_reordered_by_the_server_not_by_the_client(result):
    # The client sent chunk k before chunk k+1 every time: its send times are in chunk order.
    for label, run in result.runs.items():
        for _, mine in run.requests.groupby("session"):
            sent = mine.sort_values("chunk")["t_send"].tolist()
            assert sent == sorted(sent), label


def test_a_chunk_missing_from_the_trace_has_no_arrival_rank():
    """Seen after a server crash: the order is still drawn for the chunks the server did see."""
    import types

    import pandas as pd

    nan = float("nan")
    requests = pd.DataFrame({
        "session": [0, 0, 0], "chunk": [0, 1, 2], "t_send": [1.0, 2.0, 3.0], "error": [None, None, "connection closed."],
        "queue_start_ns": [200.0, 100.0, nan], "request_start_ns": [190.0, 90.0, nan],
    })
    sessions = pd.DataFrame({"session": [0], "verdict": ["error"]})
    order = ex.arrival_order(types.SimpleNamespace(requests=requests, sessions=sessions))
    assert order["arrival_rank"].tolist()[:2] == [1, 0]
    assert pd.isna(order["arrival_rank"].iloc[2])
    assert order["out_of_place"].tolist() == [True, True, False]


def hand_made_tables() -> dict:
    """This exercise's judge tables made by hand, for its figures and their summaries
    (tests/recogniser/exercises/test_exercise_chart_summaries.py)."""
    return _tables([[(True, "garbage"), (True, "intact"), (False, "intact")], [(False, "intact")] * 3])
