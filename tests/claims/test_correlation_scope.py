"""Correlation IDs are scoped per model: each sequence-batched model keeps its own sequences
(each model has its own SequenceBatchScheduler, core src/sequence_batch_scheduler/
sequence_batch_scheduler.cc), so one ID can be live on two models at once and neither disturbs
the other; on one model a second START for a live ID takes over that sequence (test_collisions.py).
"""
from __future__ import annotations

import tritonclient.http as http

from tests.claims.helpers import GATE_CODE, gate_config, gate_inputs, gate_reply, unique_name

CORRID = 4242


def _send(client, model, tag, start=False, end=False):
    return gate_reply(client.infer(model, gate_inputs(http, tag), sequence_id=CORRID, sequence_start=start,
                                   sequence_end=end))


def test_one_id_is_live_on_two_models_at_once(load, gate, client):
    first = load(gate_config(unique_name("scope_a"), gate.folder, scheduler="direct"), code=GATE_CODE)
    second = load(gate_config(unique_name("scope_b"), gate.folder, scheduler="direct"), code=GATE_CODE)
    assert _send(client, first, 1, start=True)["SEEN"] == 1
    assert _send(client, second, 2, start=True)["SEEN"] == 1
    # The START on the second model left the first model's sequence alone: it goes on, its count intact.
    assert _send(client, first, 3)["SEEN"] == 2
    assert _send(client, second, 4)["SEEN"] == 2
    assert _send(client, first, 5, end=True)["SEEN"] == 3
    assert _send(client, second, 6, end=True)["SEEN"] == 3
