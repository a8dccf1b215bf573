"""Claims about the sequence batcher's `oldest` strategy.

A test-only recogniser with 1 instance and 4 candidate sequences, state keyed by CORRID.
Source (Triton 2.51, core r24.10): src/sequence_batch_scheduler/sequence_batch_scheduler.cc
OldestSequenceBatch (it hands ready requests to a dynamic batcher); server
docs/user_guide/implicit_state_management.md ("Oldest").
"""
from __future__ import annotations

import threading
from concurrent.futures import ThreadPoolExecutor

import pytest
import tritonclient.grpc as grpc

from app.lab.observation.server_log import LogCode, LogWindow, raised_verbosity
from app.lab.scenario.ids import unique_ids
from tests.claims.helpers import GATE_CODE, deployed, gate_config, gate_inputs, gate_reply, recogniser_config, send, unique_name
from tests.waiting import has_line, wait_for_log

MODEL = "claims_oldest_1x4"
TWO_INSTANCES = "claims_oldest_2x2"


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


@pytest.fixture(scope="module")
def two_instance_model(lab_server):
    config = recogniser_config(TWO_INSTANCES, scheduler="oldest", instances=2, slots=2, state_key="corrid")
    with deployed(lab_server, config):
        yield TWO_INSTANCES


def test_oldest_binds_each_sequence_to_one_instance(two_instance_model, client):
    """Under `oldest` a sequence has no fixed row but keeps one instance for its whole life:
    four live sequences on 2 instances x 2 candidates fill both instances, and every chunk of
    each sequence runs on the instance its START ran on.

    Source: server docs/user_guide/implicit_state_management.md ("Oldest": all requests of a
    sequence are routed to the same model instance); core r24.10 sequence_batch_scheduler.cc
    (a correlation ID keeps its batcher and slot until END or the reaper frees them).
    """
    ids = unique_ids(4)
    instances: dict[int, list[int]] = {c: [send(client, two_instance_model, c, c, start=True).instance] for c in ids}
    for _ in range(4):
        for corrid in ids:
            instances[corrid].append(send(client, two_instance_model, corrid, corrid).instance)
    for corrid in ids:
        instances[corrid].append(send(client, two_instance_model, corrid, corrid, end=True).instance)
    assert all(len(set(seen)) == 1 for seen in instances.values()), instances
    assert sorted(seen[0] for seen in instances.values()) == [0, 0, 1, 1]


def test_oldest_with_max_batch_size_1_holds_several_sequences(lab_server, load, client):
    """Under `oldest` an instance's capacity is max_candidate_sequences, not max_batch_size:
    with max_batch_size 1 and 3 candidate sequences, one instance holds three open sequences
    at once (each runs alone, in batches of 1, and each keeps its own state, keyed by CORRID),
    and only a fourth has to wait in the backlog until one of them ends.

    Source: core r24.10 src/sequence_batch_scheduler/sequence_batch_scheduler.cc lines 160-171
    (seq_slot_cnt_ = max_batch_size, replaced by oldest.max_candidate_sequences when that is
    set) and 318-323 (that many slots per instance); common r24.10 protobuf/model_config.proto
    ModelSequenceBatching.StrategyOldest.max_candidate_sequences.
    """
    config = recogniser_config(unique_name("oldest_mbs1"), scheduler="oldest", instances=1, slots=3, state_key="corrid")
    config.max_batch_size = 1
    model = load(config)
    a, b, c, d = unique_ids(4)
    with raised_verbosity(lab_server, 1):
        window = LogWindow.start(lab_server)
        started = {x: send(client, model, x, x, delta=3, start=True) for x in (a, b, c)}
        steps = {x: send(client, model, x, x, delta=5) for x in (c, a, b)}
        fourth = ThreadPoolExecutor(max_workers=1)
        waiting = fourth.submit(send, lab_server.client(), model, d, d, start=True)
        wait_for_log(window, has_line(LogCode.BACKLOG_ENQUEUED, d, model), f"CORRID {d} in the backlog")
        assert not waiting.done()
        send(client, model, a, a, end=True)
        assert waiting.result(timeout=60).instance == 0
        fourth.shutdown()
    for corrid in (b, c, d):
        send(client, model, corrid, corrid, end=True)
    assert {(r.instance, r.batch) for r in (*started.values(), *steps.values())} == {(0, 1)}
    assert all(steps[x].state_owner == x and steps[x].state_in == started[x].symbol for x in (a, b, c))
    slots = {e.corrid: e.values["slot"] for e in window.select(model=model, corrids=[a, b, c], codes=[LogCode.SEQUENCE_ENQUEUED])}
    assert sorted(slots.values()) == ["0", "1", "2"]  # three candidate slots of the one instance
    assert [e.corrid for e in window.select(model=model, codes=[LogCode.BACKLOG_ENQUEUED])] == [str(d)]


def test_oldest_with_more_candidates_than_max_batch_size_holds_more_sequences(lab_server, load, client):
    """Under `oldest` the sequences an instance holds at once are max_candidate_sequences, which may
    exceed max_batch_size: with max_batch_size 2 and 4 candidates, one instance holds four open
    sequences (a direct instance with max_batch_size 2 holds two), every batch still has at most
    two rows, and only a fifth sequence waits in the backlog.

    Source: core r24.10 src/sequence_batch_scheduler/sequence_batch_scheduler.cc lines 160-171
    (seq_slot_cnt_ is oldest.max_candidate_sequences when set) and 318-323 (that many slots per
    instance); common r24.10 protobuf/model_config.proto lines 1473-1493 (StrategyOldest:
    'max_candidate_sequences' can be greater than the model's 'max_batch_size').
    """
    config = recogniser_config(unique_name("oldest_2x4"), scheduler="oldest", instances=1, slots=4, state_key="corrid")
    config.max_batch_size = 2
    model = load(config)
    ids = unique_ids(5)
    with raised_verbosity(lab_server, 1):
        window = LogWindow.start(lab_server)
        started = [send(client, model, x, x, start=True) for x in ids[:4]]
        fifth = ThreadPoolExecutor(max_workers=1)
        waiting = fifth.submit(send, lab_server.client(), model, ids[4], ids[4], start=True)
        wait_for_log(window, has_line(LogCode.BACKLOG_ENQUEUED, ids[4], model), f"CORRID {ids[4]} in the backlog")
        assert not waiting.done()
        steps = [send(client, model, x, x) for x in reversed(ids[:4])]  # all four are open at once
        send(client, model, ids[0], ids[0], end=True)
        waiting.result(timeout=60)
        fifth.shutdown()
    for corrid in ids[1:]:
        send(client, model, corrid, corrid, end=True)
    assert all(r.batch <= 2 for r in (*started, *steps))
    assert [r.state_owner for r in steps] == list(reversed(ids[:4]))  # each kept its own state
    slots = {e.corrid: e.values["slot"] for e in window.select(model=model, corrids=ids[:4], codes=[LogCode.SEQUENCE_ENQUEUED])}
    assert sorted(slots.values()) == ["0", "1", "2", "3"]  # four candidate slots of the one instance
    assert [e.corrid for e in window.select(model=model, codes=[LogCode.BACKLOG_ENQUEUED])] == [str(ids[4])]


OLDEST_DELAY_US = 4_000_000  # long enough that every START of the test reaches its batcher inside it


def _oldest_batches(lab_server, load, gate, instances: int) -> list[tuple[int, int]]:
    """Four sequences START at once on an oldest gate probe with max_batch_size 4 and a long
    queue delay; return (instance, batch size) of each one's first request (gRPC: one client each)."""
    config = gate_config(unique_name(f"oldest_per_instance_{instances}"), gate.folder, scheduler="oldest",
                         max_batch_size=4, instances=instances)
    config.sequence_batching.oldest.max_queue_delay_microseconds = OLDEST_DELAY_US
    model = load(config, code=GATE_CODE)
    ids = unique_ids(4)

    ready = threading.Barrier(len(ids))

    def send_all(corrid: int, start: bool) -> tuple[int, int]:
        with grpc.InferenceServerClient(lab_server.grpc_url) as own:
            own.is_server_live()  # connected before the barrier: the four requests leave together
            ready.wait(timeout=60)
            reply = gate_reply(own.infer(model, gate_inputs(grpc, corrid), sequence_id=corrid, sequence_start=start,
                                         sequence_end=not start))
        return reply["INSTANCE"], reply["BATCH_SIZE"]

    # START without END, so each sequence keeps a candidate slot of its own; then END them all.
    with ThreadPoolExecutor(len(ids)) as pool:
        started = list(pool.map(send_all, ids, [True] * len(ids)))
        list(pool.map(send_all, ids, [False] * len(ids)))
    return started


def test_oldest_batches_per_instance_so_more_instances_make_smaller_batches(lab_server, load, gate):
    """Under oldest each instance runs a dynamic batcher of its own, fed only by the sequences
    bound to it (core sequence_batch_scheduler.cc, OldestSequenceBatch). On one instance the four
    sequences fill a batch of max_batch_size 4 together; spread over two instances, each batcher
    sees two of them and can form batches of two only, however long its queue delay."""
    one = _oldest_batches(lab_server, load, gate, instances=1)
    assert [size for _, size in one] == [4, 4, 4, 4], one
    two = _oldest_batches(lab_server, load, gate, instances=2)
    assert sorted(instance for instance, _ in two) == [0, 0, 1, 1], two
    assert [size for _, size in two] == [2, 2, 2, 2], two
