"""Claims about cancellation in the sequence batcher, proven on the embedded server (Triton 2.51).

The deployment (1 instance x 2 slots, minimum_slot_utilization 1.0, max_queue_delay 1.5 s)
holds every chunk of a lone sequence 1.5 s in its slot's queue, so a gRPC client_timeout of
0.3 s runs out while the chunk is queued (1.2 s to spare): that is what Triton can cancel.
What happens next is read from the server's verbose log, not waited for.
"""
from __future__ import annotations

import threading

import numpy as np
import pytest
import tritonclient.grpc as grpc
import tritonclient.http as http
from tritonclient.utils import InferenceServerException

from app.lab.observation.server_log import LogCode, LogWindow, raised_verbosity
from app.lab.scenario.ids import unique_ids
from app.lab.server import LabServer
from app.recogniser.engine.audio import chunk
from tests.claims.helpers import GATE_CODE, START_FLAG_ERROR, Loader, deployed, gate_config, gate_inputs, gate_reply, recogniser_config, unique_name
from tests.waiting import has_line, wait_for_log

MODEL = "claims_cancel"
QUEUE_WAIT_US = 1_500_000


@pytest.fixture(scope="module")
def cancel_model(lab_server):
    config = recogniser_config(MODEL, instances=1, slots=2, queue_delay_us=QUEUE_WAIT_US, min_slot_utilization=1.0)
    with deployed(lab_server, config):
        yield MODEL


def _inputs(tag: int):
    audio = grpc.InferInput("AUDIO", [1, 160], "FP32")
    audio.set_data_from_numpy(chunk(1, np.random.default_rng(1))[None])
    session = grpc.InferInput("SESSION", [1, 1], "UINT64")
    session.set_data_from_numpy(np.array([[tag]], dtype=np.uint64))
    return [audio, session]


def _slot(client, corrid, tag, start=False, end=False, timeout=5.0) -> int:
    result = client.infer(MODEL, _inputs(tag), sequence_id=corrid, sequence_start=start, sequence_end=end, client_timeout=timeout)
    return int(result.as_numpy("SLOT").reshape(-1)[0])


def test_cancelled_request_frees_its_slot(lab_server, cancel_model):
    client = grpc.InferenceServerClient(lab_server.grpc_url)
    a, b, c = (int(i) for i in unique_ids(3))
    assert _slot(client, a, 1, start=True) == 0
    # Control: while A lives, a new sequence takes the other slot.
    assert _slot(client, c, 3, start=True, end=True) == 1
    with raised_verbosity(lab_server, 1):
        window = LogWindow.start(lab_server)
        with pytest.raises(InferenceServerException, match="Deadline Exceeded"):
            _slot(client, a, 1, timeout=0.3)  # gives up while the chunk is queued: gRPC cancels it
        # The batcher finds the cancelled chunk when the queue wait ends, and frees the slot.
        wait_for_log(window, has_line(LogCode.CANCELLED_RELEASED, a), f"CORRID {a} released as cancelled")
        wait_for_log(window, has_line(LogCode.SLOT_FREED, model=MODEL), "its slot freed")
    # A's slot is free again: the next new sequence takes it, long before A's idle timeout.
    assert _slot(client, b, 2, start=True, end=True) == 0
    # And to the server A is over: its next chunk is a request without START.
    with pytest.raises(InferenceServerException, match=START_FLAG_ERROR):
        _slot(client, a, 1)
    client.close()


def test_cancelling_a_request_cancels_the_sequences_other_queued_requests(lab_server, cancel_model):
    client = grpc.InferenceServerClient(lab_server.grpc_url)
    a = int(unique_ids(1)[0])
    _slot(client, a, 1, start=True)
    replies: list = []
    done = threading.Event()

    def on_reply(result, error):
        replies.append((result, error))
        done.set()

    with raised_verbosity(lab_server, 1):
        window = LogWindow.start(lab_server)
        cancelled = client.async_infer(MODEL, _inputs(1), lambda result, error: None, sequence_id=a)
        wait_for_log(window, has_line(LogCode.SEQUENCE_ENQUEUED, a), f"CORRID {a}'s chunk queued")
        # The next chunk is queued behind it before it is cancelled, both inside the 1.5 s queue wait.
        client.async_infer(MODEL, _inputs(1), on_reply, sequence_id=a)
        wait_for_log(window, has_line(LogCode.SEQUENCE_ENQUEUED, a, count=2), f"CORRID {a}'s next chunk queued")
        cancelled.cancel()
        assert done.wait(10)
        # The batcher found the cancelled chunk still queued (not run) and released the sequence.
        wait_for_log(window, has_line(LogCode.CANCELLED_RELEASED, a), f"CORRID {a} released as cancelled")
    result, error = replies[0]
    assert result is None and error is not None
    assert "CANCELLED" in str(error.status()).upper()
    client.close()


# --- Cancellation before and after dispatch, on the gate probe (tests/claims/models/gate_probe.py) ---


class _Pending:
    """One async gRPC request: its call context (to cancel it) and, once it ends, its outcome."""

    def __init__(self, grpc_client, model: str, corrid: int, tag: int, hold: bool = False):
        self.done = threading.Event()
        self.result = self.error = None
        self.context = grpc_client.async_infer(model, gate_inputs(grpc, tag, hold=hold), self._finish, sequence_id=corrid)

    def _finish(self, result, error):
        self.result, self.error = result, error
        self.done.set()

    def outcome(self, timeout_s: float = 60):
        assert self.done.wait(timeout_s), "the request never ended"
        return self.result, self.error


def _gate_model(load, gate, name: str) -> str:
    """The gate probe under direct, 1 instance x 2 slots, idle timeout 60 s (no reaping here)."""
    return load(gate_config(unique_name(name), gate.folder, scheduler="direct", max_batch_size=2), code=GATE_CODE)


def _start(client, model: str, corrid: int, **flags) -> dict:
    return gate_reply(client.infer(model, gate_inputs(http, corrid), sequence_id=corrid, sequence_start=True, **flags))


def test_cancelling_a_queued_request_frees_its_slot(lab_server, load, gate, client):
    """A request that is cancelled while it waits in its slot's queue (its instance busy with
    another batch) cancels its sequence: when the batcher next looks at the slot it finds the
    cancelled request, releases the slot and forgets the correlation ID. A new sequence then
    gets that slot, and the cancelled sequence's next request is refused for lack of START.

    Source: core r24.10 src/sequence_batch_scheduler/sequence_batch_scheduler.cc lines
    1634-1657 (DirectSequenceBatch::BatcherThread: a cancelled request at the front of a slot
    queue releases the slot), 882-904 (ReleaseSequenceSlot: "Releasing canceled sequence CORRID",
    the ID's slot mapping erased), 973-979 (the slot goes back to the free slots); server r24.10
    docs/user_guide/request_cancellation.md lines 62-72; src/grpc/infer_handler.h lines 791-820
    (the gRPC endpoint turns a client's cancel into TRITONSERVER_InferenceRequestCancel).
    """
    model = _gate_model(load, gate, "cancel_queued")
    a, b, c, held = unique_ids(4)
    assert _start(client, model, a)["ROW"] == 0
    assert _start(client, model, b)["ROW"] == 1
    channel = grpc.InferenceServerClient(lab_server.grpc_url)
    try:
        with raised_verbosity(lab_server, 1):
            window = LogWindow.start(lab_server)
            busy = _Pending(channel, model, b, held, hold=True)
            gate.wait_started(held)  # the instance is busy: what comes next waits in its slot queue
            queued = _Pending(channel, model, a, a)
            wait_for_log(window, has_line(LogCode.SEQUENCE_ENQUEUED, a, model), f"CORRID {a} queued in its slot")
            queued.context.cancel()
            # The gRPC endpoint logs this just before it calls TRITONSERVER_InferenceRequestCancel
            # (infer_handler.h lines 799-819); the batcher looks at the queue only after the gate opens.
            wait_for_log(window, lambda es: any("Issuing cancellation for" in e.message for e in es), "the cancellation reach the core")
            gate.open(held)
            assert busy.outcome()[1] is None
            # Two lines from two threads (the scheduler releases the sequence, the batcher frees
            # the slot), in either order: wait for both before reading the window.
            freed, released = has_line(LogCode.SLOT_FREED, model=model), has_line(LogCode.CANCELLED_RELEASED, a)
            wait_for_log(window, lambda es: freed(es) and released(es), "the cancelled sequence released and its slot freed")
        result, error = queued.outcome()
        assert result is None and "CANCELLED" in str(error.status()).upper()
        assert [e.corrid for e in window.select(codes=[LogCode.CANCELLED_RELEASED])] == [str(a)]
        assert [e.values["slot"] for e in window.select(model=model, codes=[LogCode.SLOT_FREED])] == ["0"]
        assert _start(client, model, c)["ROW"] == 0  # the freed slot, while b still holds slot 1
        with pytest.raises(InferenceServerException, match=START_FLAG_ERROR):
            client.infer(model, gate_inputs(http, a), sequence_id=a)
    finally:
        channel.close()
    for corrid in (b, c):
        client.infer(model, gate_inputs(http, corrid), sequence_id=corrid, sequence_end=True)


@pytest.fixture(scope="module")
def apart(lab_server):
    """A server of its own for a cancel that reaches a running request: on 2.51 a gRPC request
    cancelled while the model runs it can crash the server (server#7368, fixed by server#7840
    after 24.10), and such a crash must not take the session's server, and every test after
    it, with it. An external server (TRITON_URL) is used as it is."""
    if not lab_server.is_embedded:
        yield lab_server
        return
    server = LabServer().start()
    yield server
    server.stop()


@pytest.fixture()
def load_apart(apart):
    loader = Loader(apart)
    yield loader.load
    loader.unload_all()


def test_cancelling_after_dispatch_keeps_the_sequence_and_its_slot(apart, load_apart, gate):
    """Once a request has been handed to the backend, cancelling it does nothing to its
    sequence: Triton marks the request cancelled (the model can see it with
    request.is_cancelled()), the client gets CANCELLED, but the model runs it to the end, the
    sequence keeps its slot and its correlation ID, and its next request, without START, is
    served in the same slot with the sequence's state intact. A new sequence gets the other slot.

    Source: server r24.10 docs/user_guide/request_cancellation.md lines 74-91 (once a request
    is with the backend it is up to the backend; the Python model must check is_cancelled()
    itself); core r24.10 src/sequence_batch_scheduler/sequence_batch_scheduler.cc lines
    1634-1657 (only a request still in a slot queue is checked for cancellation) and
    1785-1800 (a request leaves the queue when its batch is formed).
    """
    with apart.client() as client:
        model = _gate_model(load_apart, gate, "cancel_running")
        a, c, held = unique_ids(3)
        assert (_start(client, model, a)["ROW"], _start(client, model, a)["SEEN"]) == (0, 1)
        channel = grpc.InferenceServerClient(apart.grpc_url)
        try:
            with raised_verbosity(apart, 1):
                window = LogWindow.start(apart)
                running = _Pending(channel, model, a, held, hold=True)
                gate.wait_started(held)  # the request is inside the model
                running.context.cancel()
                result, error = running.outcome()
                assert result is None and "CANCELLED" in str(error.status()).upper()
                wait_for_log(window, lambda es: any("Issuing cancellation for" in e.message for e in es), "the cancellation reach the core")
                gate.open(held)
                assert gate.wait_done(held) == {"cancelled": True}  # Triton did mark it cancelled
            after = gate_reply(client.infer(model, gate_inputs(http, a), sequence_id=a))
            assert (after["ROW"], after["SEEN"]) == (0, 3)  # same slot; the cancelled request ran too
            assert _start(client, model, c)["ROW"] == 1
            assert not window.select(codes=[LogCode.CANCELLED_RELEASED])
        finally:
            channel.close()
        for corrid in (a, c):
            client.infer(model, gate_inputs(http, corrid), sequence_id=corrid, sequence_end=True)
