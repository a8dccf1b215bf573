"""Triton's own latency quantiles: the summaries that `--metrics-config=summary_latencies=true` adds.

The lab's embedded server starts with them on (app/lab/server/embedded.py). Without that setting
Triton 2.51 exports only the counters (sums and counts), and the statistics API holds only sums and
counts too; with it, each model gets nv_inference_request_summary_us, nv_inference_queue_summary_us
and nv_inference_compute_infer_summary_us, each with the quantiles 0.5, 0.9, 0.95, 0.99 and 0.999
(core src/metric_model_reporter.h), observed once per successful request (core src/infer_stats.cc).
"""
from __future__ import annotations

import math

import numpy as np
import tritonclient.http as http

from app.lab.observation import server_stats
from tests.claims.helpers import PROBE_CODE, deployed, probe_config, unique_name
from tests.waiting import wait_for

DELAY_MS = 40
REQUESTS = 12
DEFAULT_QUANTILES = {"0.5", "0.9", "0.95", "0.99", "0.999"}


def _send(client, model: str, seq: int) -> None:
    data = http.InferInput("SEQ", [1, 1], "INT32")
    data.set_data_from_numpy(np.array([[seq]], dtype=np.int32))
    client.infer(model, [data])


def test_triton_exports_per_model_quantiles_of_request_queue_and_compute_time(lab_server, client):
    model = unique_name("claims_summaries")
    with deployed(lab_server, probe_config(model, delay_ms=DELAY_MS), code=PROBE_CODE):
        for seq in range(REQUESTS):
            _send(client, model, seq)
        # Triton records a request's statistics just after its reply: wait until all are counted.
        found = wait_for(
            lambda: (q := server_stats.model_quantiles(lab_server.metrics_url, model))
            and all(q.get(k, {}).get("count") == REQUESTS for k in server_stats.SUMMARIES) and q,
            timeout_s=10, what="the summaries to count every request")
        counters = server_stats.model_metrics(lab_server.metrics_url, model)
    for kind in server_stats.SUMMARIES:
        assert set(found[kind]) >= DEFAULT_QUANTILES, (kind, found[kind])
        assert all(not math.isnan(found[kind][q]) for q in DEFAULT_QUANTILES), found[kind]
    # The summaries' count is the success counter's; every execution sleeps DELAY_MS, so the
    # median compute time, and the median request time, are at least that.
    assert found["request"]["count"] == counters["nv_inference_request_success"] == REQUESTS
    assert found["compute"]["0.5"] >= DELAY_MS * 1000
    assert found["request"]["0.5"] >= found["compute"]["0.5"] * 0.9
    # The summaries' sums are the counters' sums (the queue counter is nv_inference_queue_duration_us).
    assert found["queue"]["sum"] == counters["nv_inference_queue_duration_us"]
