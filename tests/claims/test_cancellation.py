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
from tritonclient.utils import InferenceServerException

from app.lab.observation.server_log import LogCode, LogWindow, raised_verbosity
from app.lab.scenario.audio import chunk
from app.lab.scenario.ids import unique_ids
from tests.claims.helpers import START_FLAG_ERROR, deployed, recogniser_config
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
