"""The driver over HTTP, gRPC calls and a gRPC stream, serial and pipelined, on the real server."""
from __future__ import annotations

import pytest

from app.i18n import words
from app.lab import driver, report
from app.text import report as report_text
from app.lab.scenario import Scenario, random_texts
from app.lab.transports import Transport

MODEL = "asr_sequence_direct"


def _scenario(transport, in_flight=1, **kwargs) -> Scenario:
    values = {"think_ms": 5.0, "jitter_ms": 5.0, "seed": 4} | kwargs
    return Scenario(model=MODEL, texts=random_texts(4, 10, seed=4), transport=transport, in_flight=in_flight, **values)


@pytest.fixture(scope="module")
def serial_runs(lab_server):
    return {t: driver.run(lab_server, _scenario(t)) for t in Transport}


@pytest.mark.parametrize("transport", list(Transport))
def test_every_transport_keeps_sessions_intact_and_joins_the_trace(serial_runs, transport):
    result = serial_runs[transport]
    q = result.requests
    assert result.all_intact, result.sessions[["verdict", "detail"]]
    assert len(q) == 40 and q["request_id"].is_unique
    assert (q["error"] == "").all()
    # Each record found its own line in the server's trace by request ID.
    assert result.traced and q["queue_ms"].notna().all() and q["compute_ms"].notna().all()
    assert result.server["inference_count"] == 40


def test_records_have_the_same_fields_whatever_the_transport(serial_runs):
    columns = {t: list(r.requests.columns) for t, r in serial_runs.items()}
    assert columns[Transport.GRPC] == columns[Transport.HTTP] == columns[Transport.GRPC_STREAM]
    # The same audio gives the same transcripts over every transport.
    texts = {t: r.sessions["received_text"].tolist() for t, r in serial_runs.items()}
    assert texts[Transport.GRPC] == texts[Transport.HTTP] == texts[Transport.GRPC_STREAM]


def test_report_names_the_transport(serial_runs):
    data = report.to_json(serial_runs[Transport.GRPC_STREAM])
    assert data["transport"] == "grpc_stream" and data["in_flight"] == 1
    assert "gRPC bidirectional stream" in report_text.summary_table(serial_runs[Transport.GRPC_STREAM], words("en"))
    assert report_text.summary_table(serial_runs[Transport.GRPC_STREAM], words("zh"))


def test_pipelined_stream_delivers_each_sequence_in_order(lab_server):
    # No think time and four chunks in flight: the pace at which unary calls overtake each
    # other here; one stream per session must still hand the scheduler chunk k before k+1.
    result = driver.run(lab_server, _scenario(Transport.GRPC_STREAM, in_flight=4, think_ms=0.0, jitter_ms=0.0))
    q = result.requests
    assert result.all_intact, result.sessions[["verdict", "detail"]]
    for _, mine in q.groupby("session"):
        assert mine.sort_values("queue_start_ns")["chunk"].tolist() == sorted(mine["chunk"])
    # Pipelined: some chunk left before the previous chunk's answer came back.
    overlapped = any(
        (m.sort_values("chunk")["t_send"].iloc[1:].to_numpy() < m.sort_values("chunk")["t_recv"].iloc[:-1].to_numpy()).any()
        for _, m in q.groupby("session")
    )
    assert overlapped


@pytest.mark.parametrize("transport", list(Transport))
@pytest.mark.parametrize("in_flight", [1, 3])
def test_a_refused_chunk_is_recorded_with_the_servers_words(lab_server, transport, in_flight):
    # Chunks without a correlation ID: the sequence batcher refuses each one.
    result = driver.run(lab_server, Scenario(model=MODEL, texts=["HI"], transport=transport, in_flight=in_flight, sequence=False))
    first = result.requests.sort_values("chunk").iloc[0]
    assert "correlation ID" in first["error"] and first["symbol"] == -1
    assert result.sessions.iloc[0]["verdict"] == "error"


@pytest.mark.parametrize(
    "kwargs, code, words",
    [
        ({"transport": "carrier_pigeon"}, "transport_unknown", "transport must be one of http, grpc, grpc_stream: got 'carrier_pigeon'"),
        ({"in_flight": 0}, "in_flight_range", "chunks in flight per session must be 1 to 16"),
        ({"transport": "grpc", "urls": ["127.0.0.1:1"]}, "urls_http_only", "HTTP only"),
    ],
)
def test_bad_transport_settings_are_refused_before_anything_is_sent(kwargs, code, words):
    with pytest.raises(ValueError, match=words) as raised:
        Scenario(model=MODEL, texts=["HI"], **kwargs).validate()
    assert raised.value.code == code


def test_128_sessions_end_intact_or_refused_in_the_servers_words(lab_server):
    # 16 times the slots: sessions queue in the backlog; any that waited past the idle timeout
    # are refused by the server, never broken by the driver.
    result = driver.run(lab_server, Scenario(model="asr_sequence_oldest", texts=random_texts(128, 6, seed=2), think_ms=5.0, jitter_ms=2.0))
    verdicts = set(result.sessions["verdict"])
    assert verdicts <= {"intact", "error"}, result.sessions["verdict"].value_counts()
    refused = result.sessions[result.sessions["verdict"] == "error"]
    assert set(refused["detail_code"]) <= {"refused"}
    assert all("must specify the START flag" in v["error"] for v in refused["detail_values"])
    found = report.waits_and_refusals(result)
    assert found["first_chunks"] == 128
    waited = found["waited"]
    lines = report_text.waits_and_refusals(result, words("en"))
    assert lines[0].startswith(f"waited for a slot: {waited} of 128 sessions")
    assert report_text.waits_and_refusals(result, words("zh"))
    # 16 waves of 8; a wave holds its slots for 6 chunks of at least 3 ms think each, so from the
    # sixth wave on every first chunk waited well over 100 ms.
    assert 64 <= waited <= 128 - 8


def test_a_request_that_never_reached_the_server_is_not_called_a_refusal(lab_server):
    from app.lab.server.ports import free_ports

    nobody = f"127.0.0.1:{free_ports(1)[0]}"  # nothing listens there
    result = driver.run(lab_server, Scenario(model=MODEL, texts=["HI"], urls=[nobody]))
    first = result.requests.iloc[0]
    assert first["error"].startswith("no answer from the server (") and "refused" in first["error"].lower()
    found = report.waits_and_refusals(result)
    assert found["no_answer"] == 1 and found["no_answer_example"] == first["error"]
    assert "refused" not in found
    assert any(line.startswith("no answer: 1 session(s)") for line in report_text.waits_and_refusals(result, words("en")))
