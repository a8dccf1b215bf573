"""Pipelined clients on the real server: arrival order from Triton's trace, per transport."""
from __future__ import annotations

import pytest

from app.charts import exercises as charts
from app.i18n import words
from app.lab.exercises import pipelined_client as ex
from app.text import exercises as text


@pytest.fixture(scope="module")
def result(exercise_result):
    # One run, as a learner's; pipelined HTTP is a race, so the exercise itself runs ROUNDS rounds.
    return exercise_result("pipelined_client")


def test_arrival_order_comes_from_the_servers_trace(result):
    assert result.numbers["traced"]
    arrival = result.tables["arrival"]
    # Every session's chunks were each seen once by the server, ranked within the session.
    for (_, _, _), mine in arrival.groupby(["run", "round", "session"]):
        assert sorted(mine["arrival_rank"]) == list(range(len(mine)))


def test_pipelined_http_reorders_and_the_reordered_sessions_break(result):
    n = result.numbers
    assert result.outcome == "reordered"
    assert n["http_async_sessions_reordered"] > 0
    assert n["http_async_reordered_sessions_broken"] > 0
    assert 0 < n["http_async_rounds_reordered"] <= n["http_async_rounds"] == ex.ROUNDS
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


def test_every_finding_renders_in_both_languages_and_the_words_quote_the_constants(result):
    rendered = [text.finding("pipelined_client", f, words(lang)) for f in result.findings + result.explanation
                for lang in ("en", "zh")]
    assert all(rendered)
    scenario = text.module("pipelined_client").SCENARIO
    assert scenario.startswith(f"{ex.SESSIONS} streaming sessions") and f"up to {ex.IN_FLIGHT} chunks" in scenario
    for lang in ("en", "zh"):
        assert len(charts.figures(result, words(lang))) == 3


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
