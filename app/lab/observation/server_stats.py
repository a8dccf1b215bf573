"""The server's own account of a run: statistics API and Prometheus metrics, before and after."""
from __future__ import annotations

import time
import urllib.request
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, TypeVar

from prometheus_client.parser import text_string_to_metric_families
from prometheus_client.samples import Sample

if TYPE_CHECKING:
    import tritonclient.http as http

_Number = TypeVar("_Number", int, float)

METRICS = (
    "nv_inference_request_success",
    "nv_inference_request_failure",
    "nv_inference_count",
    "nv_inference_exec_count",
    "nv_inference_queue_duration_us",
    "nv_inference_compute_infer_duration_us",
    "nv_inference_pending_request_count",
)

# Triton's own latency quantiles (on only with --metrics-config=summary_latencies=true): per model,
# over the successful requests that finished in the last 60 s (prometheus-cpp's default window of
# five 12 s buckets, which Triton does not change), so not a delta of one run.
SUMMARIES = {
    "request": "nv_inference_request_summary_us",
    "queue": "nv_inference_queue_summary_us",
    "compute": "nv_inference_compute_infer_summary_us",
}
SUMMARY_WINDOW_S = 60


# Triton's statistics extension as tritonclient returns it, and delta()'s summary of it that the run records keep
# (its readers, the run figures among them, take it as a plain dict): nested JSON that tritonclient leaves untyped,
# read key by key with defaults, so its values stay Any.
@dataclass
class Snapshot:
    stats: dict[str, Any] = field(default_factory=dict)
    metrics: dict[str, float] = field(default_factory=dict)
    quantiles: dict[str, dict[str, float]] = field(default_factory=dict)


def model_stats(client: http.InferenceServerClient, model: str) -> dict[str, Any]:
    try:
        stats = client.get_inference_statistics(model_name=model).get("model_stats", [])
    except Exception:
        return {}
    return stats[0] if stats else {}


def scrape(metrics_url: str, timeout_s: float = 5.0) -> str | None:
    """The Prometheus exposition text, or None when the endpoint does not answer."""
    try:
        with urllib.request.urlopen(metrics_url, timeout=timeout_s) as reply:
            text: str = reply.read().decode()
            return text
    except OSError:
        return None


def model_samples(text: str, model: str, families: Iterable[str]) -> Iterator[tuple[str, Sample]]:
    """(family name, sample) for every sample of `model` in the named families.

    The parser renames counter samples (adds _total, and a _created sample) but the family
    keeps the name Triton or the model gave it, so families are matched by name."""
    for family in text_string_to_metric_families(text):
        if family.name not in families:
            continue
        for sample in family.samples:
            if sample.labels.get("model") == model and not sample.name.endswith("_created"):
                yield family.name, sample


def model_metrics(metrics_url: str, model: str) -> dict[str, float]:
    """Prometheus samples for one model, summed over versions: {name or name{reason}: value}."""
    text = scrape(metrics_url)
    if text is None:
        return {}
    values: dict[str, float] = {}
    for name, sample in model_samples(text, model, METRICS):
        reason = sample.labels.get("reason")
        key = f"{name}{{reason={reason}}}" if reason else name
        values[key] = values.get(key, 0.0) + sample.value
    return values


def quantiles_from_text(text: str, model: str) -> dict[str, dict[str, float]]:
    """Triton's summaries for one model: {"queue": {"0.5": us, ..., "count": n, "sum": us}, ...}.

    Empty when the server exports no summaries (started without summary_latencies=true). A
    quantile is NaN when no request finished in the window. With several versions loaded, the
    highest version's summary is kept (quantiles do not add up across versions)."""
    wanted = {family: kind for kind, family in SUMMARIES.items()}
    found: dict[str, dict[str, float]] = {}
    versions: dict[str, int] = {}
    for family, sample in model_samples(text, model, wanted):
        kind = wanted[family]
        version = int(sample.labels.get("version", "0") or 0)
        if version < versions.get(kind, version):
            continue
        if version > versions.get(kind, version):
            found.pop(kind, None)
        versions[kind] = version
        if "quantile" in sample.labels:
            key = sample.labels["quantile"]
        elif sample.name.endswith("_count"):
            key = "count"
        elif sample.name.endswith("_sum"):
            key = "sum"
        else:
            continue
        found.setdefault(kind, {})[key] = float(sample.value)
    return found


def model_quantiles(metrics_url: str, model: str) -> dict[str, dict[str, float]]:
    text = scrape(metrics_url)
    return {} if text is None else quantiles_from_text(text, model)


def snapshot(client: http.InferenceServerClient, metrics_url: str, model: str) -> Snapshot:
    return Snapshot(model_stats(client, model), model_metrics(metrics_url, model), model_quantiles(metrics_url, model))


def snapshot_after(client: http.InferenceServerClient, metrics_url: str, model: str, before: Snapshot, inferences: int, wait_s: float = 2.0) -> Snapshot:
    """The snapshot once the server has counted `inferences` more requests than `before`.

    Triton records an execution's statistics just after it sends the replies, so a snapshot
    taken the moment the last reply arrives can miss the last batch.
    """
    deadline = time.monotonic() + wait_s
    counted = int(before.stats.get("inference_count", 0)) + inferences
    while True:
        stats = model_stats(client, model)
        if int(stats.get("inference_count", 0)) >= counted or time.monotonic() > deadline:
            return Snapshot(stats, model_metrics(metrics_url, model), model_quantiles(metrics_url, model))
        time.sleep(0.05)


def delta(before: Snapshot, after: Snapshot) -> dict[str, Any]:
    """What this run added: counts, batch-size histogram, mean queue and compute per request."""
    def stat(snap: Snapshot, *path: str) -> float:
        node: Any = snap.stats
        for key in path:
            node = node.get(key, {}) if isinstance(node, dict) else {}
        return float(node or 0)

    def added(*path: str) -> float:
        return _increase(stat(before, *path), stat(after, *path))

    inferences = added("inference_count")
    executions = added("execution_count")
    queue_ns = added("inference_stats", "queue", "ns")
    compute_ns = added("inference_stats", "compute_infer", "ns")
    successes = added("inference_stats", "success", "count")
    batches: dict[int, int] = {}
    old = {int(b["batch_size"]): int(b.get("compute_infer", {}).get("count", 0)) for b in before.stats.get("batch_stats", [])}
    for b in after.stats.get("batch_stats", []):
        size = int(b["batch_size"])
        count = _increase(old.get(size, 0), int(b.get("compute_infer", {}).get("count", 0)))
        if count > 0:
            batches[size] = count
    metric_delta = {k: _increase(before.metrics.get(k, 0.0), after.metrics.get(k, 0.0)) for k in after.metrics}
    metric_delta["nv_inference_pending_request_count"] = after.metrics.get("nv_inference_pending_request_count", 0.0)
    executed = sum(batches.values())
    return {
        # Triton's sequence batcher counts one execution per request here; batch_stats below
        # shows the batches the model really ran (padding rows included).
        "mean_executed_batch": sum(k * v for k, v in batches.items()) / executed if executed else 0.0,
        "inference_count": int(inferences),
        "execution_count": int(executions),
        "average_batch_size": inferences / executions if executions else 0.0,
        "mean_queue_us": queue_ns / successes / 1e3 if successes else 0.0,
        "mean_compute_us": compute_ns / successes / 1e3 if successes else 0.0,
        "batch_sizes": dict(sorted(batches.items())),
        "metrics": metric_delta,
        # A window, not a delta: what Triton's summaries said when the run ended (see SUMMARIES).
        "triton_quantiles": after.quantiles,
    }


def _increase(before: _Number, after: _Number) -> _Number:
    """A counter's growth between two readings; one that went down was reset (the model was
    reloaded in between), so everything it counts now happened since."""
    return after - before if after >= before else after
