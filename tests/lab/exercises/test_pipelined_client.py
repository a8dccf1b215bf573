"""Pipelined clients on the real server: arrival order from Triton's trace, per transport."""
from __future__ import annotations

import pytest

from app.lab.exercises import pipelined_client as ex


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


def test_a_stream_per_session_keeps_order_and_every_transcript(result):
    rounds = result.tables["rounds"]
    stream = rounds[rounds["run"] == "grpc_stream"]
    assert len(stream) >= 1
    assert (stream["sessions_reordered"] == 0).all() and (stream["intact"] == ex.SESSIONS).all()


def test_serial_clients_stay_in_order(result):
    assert result.numbers["serial_sessions_reordered"] == 0 and result.numbers["serial_sessions_broken"] == 0


def test_a_reordered_session_was_reordered_by_the_server_not_by_the_client(result):
    # The client sent chunk k before chunk k+1 every time: its send times are in chunk order.
    for label, run in result.runs.items():
        for _, mine in run.requests.groupby("session"):
            sent = mine.sort_values("chunk")["t_send"].tolist()
            assert sent == sorted(sent), label
