"""server_stats.delta on hand-made snapshots: what a run added, including the awkward cases.

The dicts have the shape of Triton's statistics extension (GET /v2/models/<m>/stats) and of
the Prometheus samples model_metrics keeps, with numbers chosen so every result is known.
"""
from __future__ import annotations

import pytest

from app.lab.observation.server_stats import Snapshot, delta, model_metrics

MS = 1_000_000  # ns


def stats(inferences: int, executions: int, successes: int, queue_ns: int, compute_ns: int, batches: dict[int, int]) -> dict:
    return {
        "name": "m",
        "inference_count": inferences,
        "execution_count": executions,
        "inference_stats": {
            "success": {"count": successes, "ns": 0},
            "queue": {"count": successes, "ns": queue_ns},
            "compute_infer": {"count": successes, "ns": compute_ns},
        },
        "batch_stats": [{"batch_size": size, "compute_infer": {"count": n, "ns": 0}} for size, n in batches.items()],
    }


def metrics(success: float, failure: float, queue_us: float, pending: float) -> dict:
    return {
        "nv_inference_request_success": success,
        "nv_inference_request_failure{reason=BACKEND}": failure,
        "nv_inference_queue_duration_us": queue_us,
        "nv_inference_pending_request_count": pending,
    }


def test_a_run_adds_counts_means_batches_and_metrics():
    before = Snapshot(stats(100, 40, 100, 100 * MS, 50 * MS, {1: 10, 4: 30}), metrics(100, 2, 5000, 3))
    # +12 requests in 5 executions: 2 of size 1, 1 of size 2 (new size), 2 of size 4; 4 ms queue, 1 ms compute each.
    after = Snapshot(stats(112, 45, 112, 148 * MS, 62 * MS, {1: 12, 2: 1, 4: 32}), metrics(112, 2, 5480, 1))
    d = delta(before, after)
    assert d["inference_count"] == 12 and d["execution_count"] == 5
    assert d["average_batch_size"] == pytest.approx(12 / 5)
    assert d["mean_queue_us"] == pytest.approx(4000.0) and d["mean_compute_us"] == pytest.approx(1000.0)
    assert d["batch_sizes"] == {1: 2, 2: 1, 4: 2}  # sizes that ran no batch in this run are left out
    assert d["mean_executed_batch"] == pytest.approx((1 * 2 + 2 * 1 + 4 * 2) / 5)
    m = d["metrics"]
    assert m["nv_inference_request_success"] == 12
    assert m["nv_inference_request_failure{reason=BACKEND}"] == 0
    assert m["nv_inference_queue_duration_us"] == 480
    assert m["nv_inference_pending_request_count"] == 1  # a gauge: its value now, not a difference


def test_batch_sizes_come_back_sorted():
    # Triton lists batch_stats in no promised order; the figure reads sizes left to right.
    after = Snapshot(stats(8, 3, 8, 0, 0, {4: 1, 1: 1, 3: 1}))
    assert list(delta(Snapshot(), after)["batch_sizes"]) == [1, 3, 4]


def test_a_model_missing_before_counts_from_zero():
    # model_stats returns {} for a model the server does not know (not loaded yet).
    after = Snapshot(stats(8, 2, 8, 8 * MS, 16 * MS, {4: 2}), {"nv_inference_request_success": 8.0})
    d = delta(Snapshot(), after)
    assert d["inference_count"] == 8 and d["execution_count"] == 2
    assert d["batch_sizes"] == {4: 2} and d["mean_executed_batch"] == 4.0
    assert d["mean_queue_us"] == pytest.approx(1000.0) and d["mean_compute_us"] == pytest.approx(2000.0)
    assert d["metrics"]["nv_inference_request_success"] == 8


def test_a_model_missing_on_both_sides_is_all_zero_and_never_divides_by_zero():
    d = delta(Snapshot(), Snapshot())
    assert d == {
        "mean_executed_batch": 0.0,
        "inference_count": 0,
        "execution_count": 0,
        "average_batch_size": 0.0,
        "mean_queue_us": 0.0,
        "mean_compute_us": 0.0,
        "batch_sizes": {},
        "metrics": {"nv_inference_pending_request_count": 0.0},
        "triton_quantiles": {},
    }


def test_a_model_reloaded_during_the_run_counts_from_its_reset():
    # Reloading a model (Apply) restarts its counters: the new ones are what happened since.
    before = Snapshot(stats(500, 200, 500, 900 * MS, 300 * MS, {1: 50, 4: 150}), metrics(500, 1, 9000, 0))
    after = Snapshot(stats(6, 3, 6, 12 * MS, 6 * MS, {2: 3}), metrics(6, 0, 60, 0))
    d = delta(before, after)
    assert d["inference_count"] == 6 and d["execution_count"] == 3
    assert d["average_batch_size"] == 2.0
    assert d["mean_queue_us"] == pytest.approx(2000.0) and d["mean_compute_us"] == pytest.approx(1000.0)
    assert d["batch_sizes"] == {2: 3}
    assert d["metrics"]["nv_inference_request_success"] == 6
    assert d["metrics"]["nv_inference_queue_duration_us"] == 60
    assert d["metrics"]["nv_inference_request_failure{reason=BACKEND}"] == 0


def test_no_successes_gives_zero_means_not_an_error():
    before = Snapshot(stats(4, 4, 4, 4 * MS, 4 * MS, {1: 4}))
    after = Snapshot(stats(4, 4, 4, 4 * MS, 4 * MS, {1: 4}))
    d = delta(before, after)
    assert d["mean_queue_us"] == 0.0 and d["mean_compute_us"] == 0.0
    assert d["average_batch_size"] == 0.0 and d["mean_executed_batch"] == 0.0 and d["batch_sizes"] == {}


def test_metrics_present_only_before_are_dropped_and_new_ones_count_from_zero():
    before = Snapshot(metrics={"nv_inference_request_failure{reason=REJECTED}": 3.0})
    after = Snapshot(metrics={"nv_inference_request_failure{reason=BACKEND}": 2.0})
    assert delta(before, after)["metrics"] == {
        "nv_inference_request_failure{reason=BACKEND}": 2.0,
        "nv_inference_pending_request_count": 0.0,
    }


def test_model_metrics_of_an_unreachable_endpoint_is_empty():
    # The page then shows the statistics API's figures alone instead of failing.
    assert model_metrics("http://127.0.0.1:9/metrics", "m") == {}
