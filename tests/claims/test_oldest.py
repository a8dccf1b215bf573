"""Claims about the sequence batcher's `oldest` strategy.

A test-only recogniser with 1 instance and 4 candidate sequences, state keyed by CORRID.
Source (Triton 2.51, core r24.10): src/sequence_batch_scheduler/sequence_batch_scheduler.cc
OldestSequenceBatch (it hands ready requests to a dynamic batcher), docs/user_guide/
architecture.md ("Oldest").
"""
from __future__ import annotations

import pytest

from app.lab.ids import unique_ids
from tests.claims.helpers import deployed, recogniser_config, send

MODEL = "claims_oldest_1x4"


@pytest.fixture(scope="module")
def oldest_model(lab_server):
    config = recogniser_config(MODEL, scheduler="oldest", instances=1, slots=4, state_key="corrid")
    with deployed(lab_server, config):
        yield MODEL


def test_oldest_has_no_padding_rows(oldest_model, client):
    """Under `oldest` a batch holds only real requests: with three sequences live, a request
    of the third alone runs as a batch of 1 in row 0 (under `direct` it would be row 2 of a
    batch of 3, see test_direct_slots), and rows say nothing about which sequence it is.

    Source: OldestSequenceBatch enqueues each ready request into its own dynamic batcher,
    which batches only requests that are present; there is no null (READY=0) request.
    """
    a, b, c = unique_ids(3)
    starts = [send(client, oldest_model, x, x, start=True) for x in (a, b, c)]
    steps = [send(client, oldest_model, x, x) for x in (c, a, b)]
    assert [(r.slot, r.batch) for r in starts + steps] == [(0, 1)] * 6
    assert [r.state_owner for r in steps] == [c, a, b]  # state followed the CORRID, not the row
    for corrid in (a, b, c):
        send(client, oldest_model, corrid, corrid, end=True)
