"""A request's server-side `timeout` is not the client's `client_timeout`.

`timeout` (microseconds) travels to Triton as a request parameter; the dynamic batcher's queue
policy acts on it (only with allow_timeout_override, and only to shorten default_timeout_microseconds),
and Triton itself fails the request with "Request timeout expired" (core src/scheduler_utils.cc,
src/dynamic_batch_scheduler.cc). `client_timeout` (seconds) is the gRPC client's deadline: the
client stops waiting and gRPC cancels the call; no queue policy is involved.

The gate probe holds the one instance busy, so a later request waits in the queue for certain.
"""
from __future__ import annotations

import threading
import time

import pytest
import tritonclient.grpc as grpc
from tritonclient.utils import InferenceServerException

from app.lab.observation import server_stats
from tests.claims.helpers import GATE_CODE, gate_config, gate_inputs, unique_name
from tests.waiting import wait_for

DEFAULT_TIMEOUT_US = 30_000_000  # the policy's own limit: far beyond the test
OVERRIDE_US = 100_000  # the request's shorter one


def _config(name, gate_dir):
    config = gate_config(name, gate_dir, scheduler="dynamic", max_batch_size=1)
    policy = config.dynamic_batching.default_queue_policy
    policy.default_timeout_microseconds = DEFAULT_TIMEOUT_US
    policy.allow_timeout_override = True
    return config


@pytest.fixture()
def held(lab_server, load, gate):
    """A dynamic-batched gate probe whose one instance is held by request 1 until the test ends."""
    model = load(_config(unique_name("timeouts"), gate.folder), code=GATE_CODE)
    errors: list[BaseException] = []

    def hold() -> None:
        try:
            with grpc.InferenceServerClient(lab_server.grpc_url) as c:
                c.infer(model, gate_inputs(grpc, 1, hold=True))
        except BaseException as err:  # reported by the test
            errors.append(err)

    thread = threading.Thread(target=hold)
    thread.start()
    gate.wait_started(1)
    try:
        yield model
    finally:
        gate.open(1)
        thread.join(timeout=60)
    assert not errors, errors


def _failures(lab_server, model) -> dict:
    metrics = server_stats.model_metrics(lab_server.metrics_url, model)
    return {k: v for k, v in metrics.items() if k.startswith("nv_inference_request_failure")}


def test_the_server_side_timeout_fails_a_queued_request_on_the_server(lab_server, held):
    with grpc.InferenceServerClient(lab_server.grpc_url) as c, pytest.raises(InferenceServerException) as caught:
        c.infer(held, gate_inputs(grpc, 2), timeout=OVERRIDE_US)  # microseconds, a schedule-policy parameter
    assert "Request timeout expired" in str(caught.value)
    # Triton itself failed it: the failure counter says REJECTED.
    wait_for(lambda: _failures(lab_server, held).get("nv_inference_request_failure{reason=REJECTED}") == 1,
             what="a REJECTED failure in Triton's metrics", timeout_s=10)
    # Triton's latency summaries observe successful requests only: the rejected one is in none
    # (and the held request has not finished yet).
    quantiles = server_stats.model_quantiles(lab_server.metrics_url, held)
    assert quantiles and all(q.get("count") == 0 for q in quantiles.values()), quantiles


def test_the_client_timeout_is_the_clients_own_deadline(lab_server, held):
    with grpc.InferenceServerClient(lab_server.grpc_url) as c, pytest.raises(InferenceServerException) as caught:
        c.infer(held, gate_inputs(grpc, 3), client_timeout=0.2)  # seconds, a gRPC deadline
    message = str(caught.value)
    assert "Deadline" in message and "Request timeout expired" not in message, message
    assert _failures(lab_server, held).get("nv_inference_request_failure{reason=REJECTED}", 0) == 0


HOLD_S = 0.5  # how long the test keeps the instance busy after request 4 is seen waiting


def test_queue_time_includes_the_wait_for_a_free_instance(lab_server, held, gate):
    """Triton's queue time runs from a request's entry into the scheduler to the start of its
    execution (core src/infer_stats.cc, compute_start - queue_start): with no queue delay, a
    request that waits only for the busy instance still counts that wait as queue time."""
    with lab_server.client() as control:
        before = server_stats.snapshot(control, lab_server.metrics_url, held)
        result: dict = {}

        def fourth() -> None:
            with grpc.InferenceServerClient(lab_server.grpc_url) as c:
                result["reply"] = c.infer(held, gate_inputs(grpc, 4))

        thread = threading.Thread(target=fourth)
        thread.start()
        wait_for(lambda: server_stats.model_metrics(lab_server.metrics_url, held).get("nv_inference_pending_request_count") == 1,
                 what="request 4 waiting for the busy instance", timeout_s=10)
        waiting_since = time.monotonic()
        time.sleep(HOLD_S)  # the wait to be measured: the instance stays busy this long
        gate.open(1)
        thread.join(timeout=60)
        waited_s = time.monotonic() - waiting_since
        assert "reply" in result
        after = server_stats.snapshot_after(control, lab_server.metrics_url, held, before, 2)
    added = server_stats.delta(before, after)
    # Two requests ran: request 1 (no wait) and request 4, which waited at least HOLD_S.
    assert added["inference_count"] == 2
    assert added["mean_queue_us"] * 2 >= HOLD_S * 1e6 * 0.9, (added["mean_queue_us"], waited_s)
