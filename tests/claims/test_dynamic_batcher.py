"""Claims about the dynamic batcher, proven on the embedded server with a test-only probe model.

The probe (tests/claims/models/batch_probe.py) sleeps 300 ms per execution on one instance,
so requests sent 60 ms apart queue behind it and the batcher forms batches of several. Each
reply says which batch (per-instance running number) and which row the request had; Triton's
own trace says when each request entered the queue.
"""
from __future__ import annotations

import secrets
import threading
import time
from concurrent.futures import ThreadPoolExecutor

import numpy as np
import pytest
import tritonclient.http as http
from tritonclient.grpc import model_config_pb2 as mc

from app.lab.observation import server_stats, server_trace
from app.lab.scenario.ids import unique_ids
from tests.claims.helpers import (
    FLAG_END,
    FLAG_START,
    GATE_CODE,
    PROBE_CODE,
    STRING_ID,
    deployed,
    gate_config,
    gate_inputs,
    gate_reply,
    probe_config,
    unique_name,
)
from tests.server_calls import ask
from tests.waiting import wait_for

MODEL = "claims_batch_probe"
REQUESTS = 14
GAP_S = 0.06
TIE_NS = 5_000_000  # 5 ms: closer than this, two arrivals are a race for the queue's lock (see the test)


@pytest.fixture(scope="module")
def probe_run(lab_server):
    """One run of REQUESTS requests, one thread each, sent GAP_S apart."""
    assert lab_server.trace_dir is not None, "the arrival order comes from the embedded server's trace"
    with deployed(lab_server, probe_config(MODEL, delay_ms=300), code=PROBE_CODE), lab_server.client() as control:
        assert server_trace.enable(control, MODEL)
        before = server_stats.snapshot(control, lab_server.metrics_url, MODEL)
        run_id = secrets.token_hex(4)
        replies: dict[int, dict] = {}
        errors: list[BaseException] = []
        t0 = time.perf_counter()

        def one(seq: int) -> None:
            try:
                time.sleep(max(0.0, t0 + seq * GAP_S - time.perf_counter()))
                with lab_server.client() as client:
                    data = http.InferInput("SEQ", [1, 1], "INT32")
                    data.set_data_from_numpy(np.array([[seq]], dtype=np.int32))
                    result = client.infer(MODEL, [data], request_id=f"{run_id}:{seq}")
                    replies[seq] = {k: int(result.as_numpy(k)[0, 0]) for k in ("SEQ_OUT", "BATCH_NO", "ROW", "BATCH_SIZE")}
            except BaseException as err:  # reported below, with the test's own message
                errors.append(err)

        threads = [threading.Thread(target=one, args=(i,)) for i in range(REQUESTS)]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join()
        assert not errors, errors
        after = server_stats.snapshot_after(control, lab_server.metrics_url, MODEL, before, REQUESTS)
        trace = server_trace.collect(lab_server.trace_dir, run_id, expected=REQUESTS)
        yield replies, trace, server_stats.delta(before, after)


def test_batches_keep_arrival_order(probe_run):
    """The dynamic batcher adds requests to a batch in the order it received them, and takes
    each next batch from the front of its queue: of two requests that entered the queue apart
    (trace QUEUE_START), the earlier ran in an earlier batch, or earlier in the same one.

    Source: server docs/user_guide/batcher.md ("Dynamic Batcher": requests are added in the
    order received; only priority levels let one overtake); core
    src/dynamic_batch_scheduler.cc (one FIFO queue per priority level). Enqueue takes the
    QUEUE_START time before it takes the queue's lock, so two requests that arrive together
    (a thread of this test held back by a busy machine) may join the queue in the other order
    than their times: pairs closer than TIE_NS are not held to an order.
    """
    replies, trace, _ = probe_run
    assert len(trace) == REQUESTS, "every request must be in the server's trace"
    trace["seq"] = trace["request_id"].str.split(":").str[1].astype(int)
    start = dict(zip(trace["seq"], trace["queue_start_ns"].astype(int), strict=True))
    placed = {seq: (replies[seq]["BATCH_NO"], replies[seq]["ROW"]) for seq in replies}
    apart = [(a, b) for a in start for b in start if start[b] - start[a] > TIE_NS]  # (earlier, later)
    overtaken = [(a, b, (start[b] - start[a]) / 1e6) for a, b in apart if placed[a] > placed[b]]
    assert not overtaken, ("(earlier, later, ms apart) pairs where the later request ran first: "
                           f"{overtaken}; (batch, row) by request: {placed}")
    assert len(apart) >= REQUESTS * (REQUESTS - 1) // 4, "most pairs arrived apart: the order was tested"
    assert all(replies[s]["SEQ_OUT"] == s for s in replies)
    # The scenario did batch: otherwise order within a batch was never tested.
    assert max(r["BATCH_SIZE"] for r in replies.values()) >= 3


def test_average_batch_is_inference_over_execution_count(probe_run):
    """The mean batch size a model ran is inference_count / execution_count from the
    statistics extension (and nv_inference_count / nv_inference_exec_count in the metrics):
    the first counts requests, the second model executions.

    Source: server docs/protocol/extension_statistics.md (inference_count, execution_count);
    docs/user_guide/metrics.md (nv_inference_count, nv_inference_exec_count).
    """
    replies, _, delta = probe_run
    batches = {r["BATCH_NO"]: r["BATCH_SIZE"] for r in replies.values()}
    assert sum(batches.values()) == REQUESTS  # every batch fully accounted for by its rows
    assert delta["inference_count"] == REQUESTS
    assert delta["execution_count"] == len(batches)
    assert delta["average_batch_size"] == pytest.approx(REQUESTS / len(batches))
    metrics = delta["metrics"]
    assert metrics["nv_inference_count"] / metrics["nv_inference_exec_count"] == pytest.approx(REQUESTS / len(batches))
    assert delta["batch_sizes"] == {size: list(batches.values()).count(size) for size in set(batches.values())}


WAITING, NOT_WAITING = "claims_probe_delay", "claims_probe_no_delay"


@pytest.fixture(scope="module")
def delay_probes(lab_server):
    configs = (probe_config(WAITING, delay_ms=0, queue_delay_us=1_000_000), probe_config(NOT_WAITING, delay_ms=0))
    with deployed(lab_server, *configs, code=PROBE_CODE):
        yield


def _burst(lab_server, model: str, count: int) -> tuple[list[dict], float]:
    """`count` requests sent together; their replies and Triton's mean queue time for them (s)."""
    with lab_server.client() as control:
        before = server_stats.snapshot(control, lab_server.metrics_url, model)

        def one(seq: int) -> dict:
            data = http.InferInput("SEQ", [1, 1], "INT32")
            data.set_data_from_numpy(np.array([[seq]], dtype=np.int32))
            result = ask(lab_server, "infer", model, [data])
            return {k: int(result.as_numpy(k)[0, 0]) for k in ("BATCH_NO", "BATCH_SIZE")}

        with ThreadPoolExecutor(max_workers=count) as pool:
            replies = list(pool.map(one, range(count)))
        after = server_stats.snapshot_after(control, lab_server.metrics_url, model, before, count)
        return replies, server_stats.delta(before, after)["mean_queue_us"] / 1e6


def test_delay_holds_a_lone_request_and_a_full_batch_goes_at_once(lab_server, delay_probes):
    """With max_queue_delay_microseconds set (here 1 s) the batcher holds a request that cannot
    fill a batch for up to the delay; once max_batch_size requests are queued the batch goes at
    once. Unset, the delay is 0: a lone request is not held.

    Source: server docs/user_guide/batcher.md ("Delayed Batching"); common
    protobuf/model_config.proto ModelDynamicBatching.max_queue_delay_microseconds (default 0);
    core r24.10 src/model_config_utils.cc (unset preferred_batch_size reads back as [max_batch_size]).
    """
    lone, lone_queue = _burst(lab_server, WAITING, 1)
    assert lone[0]["BATCH_SIZE"] == 1 and lone_queue >= 0.9, f"lone request queued {lone_queue:.3f} s"
    full, full_queue = _burst(lab_server, WAITING, 4)
    assert [r["BATCH_SIZE"] for r in full] == [4] * 4 and len({r["BATCH_NO"] for r in full}) == 1
    assert full_queue < 0.5, f"a full batch still queued {full_queue:.3f} s"
    unset = ask(lab_server, "get_model_config", NOT_WAITING)["dynamic_batching"]
    assert int(unset["max_queue_delay_microseconds"]) == 0
    # Triton fills an unset preferred_batch_size with max_batch_size (model_config_utils.cc
    # NormalizeModelConfig), which changes nothing: the batcher aims for the maximum anyway.
    assert [int(s) for s in unset["preferred_batch_size"]] == [4]
    _, default_queue = _burst(lab_server, NOT_WAITING, 1)
    assert default_queue < 0.5, f"with no delay set a lone request queued {default_queue:.3f} s"


EXPIRES_US = 200_000  # the one request's own timeout; the others keep the 60 s default


def _pending(lab_server, model: str) -> int:
    return int(server_stats.model_metrics(lab_server.metrics_url, model).get("nv_inference_pending_request_count", 0))


def test_delay_policy_lets_a_later_request_overtake_an_expired_one(lab_server, load, gate):
    """With a queue policy whose timeout_action is DELAY, a request that times out in the queue
    is not rejected but moved behind the requests that have not: X arrives before Y and Z,
    expires while the only instance is busy, and then runs after both of them, and is served.

    Setup: the gate probe, max_batch_size 1 (one request per batch, so the batch number is the
    order of execution), default_queue_policy { timeout_action: DELAY,
    default_timeout_microseconds: 60 s, allow_timeout_override: true }, and X sent with its
    own 0.2 s timeout. X is known to be queued once nv_inference_pending_request_count counts
    it; the test lets 0.2 s + 1 s pass after that before the instance is freed, and the trace
    then confirms, by the server's own clock, that X had expired before Y started.

    Source: core r24.10 src/scheduler_utils.cc lines 170-197 (PolicyQueue::Enqueue: a timeout
    stamp per request; a smaller request timeout wins when overriding is allowed), 214-276
    (ApplyPolicy: an expired request goes to delayed_queue_ under DELAY, is rejected otherwise)
    and 199-212 (Dequeue takes delayed requests only when no other is left); common r24.10
    protobuf/model_config.proto ModelQueuePolicy.
    """
    assert lab_server.trace_dir is not None, "the queue times come from the embedded server's trace"
    config = gate_config(unique_name("delay_policy"), gate.folder, scheduler="dynamic", max_batch_size=1)
    policy = config.dynamic_batching.default_queue_policy
    policy.timeout_action = mc.ModelQueuePolicy.DELAY
    policy.default_timeout_microseconds = 60_000_000
    policy.allow_timeout_override = True
    model = load(config, code=GATE_CODE)
    with lab_server.client() as control:
        assert server_trace.enable(control, model)
        run_id = secrets.token_hex(4)
        tags = {"G": 1, "X": 2, "Y": 3, "Z": 4}
        replies: dict[str, dict] = {}

        def one(name: str, timeout_us: int | None = None) -> None:
            result = ask(lab_server, "infer", model, gate_inputs(http, tags[name], hold=name == "G"), request_id=f"{run_id}:{name}", timeout=timeout_us)
            replies[name] = gate_reply(result)

        with ThreadPoolExecutor(max_workers=4) as pool:
            futures = [pool.submit(one, "G")]
            gate.wait_started(tags["G"])  # the only instance is busy: what comes next queues
            for queued, (name, timeout_us) in enumerate((("X", EXPIRES_US), ("Y", None), ("Z", None)), start=1):
                futures.append(pool.submit(one, name, timeout_us))
                wait_for(lambda queued=queued: _pending(lab_server, model) >= queued, f"{name} to show as pending")
                if name == "X":
                    x_queued_by = time.monotonic()
            time.sleep(max(0.0, x_queued_by + EXPIRES_US / 1e6 + 1.0 - time.monotonic()))  # X's timeout has run out
            gate.open(tags["G"])
            for future in futures:
                future.result(timeout=60)
        order = sorted(replies, key=lambda name: replies[name]["BATCH_NO"])
        assert order == ["G", "Y", "Z", "X"], order
        trace = server_trace.collect(lab_server.trace_dir, run_id, expected=4).set_index("request_id")
        queue_start = {name: trace.loc[f"{run_id}:{name}", "queue_start_ns"] for name in tags}
        assert queue_start["X"] < queue_start["Y"] < queue_start["Z"], "X arrived first"
        assert trace.loc[f"{run_id}:Y", "compute_start_ns"] > queue_start["X"] + EXPIRES_US * 1000, "X had expired when Y overtook it"


def test_dynamic_batcher_passes_the_correlation_id_to_the_model(load, gate, client):
    """The dynamic batcher does not drop a request's correlation ID: a Python model reads it
    with request.correlation_id() (an int, or a str for a string ID) and its flags with
    request.flags(), exactly as the client sent them. What the dynamic batcher does not give
    is a CORRID control input (a model without sequence_batching declares none), and it keeps
    no sequence together: the ID is only carried along.

    Source: core r24.10 src/backend_model.cc lines 1136-1148 (TRITONBACKEND_RequestCorrelationId
    reads the request's own ID, whatever the scheduler) and src/infer_request.cc lines 105-112;
    python_backend r24.10 src/python_be.cc lines 262-282 (the backend reads each request's ID,
    as a number or a string, and its flags).
    """
    model = load(gate_config(unique_name("dynamic_corrid"), gate.folder, scheduler="dynamic", max_batch_size=2), code=GATE_CODE)
    (corrid,) = unique_ids(1)
    numbered = gate_reply(client.infer(model, gate_inputs(http, 1), sequence_id=corrid, sequence_start=True))
    ended = gate_reply(client.infer(model, gate_inputs(http, 2), sequence_id=corrid, sequence_end=True))
    text_id = f"learner-{corrid}"
    named = gate_reply(client.infer(model, gate_inputs(http, 3), sequence_id=text_id))
    plain = gate_reply(client.infer(model, gate_inputs(http, 4)))
    assert [(r["CORRELATION_ID"], r["FLAGS"]) for r in (numbered, ended, plain)] == [(corrid, FLAG_START), (corrid, FLAG_END), (0, 0)]
    assert (named["CORRELATION_ID"], named["ID_TEXT"]) == (STRING_ID, text_id)
    assert numbered["CORRID_IN"] == numbered["READY_IN"] == -1  # no control input: the config has no sequence_batching
