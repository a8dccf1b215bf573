"""Figures built from real runs on the session's Triton have the traces a learner needs."""
from __future__ import annotations

import numpy as np
import pytest

from app.lab import analysis, figures, presets
from app.lab.presets import Traffic

TRAFFIC = Traffic(sessions=6, length=12, seed=4)


@pytest.fixture(scope="module")
def fix_run(lab_server, deployer):
    applied, result = presets.run_preset(lab_server, deployer, "the_fix", owner="test-figures", traffic=TRAFFIC)
    assert result.traced, "the session's server writes a trace; figures need it"
    return applied, result


@pytest.fixture(scope="module")
def mistake_run(lab_server, deployer):
    for _ in range(3):  # corruption depends on arrival timing; it shows within a few runs
        applied, result = presets.run_preset(lab_server, deployer, "the_mistake", owner="test-figures", traffic=TRAFFIC)
        if not result.all_intact:
            return applied, result
    pytest.fail("the mistake never corrupted a session in 3 runs")


def names(fig) -> list[str]:
    return [trace.name for trace in fig.data]


def test_timeline_has_one_bar_trace_per_session_and_every_traced_request(fix_run):
    applied, result = fix_run
    s = applied.settings
    fig = figures.slot_timeline(result.requests, s.scheduler, s.instances, s.slots)
    sessions = [t for t in fig.data if t.name.startswith("session ")]
    assert [t.name for t in sessions] == [f"session {i + 1}" for i in range(TRAFFIC.sessions)]
    assert sum(len(t.x) for t in sessions) == len(analysis.marks(result.requests)) == len(result.requests)
    assert len(fig.layout.yaxis.tickvals) == s.instances * s.slots
    assert all(t.orientation == "h" and t.customdata is not None for t in sessions)
    # direct keeps each session in one row: every session's bars share one y value
    assert all(len(set(t.y)) == 1 for t in sessions)


def test_timeline_shows_padding_and_queue_waits_when_present(fix_run):
    applied, result = fix_run
    fig = figures.slot_timeline(result.requests, "direct", applied.settings.instances, applied.settings.slots)
    padding = analysis.padding_rows(result.requests)
    padding_traces = [t for t in fig.data if t.name == "padding row (READY=0)"]
    assert len(padding_traces) == (1 if len(padding) else 0)
    if len(padding):
        assert len(padding_traces[0].x) == len(padding)
    waits = [t for t in fig.data if t.name == "waiting in the queue"]
    assert len(waits) == 1 and np.isnan(np.array(waits[0].x, dtype=float)).any()  # segments split by gaps
    assert "letter came back wrong" not in names(fig)  # the fix keeps every letter


def test_timeline_of_the_mistake_marks_wrong_letters_and_mixed_rows(mistake_run):
    applied, result = mistake_run
    fig = figures.slot_timeline(result.requests, "dynamic", applied.settings.instances, applied.settings.slots)
    wrong = next(t for t in fig.data if t.name == "letter came back wrong")
    assert len(wrong.x) == int((result.requests["symbol"] != result.requests["expected"]).sum())
    sessions = [t for t in fig.data if t.name.startswith("session ")]
    assert any(len(set(t.y)) > 1 for t in sessions), "the dynamic batcher moves sessions between rows"
    hover = " ".join(sessions[0].hovertemplate.split())
    assert "queued" in hover and "read state" in hover and "written by" in hover


def test_server_side_figures(fix_run):
    _, result = fix_run
    batches = figures.batch_sizes(result.server, result.requests)
    assert names(batches) == ["server statistics", "this run's trace"]
    assert sum(batches.data[1].y) == len(analysis.executions(result.requests))
    queue = figures.queue_vs_compute(result.requests, result.server)
    assert names(queue) == ["queue", "compute"]
    assert set(queue.data[0].y) == {"this run's trace", "statistics API", "Prometheus metrics"}
    latency = figures.latency_percentiles(result.requests, result.sessions)
    assert names(latency) == ["p50", "p95", "p99"]
    work = figures.instance_work(result.requests)
    assert len(work.data) == 3 and list(work.data[1].x) == ["instance 0", "instance 1"]
    assert sum(work.data[1].y) == len(result.requests)


def test_lab_figures_builds_every_figure(fix_run):
    applied, result = fix_run
    built = figures.lab_figures(result, applied.settings.scheduler, applied.settings.instances, applied.settings.slots)
    assert set(built) == {"timeline", "batch_sizes", "queue_vs_compute", "latency", "instances"}
    assert all(fig.to_json() for fig in built.values())
