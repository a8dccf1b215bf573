"""Claims about the sequence batcher's `direct` strategy: slots, padding rows and the backlog.

One test-only deployment: the recogniser with 1 instance and 4 slots (so every sequence is in
one batcher), idle timeout 10 s (nothing is reaped during a test). The recogniser answers
with the SLOT (row) it ran in and the BATCH size it ran with. Each test ends its sequences.
Sources (Triton 2.51, core r24.10): src/sequence_batch_scheduler/sequence_batch_scheduler.cc
and .h; server docs/user_guide/implicit_state_management.md ("Direct").
"""
from __future__ import annotations

import time
from concurrent.futures import ThreadPoolExecutor

import pytest
from tritonclient.utils import InferenceServerException

from app.lab.observation import server_stats
from app.lab.observation.server_log import LogCode, LogWindow, raised_verbosity
from app.lab.scenario.ids import unique_ids
from tests.claims.helpers import deployed, recogniser_config, send, unique_name
from tests.waiting import has_line, wait_for, wait_for_log

MODEL = "claims_direct_1x4"


@pytest.fixture(scope="module")
def direct_model(lab_server):
    with deployed(lab_server, recogniser_config(MODEL, scheduler="direct", instances=1, slots=4)):
        yield MODEL


def test_padding_rows_reach_only_highest_ready_slot(direct_model, client):
    """Under `direct` a batch spans slots 0 up to the highest slot that has a ready request:
    empty or idle slots below it get a padding row (READY=0), slots above it get no row.
    With three sequences in slots 0-2, a request of the one in slot 1 runs as a batch of 2,
    slot 0's alone as a batch of 1, slot 2's as a batch of 3; slot 3 never gets a row.

    Source: DirectSequenceBatch::BatcherThread ("Collect requests from slot 0 to
    max_seq_slot"; a slot with an empty queue gets a null request with READY false).
    """
    a, b, c = unique_ids(3)
    starts = [send(client, direct_model, corrid, corrid, start=True) for corrid in (a, b, c)]
    assert [(r.slot, r.batch) for r in starts] == [(0, 1), (1, 2), (2, 3)]
    only_b = send(client, direct_model, b, b)
    only_a = send(client, direct_model, a, a)
    only_c = send(client, direct_model, c, c)
    assert [(r.slot, r.batch) for r in (only_b, only_a, only_c)] == [(1, 2), (0, 1), (2, 3)]
    # Each sequence read its own state: padding rows were skipped (READY honoured).
    assert [r.state_owner for r in (only_b, only_a, only_c)] == [b, a, c]
    for corrid in (c, b, a):
        send(client, direct_model, corrid, corrid, end=True)


def test_direct_batch_reaches_the_highest_ready_slot_not_the_highest_occupied(direct_model, client):
    """With all four slots held by open sequences, a request of the sequence in slot 0 runs alone,
    as a batch of 1, and one of slot 2 as a batch of 3: the batch ends at the highest slot that
    has a request ready, not at the highest slot a sequence occupies (which would give 4). So a
    waiting sequence's slot gets a padding row only when a higher slot of its instance is ready.

    Source: core r24.10 src/sequence_batch_scheduler/sequence_batch_scheduler.cc lines 1661-1691
    (max_seq_slot is the last slot whose queue holds a request) and 1733-1734 (requests are
    collected from slot 0 to max_seq_slot).
    """
    ids = unique_ids(4)
    assert [send(client, direct_model, x, x, start=True).slot for x in ids] == [0, 1, 2, 3]
    lowest = send(client, direct_model, ids[0], ids[0])
    middle = send(client, direct_model, ids[2], ids[2])
    assert [(r.slot, r.batch) for r in (lowest, middle)] == [(0, 1), (2, 3)]
    for corrid in ids:
        send(client, direct_model, corrid, corrid, end=True)


def test_new_sequence_takes_lowest_free_slot(direct_model, client):
    """A new sequence gets the lowest-numbered free slot (of the instance's batcher): after
    slot 1 and then slot 0 are freed, the next two sequences take 1 and 0, the one after
    them slot 3.

    Source: sequence_batch_scheduler.h BatcherSequenceSlotCompare (a priority queue of free
    slots ordered by slot number, lowest first); .cc ReleaseSequenceSlot pushes freed slots back.
    """
    a, b, c, d, e, f = unique_ids(6)
    slots = [send(client, direct_model, x, x, start=True).slot for x in (a, b, c)]
    send(client, direct_model, b, b, end=True)
    slots.append(send(client, direct_model, d, d, start=True).slot)
    send(client, direct_model, a, a, end=True)
    slots.append(send(client, direct_model, e, e, start=True).slot)
    slots.append(send(client, direct_model, f, f, start=True).slot)
    assert slots == [0, 1, 2, 1, 0, 3]
    for corrid in (c, d, e, f):
        send(client, direct_model, corrid, corrid, end=True)


def test_backlog_waits_and_is_never_refused(lab_server, direct_model, client):
    """With every slot taken, a new sequence is not refused: it waits in a backlog, first in
    first out, for as long as it takes (the sequence batcher has no queue policy), and gets
    the slot freed by the next END.

    Source: SequenceBatchScheduler::Enqueue ("Enqueuing CORRID ... into new backlog") and
    ReleaseSequenceSlot (the oldest backlog takes the freed slot); model_config.proto has no
    queue policy for sequence batching (server issue 5467).
    """
    holders = unique_ids(4)
    late_1, late_2 = unique_ids(2)
    for corrid in holders:
        send(client, direct_model, corrid, corrid, start=True)
    done_at: dict[int, float] = {}

    def start_waiting(corrid):
        reply = send(lab_server.client(), direct_model, corrid, corrid, start=True)
        done_at[corrid] = time.monotonic()
        return reply

    with raised_verbosity(lab_server, 1):
        window = LogWindow.start(lab_server)
        with ThreadPoolExecutor(max_workers=2) as pool:
            first = pool.submit(start_waiting, late_1)
            # The first is in the backlog before the second is sent: their order is the log's.
            wait_for_log(window, has_line(LogCode.BACKLOG_ENQUEUED, late_1, direct_model), f"CORRID {late_1} in the backlog")
            second = pool.submit(start_waiting, late_2)
            wait_for_log(window, has_line(LogCode.BACKLOG_ENQUEUED, late_2, direct_model), f"CORRID {late_2} in the backlog")
            waiting = (first.done(), second.done())
            freed_first_at = time.monotonic()
            send(client, direct_model, holders[2], holders[2], end=True)  # frees slot 2
            first_reply = first.result(timeout=30)
            second_waiting = not second.done()  # no slot is free for it until holders[0] ends
            send(client, direct_model, holders[0], holders[0], end=True)  # frees slot 0
            second_reply = second.result(timeout=30)
    assert waiting == (False, False), "all four slots were taken: both had to wait"
    assert done_at[late_1] >= freed_first_at and second_waiting
    assert (first_reply.slot, second_reply.slot) == (2, 0)  # FIFO: the first to wait gets the first slot
    backlog = window.select(model=direct_model, codes=[LogCode.BACKLOG_ENQUEUED])
    assert [e.corrid for e in backlog] == [str(late_1), str(late_2)]
    for corrid in (holders[1], holders[3], late_1, late_2):
        send(client, direct_model, corrid, corrid, end=True)


def test_backlogged_sequence_is_dropped_when_its_request_timeout_expires(lab_server, direct_model, client):
    """A sequence waiting in the backlog is dropped, not served late, when the request carries
    a timeout (Triton's own request timeout, not the client's) and it expires first: the
    request fails with UNAVAILABLE "timeout of the corresponding sequence has been expired",
    counted as a REJECTED failure.

    Source: sequence_batch_scheduler.cc Enqueue (a backlog's expiration_timestamp_ from
    TimeoutMicroseconds()) and ReaperThread ("Reap timed out backlog sequence",
    Status::Code::UNAVAILABLE, FailureReason::REJECTED).
    """
    holders = unique_ids(4)
    (late,) = unique_ids(1)
    for corrid in holders:
        send(client, direct_model, corrid, corrid, start=True)
    before = server_stats.model_metrics(lab_server.metrics_url, direct_model)
    started = time.monotonic()
    with pytest.raises(InferenceServerException) as dropped:
        send(client, direct_model, late, late, start=True, timeout_us=500_000)
    waited = time.monotonic() - started
    assert dropped.value.message() == "timeout of the corresponding sequence has been expired"
    assert waited >= 0.45, f"dropped after {waited:.2f} s, before its 0.5 s timeout"
    # RespondIfError (infer_request.cc, r24.10) sends the error before it counts it, so the counter
    # may lag the reply: wait for it to move, then check it moved by one.
    rejected = "nv_inference_request_failure{reason=REJECTED}"

    def counted():
        after = server_stats.model_metrics(lab_server.metrics_url, direct_model)
        return after if after.get(rejected, 0) > before.get(rejected, 0) else None

    after = wait_for(counted, "the REJECTED failure to be counted")
    assert after.get(rejected, 0) - before.get(rejected, 0) == 1
    for corrid in holders:
        send(client, direct_model, corrid, corrid, end=True)


def test_slot_zero_of_every_instance_fills_before_slot_one(load, client):
    """Free slots are handed out by slot number across all instances: with 2 instances x 3
    slots, the first two new sequences take slot 0 of each instance, the next two slot 1 of
    each, the last two slot 2 of each; no instance gets a slot 1 while another's slot 0 is free.
    (Which instance of a pair comes first is not ordered: the free slots are a heap keyed on
    the slot number alone.)

    Source: core r24.10 src/sequence_batch_scheduler/sequence_batch_scheduler.h lines 154-160
    (BatcherSequenceSlotCompare compares seq_slot_ only); sequence_batch_scheduler.cc lines
    318-323 (CreateBatchers pushes every slot of every instance) and 806-813 (Enqueue takes
    ready_batcher_seq_slots_.top() for a new sequence).
    """
    model = load(recogniser_config(unique_name("direct_2x3"), scheduler="direct", instances=2, slots=3))
    ids = unique_ids(6)
    placed = [(r.instance, r.slot) for r in (send(client, model, corrid, corrid, start=True) for corrid in ids)]
    for corrid in ids:
        send(client, model, corrid, corrid, end=True)
    assert [slot for _, slot in placed] == [0, 0, 1, 1, 2, 2], placed
    assert all({placed[i][0], placed[i + 1][0]} == {0, 1} for i in (0, 2, 4)), placed
