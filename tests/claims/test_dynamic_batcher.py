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

from app.lab.observation import server_stats, server_trace
from tests.claims.helpers import PROBE_CODE, deployed, probe_config

MODEL = "claims_batch_probe"
REQUESTS = 14
GAP_S = 0.06


@pytest.fixture(scope="module")
def probe_run(lab_server):
    """One run of REQUESTS requests, one thread each, sent GAP_S apart."""
    assert lab_server.trace_dir is not None, "the arrival order comes from the embedded server's trace"
    with deployed(lab_server, probe_config(MODEL, delay_ms=300), code=PROBE_CODE):
        control = lab_server.client()
        assert server_trace.enable(control, MODEL)
        before = server_stats.snapshot(control, lab_server.metrics_url, MODEL)
        run_id = secrets.token_hex(4)
        replies: dict[int, dict] = {}
        errors: list[BaseException] = []
        t0 = time.perf_counter()

        def one(seq: int) -> None:
            try:
                time.sleep(max(0.0, t0 + seq * GAP_S - time.perf_counter()))
                client = lab_server.client()
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
    each next batch from the front of its queue: sorted by the moment each request entered
    the queue (trace QUEUE_START), the (batch, row) each one ran in only ever increases.

    Source: server docs/user_guide/batcher.md ("Dynamic Batcher": requests are added in the
    order received; only priority levels let one overtake); core
    src/dynamic_batch_scheduler.cc (one FIFO queue per priority level).
    """
    replies, trace, _ = probe_run
    assert len(trace) == REQUESTS, "every request must be in the server's trace"
    trace["seq"] = trace["request_id"].str.split(":").str[1].astype(int)
    arrival = trace.sort_values("queue_start_ns")["seq"].tolist()
    placed = [(replies[seq]["BATCH_NO"], replies[seq]["ROW"]) for seq in arrival]
    assert placed == sorted(placed), f"arrival order {arrival} ran as (batch, row) {placed}"
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
    control = lab_server.client()
    before = server_stats.snapshot(control, lab_server.metrics_url, model)

    def one(seq: int) -> dict:
        data = http.InferInput("SEQ", [1, 1], "INT32")
        data.set_data_from_numpy(np.array([[seq]], dtype=np.int32))
        result = lab_server.client().infer(model, [data])
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
    unset = lab_server.client().get_model_config(NOT_WAITING)["dynamic_batching"]
    assert int(unset["max_queue_delay_microseconds"]) == 0
    # Triton fills an unset preferred_batch_size with max_batch_size (model_config_utils.cc
    # NormalizeModelConfig), which changes nothing: the batcher aims for the maximum anyway.
    assert [int(s) for s in unset["preferred_batch_size"]] == [4]
    _, default_queue = _burst(lab_server, NOT_WAITING, 1)
    assert default_queue < 0.5, f"with no delay set a lone request queued {default_queue:.3f} s"
