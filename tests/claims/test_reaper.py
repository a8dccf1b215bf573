"""Claims about Triton's idle reaper and the model's own state.

Test-only recogniser deployments keyed by the client's SESSION tag (state_key "session"),
1 instance, idle timeout unset (1 s). Keyed by tag, a probe sequence can read any tag's
state cell by sending a chunk with that tag, so the test sees what the model still holds.
The recogniser drops a cell when a request with END reaches it, or when the cell has been
idle `idle_evict_s` seconds (its own eviction).
"""
from __future__ import annotations

import time

import pytest
from tritonclient.utils import InferenceServerException

from app.lab.observation.server_log import LogCode, LogWindow, raised_verbosity
from app.lab.scenario.ids import unique_ids
from tests.claims.helpers import START_FLAG_ERROR, deployed, recogniser_config, send
from tests.waiting import has_line, wait_for_log

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
