"""Claims about Triton's idle reaper and the model's own state.

Test-only recogniser deployments keyed by the client's SESSION tag (state_key "session"),
1 instance, idle timeout unset (1 s). Keyed by tag, a probe sequence can read any tag's
state cell by sending a chunk with that tag, so the test sees what the model still holds.
The recogniser drops a cell when a request with END reaches it, or when the cell has been
idle `idle_evict_s` seconds (its own eviction).
"""
from __future__ import annotations

import time
from concurrent.futures import Future, ThreadPoolExecutor

import pytest
import tritonclient.http as http
from tritonclient.utils import InferenceServerException

from app.lab.observation.server_log import LogCode, LogWindow, raised_verbosity
from app.lab.scenario.ids import unique_ids
from tests.claims.helpers import FLAG_START, GATE_CODE, START_FLAG_ERROR, deployed, gate_config, gate_inputs, gate_reply, recogniser_config, send, unique_name
from tests.server_calls import ask
from tests.waiting import has_line, log_gap_s, wait_for_log

KEEPS, EVICTS = "claims_reaper_keeps", "claims_reaper_evicts"
EVICT_S = 1.5  # EVICTS' own idle eviction (the recogniser's idle_evict_s)


@pytest.fixture(scope="module")
def reaper_models(lab_server):
    configs = (
        recogniser_config(KEEPS, slots=2, idle_us=None, state_key="session", idle_evict_s="600"),
        recogniser_config(EVICTS, slots=2, idle_us=None, state_key="session", idle_evict_s=str(EVICT_S)),
    )
    with deployed(lab_server, *configs):
        yield


def _abandon(lab_server, client, model: str) -> tuple[int, int, float]:
    """A sequence that sends two chunks and never ends, until the reaper ends it (the server's
    log says when); returns (its tag, its last symbol, time.monotonic() when its last reply came)."""
    corrid, tag = unique_ids(2)
    with raised_verbosity(lab_server, 1):
        window = LogWindow.start(lab_server)
        send(client, model, corrid, tag, delta=3, start=True)
        last = send(client, model, corrid, tag, delta=5).symbol
        replied_at = time.monotonic()  # the model stamped the cell before it replied
        wait_for_log(window, has_line(LogCode.REAPER_FORCE_END, corrid, model), f"the reaper end CORRID {corrid}")
    with pytest.raises(InferenceServerException, match=START_FLAG_ERROR):
        send(client, model, corrid, tag)  # Triton has reaped it
    return tag, last, replied_at


def _read_cell(client, model: str, tag: int):
    """A fresh probe sequence whose second chunk carries `tag`: it reads that tag's cell."""
    corrid, own = unique_ids(2)
    send(client, model, corrid, own, start=True)
    reply = send(client, model, corrid, tag)
    send(client, model, corrid, own, end=True)
    return reply


def test_reaper_never_tells_the_model(lab_server, reaper_models, client):
    """When the idle reaper ends a sequence it only frees the slot; the model gets no request,
    no END: the state the model keeps for that sequence is still there afterwards. A sequence
    that ended with END had its state dropped by the model.

    Source (Triton 2.51, core r24.10): sequence_batch_scheduler.cc ReaperThread enqueues a
    null request, and DirectSequenceBatch::BatcherThread pops it and releases the slot without
    executing anything ("release the sequence slot but otherwise do nothing"). Server issues
    3652 and 5453.
    """
    ended_corrid, ended_tag = unique_ids(2)
    send(client, KEEPS, ended_corrid, ended_tag, start=True)
    send(client, KEEPS, ended_corrid, ended_tag, end=True)
    reaped_tag, last_symbol, _ = _abandon(lab_server, client, KEEPS)

    reaped_cell = _read_cell(client, KEEPS, reaped_tag)
    assert (reaped_cell.state_in, reaped_cell.state_owner) == (last_symbol, reaped_tag)
    ended_cell = _read_cell(client, KEEPS, ended_tag)
    assert (ended_cell.state_in, ended_cell.state_owner) == (0, 0)  # END reached the model


def test_model_must_evict_reaped_state_itself(lab_server, reaper_models, client):
    """The only cure is in the model: with its own idle eviction (here 1.5 s), the reaped
    sequence's state is gone once the model next runs.

    Source: as test_reaper_never_tells_the_model; the eviction is the recogniser's
    `idle_evict_s` (model_repository/asr_dynamic/1/model.py _evict_idle).
    """
    reaped_tag, _, replied_at = _abandon(lab_server, client, EVICTS)
    # The model evicts a cell unused for more than EVICT_S by its time.monotonic(), the clock this
    # process reads too (CLOCK_MONOTONIC is one per machine): wait until that is so for the cell.
    time.sleep(max(0.0, replied_at + EVICT_S - time.monotonic()) + 0.01)
    cell = _read_cell(client, EVICTS, reaped_tag)
    assert (cell.state_in, cell.state_owner) == (0, 0)


# --- When the idle window runs, on the gate probe (tests/claims/models/gate_probe.py) ---

IDLE_US = 1_000_000


def _window_model(load, gate, stem: str) -> str:
    """The gate probe under direct, 1 instance x 1 slot, max_sequence_idle_microseconds 1 s."""
    return load(gate_config(unique_name(stem), gate.folder, scheduler="direct", max_batch_size=1, idle_us=IDLE_US), code=GATE_CODE)


def _in_thread(lab_server, model: str, corrid: int, tag: int, **kwargs) -> Future:
    """One request on its own client in a thread of its own; the future holds its gate reply."""
    inputs = gate_inputs(http, tag, hold=kwargs.pop("hold", False))
    pool = ThreadPoolExecutor(max_workers=1)
    future = pool.submit(lambda: gate_reply(ask(lab_server, "infer", model, inputs, sequence_id=corrid, **kwargs)))
    pool.shutdown(wait=False)
    return future


def test_idle_window_counts_from_the_previous_requests_arrival(lab_server, load, gate, client):
    """The idle window of a sequence runs from the arrival of its latest request, whatever
    happens to that request after: a client that waits for its reply and sends the next
    request at once is still reaped if that reply takes longer than the window. Here a request
    is held in the model; the reaper force-ends its sequence while it runs (at least 1 s after
    its arrival, by the server's own log), its reply still comes back, and the very next request
    is refused for lack of START.

    Source: core r24.10 src/sequence_batch_scheduler/sequence_batch_scheduler.cc lines 745-751
    (Enqueue records the request's arrival time for its correlation ID, the only time the
    reaper reads) and 1059-1136 (ReaperThread: a sequence is idle when now minus that time
    exceeds max_sequence_idle_microseconds; queued or running requests are not consulted;
    force-ending enqueues a null request that frees the slot after the running batch).
    """
    model = _window_model(load, gate, "window_running")
    a, held = unique_ids(2)
    with raised_verbosity(lab_server, 1):
        window = LogWindow.start(lab_server)
        assert gate_reply(client.infer(model, gate_inputs(http, a), sequence_id=a, sequence_start=True))["SEEN"] == 1
        running = _in_thread(lab_server, model, a, held, hold=True)
        gate.wait_started(held)  # the client is waiting for this reply: it is not idle
        wait_for_log(window, has_line(LogCode.REAPER_FORCE_END, a, model), f"the reaper force-end CORRID {a}")
        assert not running.done()
        gate.open(held)
        assert running.result(timeout=60)["SEEN"] == 2  # the running request itself was served
        with pytest.raises(InferenceServerException, match=START_FLAG_ERROR):
            client.infer(model, gate_inputs(http, a), sequence_id=a)  # sent the moment the reply came
    arrivals = window.select(model=model, corrids=[a], codes=[LogCode.SEQUENCE_ENQUEUED])
    (idle,) = window.select(corrids=[a], codes=[LogCode.REAPER_IDLE])
    assert len(arrivals) == 2
    assert log_gap_s(arrivals[-1], idle) >= IDLE_US / 1e6 - 0.01, "reaped before the window had run out"


def test_a_backlogged_sequence_is_not_reaped_while_it_waits(lab_server, load, gate, client):
    """A sequence waiting in the backlog for a slot is never reaped there, however long it
    waits: the reaper sees it is idle ("found idle CORRID") and leaves it. When a slot frees it
    gets the slot and its request is served. But its window still counts from that request's
    arrival, so the reaper force-ends it right after, and its next request is refused: the
    idle window must also cover the time a sequence can spend in the backlog.

    Source: core r24.10 src/sequence_batch_scheduler/sequence_batch_scheduler.cc lines
    1094-1111 (ReaperThread: an idle ID found in sequence_to_backlog_map_ is only looked at
    again 50 ms later) and 937-970 (ReleaseSequenceSlot moves the oldest backlog into the
    freed slot; its arrival time is not renewed).
    """
    model = _window_model(load, gate, "window_backlog")
    holder, waiting, held = unique_ids(3)
    with raised_verbosity(lab_server, 1):
        window = LogWindow.start(lab_server)
        busy = _in_thread(lab_server, model, holder, held, hold=True, sequence_start=True)
        gate.wait_started(held)  # the only slot is taken and its instance busy
        backlogged = _in_thread(lab_server, model, waiting, waiting, sequence_start=True)
        wait_for_log(window, has_line(LogCode.BACKLOG_ENQUEUED, waiting, model), f"CORRID {waiting} in the backlog")
        wait_for_log(window, lambda es: any(e.message == f"Reaper: found idle CORRID {waiting}" for e in es),
                     f"the reaper find CORRID {waiting} idle in the backlog")
        assert not backlogged.done()
        gate.open(held)
        busy.result(timeout=60)
        served = backlogged.result(timeout=60)
        assert (served["ROW"], served["SEEN"], served["FLAGS"]) == (0, 1, FLAG_START)  # served, not dropped
        wait_for_log(window, has_line(LogCode.REAPER_FORCE_END, waiting, model), f"the reaper force-end CORRID {waiting}")
        with pytest.raises(InferenceServerException, match=START_FLAG_ERROR):
            client.infer(model, gate_inputs(http, waiting), sequence_id=waiting)
    (queued,) = window.select(corrids=[waiting], codes=[LogCode.BACKLOG_ENQUEUED])
    found = next(e for e in window.entries() if e.message == f"Reaper: found idle CORRID {waiting}")
    assert log_gap_s(queued, found) >= IDLE_US / 1e6 - 0.01


def test_idle_line_follows_a_sequence_that_ended_normally(lab_server, load, gate, client):
    """The reaper's "max sequence idle exceeded" line is no sign of a reaped sequence by itself:
    Triton also writes it about one window after a sequence that ended with END, because END does
    not clear the arrival time the reaper keeps per ID. For such an ID the reaper finds no slot
    and no backlog, writes "ignoring stale idle CORRID" and forgets it; no "force-ending" line
    follows, which is the one line that means a live sequence was ended.

    Source: core r24.10 src/sequence_batch_scheduler/sequence_batch_scheduler.cc line 751
    (Enqueue records every request's arrival per correlation ID, the END request's too),
    846-851 (END only forgets the slot mapping) and 1076-1110 (ReaperThread: "max sequence idle
    exceeded" for every ID past the window; a force-end only for an ID that still holds a slot,
    "ignoring stale idle CORRID" for one that holds neither slot nor backlog).
    """
    model = _window_model(load, gate, "window_ended")
    (corrid,) = unique_ids(1)
    with raised_verbosity(lab_server, 1):
        window = LogWindow.start(lab_server)
        reply = gate_reply(client.infer(model, gate_inputs(http, corrid), sequence_id=corrid, sequence_start=True, sequence_end=True))
        assert reply["FLAGS"] == 3  # START and END: the sequence is over
        wait_for_log(window, has_line(LogCode.REAPER_IDLE, corrid), f"the idle line for the ended CORRID {corrid}")
        wait_for_log(window, lambda es: any(e.message == f"Reaper: ignoring stale idle CORRID {corrid}" for e in es),
                     f"the reaper forget CORRID {corrid}")
    (arrived,) = window.select(model=model, corrids=[corrid], codes=[LogCode.SEQUENCE_ENQUEUED])
    (idle,) = window.select(corrids=[corrid], codes=[LogCode.REAPER_IDLE])
    assert log_gap_s(arrived, idle) >= IDLE_US / 1e6 - 0.01
    assert not window.select(corrids=[corrid], codes=[LogCode.REAPER_FORCE_END])


def test_reaping_keeps_requests_already_queued_and_refuses_only_later_ones(lab_server, load, gate):
    """The reaper releases a slot by queueing a release marker behind the sequence's requests
    (core sequence_batch_scheduler.cc, ReaperThread and DirectSequenceBatch::BatcherThread), and
    forgets the correlation ID at once: a request queued before the reaping still runs, in
    order, then the slot frees; a request sent after it is refused with the START-flag error."""
    model = load(gate_config(unique_name("reap_queued"), gate.folder, scheduler="direct", idle_us=300_000),
                 code=GATE_CODE)
    corrid = unique_ids(1)[0]

    def send_one(tag: int, hold: bool = False, start: bool = False) -> dict:
        with lab_server.client() as own:
            return gate_reply(own.infer(model, gate_inputs(http, tag, hold=hold), sequence_id=corrid,
                                        sequence_start=start))

    with raised_verbosity(lab_server, 1), ThreadPoolExecutor(2) as pool:
        window = LogWindow.start(lab_server)
        first: Future = pool.submit(send_one, 1, True, True)
        gate.wait_started(1)  # the instance is busy with request 1: request 2 waits in the slot's queue
        second: Future = pool.submit(send_one, 2)
        wait_for_log(window, has_line(LogCode.REAPER_FORCE_END, corrid, model), f"the reaper end CORRID {corrid}")
        assert not second.done(), "request 2 was still queued when the reaper ended its sequence"
        with pytest.raises(InferenceServerException, match=START_FLAG_ERROR):
            send_one(3)  # sent after the reaping: the ID is already unknown
        gate.open(1)
        assert first.result(timeout=60)["SEEN"] == 1
        assert second.result(timeout=60)["SEEN"] == 2  # queued before the reaping: it ran, in its sequence
