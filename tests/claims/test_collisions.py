"""Claims about two clients that use the same correlation ID at once (a collision).

On the shipped `asr_sequence_direct` (its idle timeout is 5 s, so nothing is reaped during a
test). Source (Triton 2.51, core r24.10): src/sequence_batch_scheduler/
sequence_batch_scheduler.cc SequenceBatchScheduler::Enqueue.
"""
from __future__ import annotations

import pytest
from tritonclient.utils import InferenceServerException

from app.lab.observation import Level, LogCode, LogWindow
from app.lab.scenario.ids import unique_ids
from tests.claims.helpers import START_FLAG_ERROR, send

MODEL = "asr_sequence_direct"


def test_start_for_inflight_id_logs_conflict_warning(lab_server):
    """A START for a correlation ID whose sequence has not ended is accepted (neither client
    gets an error), but the server notices: it logs a WARNING, at the default verbosity, that
    the sequence "has a conflict" and that the previous one "will be terminated early".

    Source: Enqueue, LOG_WARNING "sequence <id> for model '<m>' has a conflict. The previous
    sequence did not end before this sequence start. Previous sequence will be terminated early."
    """
    with lab_server.client() as first, lab_server.client() as second:
        (corrid,) = unique_ids(1)
        tag_1, tag_2 = unique_ids(2)
        window = LogWindow.start(lab_server)
        send(first, MODEL, corrid, tag_1, start=True)
        send(second, MODEL, corrid, tag_2, start=True)  # no exception: the client is not told
        warnings = window.select(model=MODEL, corrids=[corrid])
        assert [(e.level, e.code) for e in warnings] == [(Level.WARNING, LogCode.SEQUENCE_CONFLICT)]
        assert warnings[0].message == (
            f"sequence {corrid} for model '{MODEL}' has a conflict. The previous sequence did not end "
            "before this sequence start. Previous sequence will be terminated early."
        )
        send(second, MODEL, corrid, tag_2, end=True)


@pytest.mark.parametrize("ender", ["first", "second"])
def test_other_client_refused_after_end(lab_server, ender):
    """After either colliding client sends END, the sequence is over for both: the other
    client's next chunk carries no START, so it is refused with the START-flag error.

    Source: Enqueue (an END removes the correlation ID's slot mapping; a later request without
    START for an unknown ID is refused with INVALID_ARG).
    """
    clients = {"first": lab_server.client(), "second": lab_server.client()}
    (corrid,) = unique_ids(1)
    tags = dict(zip(clients, unique_ids(2), strict=True))
    for name in ("first", "second"):
        send(clients[name], MODEL, corrid, tags[name], start=True)
    send(clients[ender], MODEL, corrid, tags[ender], end=True)
    other = "second" if ender == "first" else "first"
    with pytest.raises(InferenceServerException, match=START_FLAG_ERROR):
        send(clients[other], MODEL, corrid, tags[other])


def test_colliding_start_continues_in_the_same_slot(lab_server):
    """The second START does not get a slot of its own: Triton continues the new sequence in
    the slot the ID already holds, so from then on both clients' chunks reach the model as
    one sequence, and the first client reads state the second one wrote.

    Source: Enqueue ("In this case we continue the new sequence (in either backlog or sequence
    slot). It is ok for a backlog/slot to have multiple starts... as long as it has a single end.")
    """
    with lab_server.client() as first, lab_server.client() as second:
        (corrid,) = unique_ids(1)
        tag_1, tag_2 = unique_ids(2)
        opened = send(first, MODEL, corrid, tag_1, start=True)
        send(first, MODEL, corrid, tag_1)
        restarted = send(second, MODEL, corrid, tag_2, start=True)
        merged = send(first, MODEL, corrid, tag_1)
        assert (restarted.instance, restarted.slot) == (merged.instance, merged.slot) == (opened.instance, opened.slot)
        assert restarted.state_in == 0  # the model saw START in that slot and began afresh
        assert merged.state_owner == tag_2  # the first client now reads the second client's state
        send(second, MODEL, corrid, tag_2, end=True)
