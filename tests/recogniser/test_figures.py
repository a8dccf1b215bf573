"""Figures drawn from a hand-made run whose slots, padding rows, waits and batches are known,
then from single real runs on the session's Triton.

The hand-made run (times in seconds, instances x slots = 2 x 4):
  instance 0, t=10 ms, batch 3: session 1 chunk 1 in slot 0, session 2 chunk 1 in slot 2; slot 1 padding
  instance 0, t=30 ms, batch 1: session 1 chunk 2 in slot 0, came back wrong
  instance 1, t=12 ms, batch 1: session 3 chunk 1 in slot 0, after 8 ms in the queue
  instance 1, t=40 ms, batch 2: session 3 chunk 2 in slot 0; slot 1 padding
Every other request waited 0.1 ms, under the 0.5 ms the timeline draws as a wait.
"""
from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from app.lab.records import Traffic
from app.recogniser import figures
from app.recogniser.engine import presets
from app.recogniser.engine.judgement import analysis
from app.recogniser.engine.judgement.analysis import RunAnalysis
from tests.recogniser.engine.test_analysis import request

ROW = {(i, s): 4 * i + s for i in range(2) for s in range(4)}  # y index of each instance x slot row
QUICK = 0.1  # ms in the queue: below the drawn threshold


@pytest.fixture()
def requests() -> pd.DataFrame:
    return pd.DataFrame([
        request(0, 0, 0, 0, 3, 0.010, queue_ms=QUICK),
        request(1, 0, 0, 2, 3, 0.010, queue_ms=QUICK, owner=0),
        request(0, 1, 0, 0, 1, 0.030, queue_ms=QUICK, expected=5, symbol=9, state_in=7, owner=102),
        request(2, 0, 1, 0, 1, 0.012, queue_ms=8.0),
        request(2, 1, 1, 0, 2, 0.040, queue_ms=QUICK),
    ])


def trace(fig, name: str):
    found = [t for t in fig.data if t.name == name]
    assert len(found) == 1, [t.name for t in fig.data]
    return found[0]


def test_timeline_puts_each_chunk_in_its_instance_and_slot_row_at_its_time(requests):
    fig = figures.slot_timeline(RunAnalysis(requests, instances=2, slots=4), "direct")
    assert list(fig.layout.yaxis.ticktext) == [f"instance {i} · slot {s}" for i in range(2) for s in range(4)]
    expected = {"session 1": ([ROW[0, 0]] * 2, [10.0, 30.0]), "session 2": ([ROW[0, 2]], [10.0]),
                "session 3": ([ROW[1, 0]] * 2, [12.0, 40.0])}
    for name, (ys, bases) in expected.items():
        bars = trace(fig, name)
        assert list(bars.y) == ys and list(bars.base) == pytest.approx(bases), name
        assert list(bars.x) == pytest.approx([3.0] * len(ys))  # 3 ms compute each


def test_timeline_draws_exactly_the_known_padding_rows(requests):
    fig = figures.slot_timeline(RunAnalysis(requests, instances=2, slots=4), "direct")
    padding = trace(fig, "padding row (READY=0)")
    assert sorted(zip(padding.y, padding.base, strict=True)) == [(ROW[0, 1], pytest.approx(10.0)), (ROW[1, 1], pytest.approx(40.0))]
    assert list(padding.customdata) == [3, 2]  # the batch each padding row belonged to
    # Under the dynamic batcher the same gaps are rows of someone else's requests, not padding.
    dynamic = figures.slot_timeline(RunAnalysis(requests, instances=2, slots=4), "dynamic")
    assert len(trace(dynamic, "row of another run").y) == 2
    assert "padding row (READY=0)" not in [t.name for t in dynamic.data]


def test_timeline_marks_the_one_wrong_letter_and_the_one_long_wait(requests):
    fig = figures.slot_timeline(RunAnalysis(requests, instances=2, slots=4), "direct")
    wrong = trace(fig, "letter came back wrong")
    assert len(wrong.x) == 1 and wrong.y[0] == pytest.approx(ROW[0, 0] - 0.42) and 30.0 < wrong.x[0] < 31.0
    waits = trace(fig, "waiting in the queue")
    xs, ys = np.array(waits.x, dtype=float), np.array(waits.y, dtype=float)
    assert xs[:2] == pytest.approx([4.0, 12.0]) and np.isnan(xs[2]) and len(xs) == 3  # one segment: 8 ms
    assert ys[:2] == pytest.approx([ROW[1, 0] + 0.42] * 2)
    hover = trace(fig, "session 1").customdata[1]
    assert list(hover[[0, 1, 2, 5, 6]]) == [2, "E", "I", "G", "session 2"]  # chunk, expected, got, state, whose


def test_timeline_without_padding_or_waits_has_no_such_traces(requests):
    clean = requests[requests["session"] == 2].assign(queue_ms=QUICK, batch=1)
    clean["queued_from"] = clean["exec_start"] - QUICK / 1000
    fig = figures.slot_timeline(RunAnalysis(clean, instances=2, slots=4), "direct")
    assert [t.name for t in fig.data] == ["session 3"]


def test_timeline_of_an_untraced_run_says_so_instead_of_drawing_nothing(requests):
    fig = figures.slot_timeline(RunAnalysis(requests.drop(columns=["exec_start", "exec_end", "queued_from"])), "direct")
    assert not fig.data
    assert "No server trace" in fig.layout.annotations[0].text


def test_batch_sizes_set_the_servers_counts_beside_the_trace(requests):
    fig = figures.batch_sizes(RunAnalysis(requests, {"batch_sizes": {1: 5, 2: 1, 3: 1, 4: 2}}))
    server, traced = trace(fig, "server statistics"), trace(fig, "this run's trace")
    assert list(server.x) == [1, 2, 3, 4] and list(server.y) == [5, 1, 1, 2]
    assert list(traced.x) == [1, 2, 3, 4] and list(traced.y) == [2, 1, 1, 0]


def test_queue_vs_compute_shows_each_source_mean(requests):
    server = {"inference_count": 5, "mean_queue_us": 3000.0, "mean_compute_us": 4000.0,
              "metrics": {"nv_inference_request_success": 4.0, "nv_inference_queue_duration_us": 10000.0,
                          "nv_inference_compute_infer_duration_us": 6000.0}}
    fig = figures.queue_vs_compute(RunAnalysis(requests, server))
    queue, compute = trace(fig, "queue"), trace(fig, "compute")
    assert list(queue.y) == ["this run's trace", "statistics API", "Prometheus metrics"]
    assert list(queue.x) == pytest.approx([(4 * QUICK + 8.0) / 5, 3.0, 2.5])
    assert list(compute.x) == pytest.approx([3.0, 4.0, 1.5])


def test_instance_work_counts_each_instances_requests_batches_and_busy_time(requests):
    fig = figures.instance_work(RunAnalysis(requests))
    busy, count, batch = fig.data
    assert list(count.x) == ["instance 0", "instance 1"]
    assert list(count.y) == [3, 2]
    assert list(busy.y) == pytest.approx([6.0, 6.0])  # two 3 ms executions each
    assert list(batch.y) == pytest.approx([2.0, 1.5])  # (3 + 1) / 2 and (1 + 2) / 2


def test_one_analysis_serves_every_chart_and_sentence_of_a_run(requests, monkeypatch):
    """lab_figures and lab_summaries read one RunAnalysis: the run's executions are found once, not once per
    chart and once more per sentence, and each table is the one the single analysis function builds."""
    found = []
    real = analysis.executions
    monkeypatch.setattr(analysis, "executions", lambda rows: found.append(len(rows)) or real(rows))
    server = {"batch_sizes": {1: 2, 3: 1}, "inference_count": 5, "mean_queue_us": 1.0, "mean_compute_us": 2.0}
    run = RunAnalysis(requests, server, pd.DataFrame({"session": [0, 1, 2], "chunks": [2, 1, 2]}), instances=2, slots=4)
    figures.lab_figures(run)
    figures.lab_summaries(run)
    assert found == [len(requests)]
    assert run.slot_rows == analysis.slot_rows(requests, 2, 4)
    pd.testing.assert_frame_equal(run.padding_rows, analysis.padding_rows(requests))
    pd.testing.assert_frame_equal(run.batch_distribution, analysis.batch_distribution(server, requests))
    pd.testing.assert_frame_equal(run.instance_work, analysis.instance_work(requests))
    pd.testing.assert_frame_equal(run.latency_percentiles, analysis.latency_percentiles(requests, run.sessions))


# One real run of each kind: the figures a learner sees for the fix and for the mistake.
TRAFFIC = Traffic(sessions=6, chunks=12, seed=4)


@pytest.fixture(scope="module")
def fix_run(lab_server, deployer):
    applied, result = presets.run_preset(lab_server, deployer, "the_fix", traffic=TRAFFIC)
    assert result.traced, "the session's server writes a trace; figures need it"
    return applied, result


def test_direct_timeline_keeps_every_session_in_one_row(fix_run):
    applied, result = fix_run
    fig = figures.slot_timeline(analysis.of_run(result, applied.settings.instances, applied.settings.slots), "direct")
    sessions = [t for t in fig.data if t.name.startswith("session ")]
    assert [t.name for t in sessions] == [f"session {i + 1}" for i in range(TRAFFIC.sessions)]
    assert all(len(t.x) == TRAFFIC.chunks for t in sessions)  # one bar per chunk sent
    assert all(len(set(t.y)) == 1 for t in sessions)
    assert len({t.y[0] for t in sessions}) == TRAFFIC.sessions  # six sessions, six different rows
    assert "letter came back wrong" not in [t.name for t in fig.data]


def test_lab_figures_of_a_real_run_are_all_drawn(fix_run):
    applied, result = fix_run
    built = figures.lab_figures(analysis.of_run(result, applied.settings.instances, applied.settings.slots), applied.settings.scheduler)
    assert set(built) == {"timeline", "batch_sizes", "queue_vs_compute", "latency", "instances"}
    assert all(fig.data for fig in built.values()), "an empty figure means its data was missing"
    assert sum(built["instances"].data[1].y) == TRAFFIC.sessions * TRAFFIC.chunks
    assert sum(built["batch_sizes"].data[0].y) > 0


def test_timeline_of_the_mistake_marks_wrong_letters_and_mixed_rows(lab_server, deployer):
    applied, result = presets.run_preset(lab_server, deployer, "the_mistake", traffic=TRAFFIC)
    fig = figures.slot_timeline(analysis.of_run(result, applied.settings.instances, applied.settings.slots), "dynamic")
    wrong = int((result.requests["symbol"] != result.requests["expected"]).sum())
    assert wrong > 0, "the mistake corrupts sessions"
    assert len(trace(fig, "letter came back wrong").x) == wrong
    sessions = [t for t in fig.data if t.name.startswith("session ")]
    assert any(len(set(t.y)) > 1 for t in sessions), "the dynamic batcher moves sessions between rows"
    hover = " ".join(sessions[0].hovertemplate.split())
    assert "queued" in hover and "read state" in hover and "written by" in hover


class Marked:
    """Words that mark every string they translate, so a test sees which labels went through _."""

    lang = "en"

    def __call__(self, message: str) -> str:
        return f"«{message}»"

    def render(self, template: str, **values) -> str:
        from app.i18n import words

        return f"«{words('en').render(template, **values)}»"


def test_every_figure_label_goes_through_the_readers_words(requests):
    _ = Marked()
    sessions = pd.DataFrame({"session": [0, 1, 2], "chunks": [2, 1, 2]})
    server = {"batch_sizes": {1: 2, 3: 1}, "inference_count": 5, "mean_queue_us": 1.0, "mean_compute_us": 2.0}
    run = RunAnalysis(requests, server, sessions, instances=2, slots=4)
    figs = [
        figures.slot_timeline(run, "direct", _=_),
        figures.batch_sizes(run, _=_),
        figures.queue_vs_compute(run, _=_),
        figures.latency_percentiles(run, _=_),
        figures.instance_work(run, _=_),
    ]
    for fig in figs:
        assert fig.layout.title.text.startswith("«"), fig.layout.title.text
        for trace in fig.data:
            if trace.name and not trace.name.startswith("p"):  # p50/p95/p99 are symbols
                assert trace.name.startswith("«"), trace.name
    timeline = figs[0]
    assert all(t.startswith("«") for t in timeline.layout.yaxis.ticktext)
    assert timeline.layout.xaxis.title.text.startswith("«")
    assert "«" in timeline.data[0].hovertemplate
    latency = figs[3]
    assert all(str(x).startswith("«") for level in latency.data[0].x for x in level)
    zh = figures.slot_timeline(RunAnalysis(requests, instances=2, slots=4), "direct", _=__import__("app.i18n", fromlist=["words"]).words("zh"))
    assert zh.layout.title.text
