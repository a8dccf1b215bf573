"""The driver over HTTP, gRPC calls and a gRPC stream, serial and pipelined, on the real server."""
from __future__ import annotations

import contextlib
import socket
import threading

import numpy as np
import pytest

from app.i18n import languages, words
from app.lab.scenario.ids import unique_ids
from app.lab.scenario.scenario import Scenario, random_texts
from app.lab.scenario.transport import Transport
from app.lab.traffic import report, transports
from app.recogniser.engine import driver
from app.recogniser.words import report as report_text
from app.text import problems as problems_text
from tests.i18n.text_checks import reads_in
from tests.server_calls import ask
from tests.waiting import wait_for

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
    english = report_text.summary_table(serial_runs[Transport.GRPC_STREAM], words("en"))
    assert "gRPC bidirectional stream" in english
    for lang in languages():
        assert reads_in(lang, report_text.summary_table(serial_runs[Transport.GRPC_STREAM], words(lang)), english), lang


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
    "kwargs, code, message",
    [
        ({"transport": "carrier_pigeon"}, "transport_unknown", "transport must be one of http, grpc, grpc_stream: got 'carrier_pigeon'"),
        ({"in_flight": 0}, "in_flight_range", "chunks in flight per session must be 1 to 16"),
        ({"transport": "grpc", "urls": ["127.0.0.1:1"]}, "urls_http_only", "HTTP only"),
    ],
)
def test_bad_transport_settings_are_refused_before_anything_is_sent(kwargs, code, message):
    with pytest.raises(ValueError) as raised:
        Scenario(model=MODEL, texts=["HI"], **kwargs).validate()
    assert raised.value.code == code
    assert message in problems_text.error(raised.value, words("en"))


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
    for lang in languages():
        shown = report_text.waits_and_refusals(result, words(lang))
        assert len(shown) == len(lines) and all(reads_in(lang, a, b) for a, b in zip(shown, lines, strict=True)), shown
    # 16 waves of 8; a wave holds its slots for 6 chunks of at least 3 ms think each, so from the
    # sixth wave on every first chunk waited well over 100 ms.
    assert 64 <= waited <= 128 - 8


def test_a_request_that_never_reached_the_server_is_not_called_a_refusal(lab_server):
    from app.lab.server import free_ports

    nobody = f"127.0.0.1:{free_ports(1)[0]}"  # nothing listens there
    result = driver.run(lab_server, Scenario(model=MODEL, texts=["HI"], urls=[nobody]))
    first = result.requests.iloc[0]
    assert first["error"].startswith("no answer from the server (") and "refused" in first["error"].lower()
    found = report.waits_and_refusals(result)
    assert found["no_answer"] == 1 and found["no_answer_example"] == first["error"]
    assert "refused" not in found
    assert any(line.startswith("no answer: 1 session(s)") for line in report_text.waits_and_refusals(result, words("en")))


# --- Connection failures: what is tried again, and what never is -----------------------------

class Relay:
    """A TCP relay from a local port to the real server's HTTP port, for the failures a live
    server does not make: made with `listening=False` the port stays closed (connections refused)
    until listen(); `drop_replies` lets each request through to Triton and closes the client's
    connection when the reply comes, as a server that dies right after running the chunk would.

    The relay is the only way to the server, so once close() has returned (its accept loop and
    every pump ended) nothing more can reach Triton through it."""

    def __init__(self, target: str, listening: bool = True, drop_replies: bool = False):
        from app.lab.server import free_ports

        self.target_host, port = target.rsplit(":", 1)
        self.target_port = int(port)
        self.port = free_ports(1)[0]
        self.drop_replies = drop_replies
        self.connections = 0
        self._closing = threading.Event()
        self._listener: socket.socket | None = None
        self._threads: list[threading.Thread] = []
        if listening:
            self.listen()

    @property
    def url(self) -> str:
        return f"127.0.0.1:{self.port}"

    def listen(self) -> None:
        listener = socket.socket()
        listener.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        listener.bind(("127.0.0.1", self.port))
        listener.listen(16)
        listener.settimeout(0.2)  # how often the accept loop looks at _closing
        self._listener = listener
        self._start(self._accept)

    def _start(self, target, *args) -> None:
        thread = threading.Thread(target=target, args=args, daemon=True)
        self._threads.append(thread)
        thread.start()

    def _accept(self) -> None:
        while not self._closing.is_set():
            try:
                client, _ = self._listener.accept()
            except OSError:
                continue
            self.connections += 1
            upstream = socket.create_connection((self.target_host, self.target_port))
            self._start(self._pump, client, upstream, False)
            self._start(self._pump, upstream, client, self.drop_replies)

    @staticmethod
    def _pump(source: socket.socket, sink: socket.socket, drop: bool) -> None:
        try:
            while data := source.recv(65536):
                if drop:
                    break
                sink.sendall(data)
        except OSError:
            pass
        for s in (source, sink):
            with contextlib.suppress(OSError):
                s.shutdown(socket.SHUT_RDWR)
            s.close()

    def close(self) -> None:
        """Stop accepting, end every connection, and return once all of the relay's threads have."""
        self._closing.set()
        for thread in list(self._threads):  # the accept loop first: it may still start pumps
            thread.join(10)
        for thread in self._threads:
            thread.join(10)
            assert not thread.is_alive(), "a relay thread did not end"
        if self._listener is not None:
            self._listener.close()


def _executed(server, model: str) -> int:
    stats = ask(server, "get_inference_statistics", model_name=model)["model_stats"]
    return sum(int(s.get("inference_count", 0)) for s in stats)


def _send_one_chunk(url: str, on_link=None) -> tuple[list, transports.HttpLink]:
    """One whole one-chunk sequence (START and END) over a serial HTTP link; the replies it got.
    `on_link(link)` is called with the link before the chunk is sent."""
    link = transports.open_link(Transport.HTTP, url)
    if on_link is not None:
        on_link(link)
    answers = []
    arrays = {"AUDIO": np.zeros((1, 160), dtype=np.float32),
              "SESSION": np.array([[unique_ids(1)[0]]], dtype=np.uint64)}
    corrid = int(unique_ids(1)[0])
    link.acquire()
    link.send(MODEL, arrays, f"relay:{corrid}", {}, {"sequence_id": corrid, "sequence_start": True, "sequence_end": True},
              lambda result, error: answers.append(error))
    link.drain()
    link.close()
    return answers, link


def test_a_refused_connection_is_tried_again_and_then_recorded_once():
    from app.lab.server import free_ports

    answers, link = _send_one_chunk(f"127.0.0.1:{free_ports(1)[0]}")  # nothing listens there
    assert len(answers) == 1 and answers[0].startswith(transports.NO_ANSWER) and "ConnectionRefusedError" in answers[0]
    assert link.reconnects == transports.CONNECT_RETRIES


def test_a_chunk_refused_at_the_handshake_reaches_the_model_once_when_the_server_listens_again(lab_server):
    lab_server.models.ensure(MODEL)
    before = _executed(lab_server, MODEL)
    relay = Relay(lab_server.url, listening=False)

    def open_after_the_first_refusal(link) -> None:
        # The port opens once the link has counted a refused handshake; its next try (after
        # CONNECT_BACKOFF_S[0]) finds it listening.
        def watch() -> None:
            wait_for(lambda: link.reconnects >= 1, "the first handshake to be refused", timeout_s=30)
            relay.listen()

        threading.Thread(target=watch, daemon=True).start()

    try:
        answers, link = _send_one_chunk(relay.url, on_link=open_after_the_first_refusal)
    finally:
        relay.close()
    assert answers == [""], answers
    assert link.reconnects >= 1 and relay.connections == 1
    wait_for(lambda: _executed(lab_server, MODEL) >= before + 1, "the chunk to be counted")
    assert _executed(lab_server, MODEL) == before + 1, "the chunk ran exactly once"


def test_a_chunk_whose_connection_closed_after_sending_is_never_sent_again(lab_server):
    # The server ran the chunk, then the connection closed before the reply reached the client:
    # the chunk is that session's error, and it is not sent a second time.
    lab_server.models.ensure(MODEL)
    before = _executed(lab_server, MODEL)
    relay = Relay(lab_server.url, drop_replies=True)
    try:
        answers, link = _send_one_chunk(relay.url)
    finally:
        relay.close()  # a resend would have needed a second connection through the relay
    assert len(answers) == 1 and answers[0].startswith(transports.NO_ANSWER), answers
    assert "HTTPConnectionClosed" in answers[0] or "Reset" in answers[0], answers
    assert link.reconnects == 0 and relay.connections == 1
    wait_for(lambda: _executed(lab_server, MODEL) >= before + 1, "the chunk to be counted")
    assert _executed(lab_server, MODEL) == before + 1, "the chunk ran exactly once"
