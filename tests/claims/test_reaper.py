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

from app.lab.scenario.ids import unique_ids
from tests.claims.helpers import START_FLAG_ERROR, deployed, recogniser_config, send

KEEPS, EVICTS = "claims_reaper_keeps", "claims_reaper_evicts"
REAPED_AFTER_S = 2.5  # the 1 s idle timeout, with room for a loaded machine


@pytest.fixture(scope="module")
def reaper_models(lab_server):
    configs = (
        recogniser_config(KEEPS, slots=2, idle_us=None, state_key="session", idle_evict_s="600"),
        recogniser_config(EVICTS, slots=2, idle_us=None, state_key="session", idle_evict_s="1.5"),
    )
    with deployed(lab_server, *configs):
        yield


def _abandon(client, model: str) -> tuple[int, int]:
    """A sequence that sends two chunks and never ends; returns (its tag, its last symbol)."""
    corrid, tag = unique_ids(2)
    send(client, model, corrid, tag, delta=3, start=True)
    last = send(client, model, corrid, tag, delta=5).symbol
    time.sleep(REAPED_AFTER_S)
    with pytest.raises(InferenceServerException, match=START_FLAG_ERROR):
        send(client, model, corrid, tag)  # Triton has reaped it
    return tag, last


def _read_cell(client, model: str, tag: int):
    """A fresh probe sequence whose second chunk carries `tag`: it reads that tag's cell."""
    corrid, own = unique_ids(2)
    send(client, model, corrid, own, start=True)
    reply = send(client, model, corrid, tag)
    send(client, model, corrid, own, end=True)
    return reply


def test_reaper_never_tells_the_model(reaper_models, client):
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
    reaped_tag, last_symbol = _abandon(client, KEEPS)

    reaped_cell = _read_cell(client, KEEPS, reaped_tag)
    assert (reaped_cell.state_in, reaped_cell.state_owner) == (last_symbol, reaped_tag)
    ended_cell = _read_cell(client, KEEPS, ended_tag)
    assert (ended_cell.state_in, ended_cell.state_owner) == (0, 0)  # END reached the model


def test_model_must_evict_reaped_state_itself(reaper_models, client):
    """The only cure is in the model: with its own idle eviction (here 1.5 s), the reaped
    sequence's state is gone once the model next runs.

    Source: as test_reaper_never_tells_the_model; the eviction is the recogniser's
    `idle_evict_s` (model_repository/asr_dynamic/1/model.py _evict_idle).
    """
    reaped_tag, _ = _abandon(client, EVICTS)
    cell = _read_cell(client, EVICTS, reaped_tag)
    assert (cell.state_in, cell.state_owner) == (0, 0)
