"""The tables behind the lab's figures, on small hand-made runs whose answers are known."""
from __future__ import annotations

import pandas as pd
import pytest

from app.recogniser.engine.judgement import analysis
from app.recogniser.engine.judgement.verdicts import PADDING_OWNER

TAGS = {0: 101, 1: 102, 2: 103}


def request(session, chunk, instance, slot, batch, start, *, expected=1, symbol=1, state_in=0, owner=None,
            queue_ms=2.0, compute_ms=3.0, error=""):
    return {
        "session": session, "chunk": chunk, "corrid": str(TAGS[session]), "tag": TAGS[session],
        "request_id": f"r:{session}:{chunk}", "expected": expected, "symbol": symbol, "instance": instance,
        "slot": slot, "batch": batch, "state_in": state_in,
        "state_owner": TAGS[session] if owner is None else owner, "error": error,
        "t_send": start - queue_ms / 1000, "t_recv": start + compute_ms / 1000 + 0.001,
        "latency_ms": queue_ms + compute_ms + 1.0, "queue_ms": queue_ms, "compute_ms": compute_ms,
        "exec_start": start, "exec_end": start + compute_ms / 1000, "queued_from": start - queue_ms / 1000,
    }


@pytest.fixture()
def run():
    """Two executions on instance 0 (slot 1 empty in the first: padding), one on instance 1."""
    rows = [
        request(0, 0, 0, 0, 3, 0.010),
        request(1, 0, 0, 2, 3, 0.010, owner=0),
        request(0, 1, 0, 0, 1, 0.030, expected=5, symbol=9, state_in=7, owner=TAGS[1]),
        request(2, 0, 1, 0, 1, 0.012, queue_ms=8.0),
        request(2, 1, 1, 0, 1, 0.040, owner=PADDING_OWNER),
    ]
    requests = pd.DataFrame(rows)
    sessions = pd.DataFrame({"session": [0, 1, 2], "tag": [101, 102, 103], "chunks": [2, 1, 2]})
    return requests, sessions


def test_executions_group_rows_by_instance_and_start(run):
    requests, _ = run
    table = analysis.executions(requests)
    assert len(table) == 4
    first = table.iloc[0]
    assert (first.instance, first.batch, first.real, first.missing) == (0, 3, 2, [1])


def test_padding_rows_are_the_missing_slots_below_the_batch_size(run):
    padding = analysis.padding_rows(run[0])
    assert padding[["instance", "slot", "batch"]].values.tolist() == [[0, 1, 3]]


def test_slot_rows_cover_the_deployment_even_where_unused(run):
    assert analysis.slot_rows(run[0]) == [(0, 0), (0, 1), (0, 2), (1, 0)]
    assert len(analysis.slot_rows(run[0], instances=2, slots=4)) == 8


def test_marks_say_whose_state_each_chunk_read(run):
    marks = analysis.marks(run[0]).set_index("request_id")
    assert marks.loc["r:0:0", "state_from"] == "own"
    assert marks.loc["r:1:0", "state_from"] == "fresh"
    assert (marks.loc["r:0:1", "state_from"], marks.loc["r:0:1", "state_from_session"]) == ("session", 1)
    assert marks.loc["r:2:1", "state_from"] == "padding"
    assert marks.loc["r:0:0", "state_from_session"] is None
    assert marks.loc["r:0:1", "wrong"] and not marks.loc["r:0:0", "wrong"]
    assert (marks.loc["r:0:1", "expected_char"], marks.loc["r:0:1", "received_char"]) == ("E", "I")


def test_owner_from_another_run_is_named_as_such():
    assert analysis.owner_label(999, 101, {101: 0}) == ("earlier", None)
    assert analysis.owner_label("x", 101, {101: 0}) == ("unknown", None)
    assert analysis.symbol_char(0) == "␣" and analysis.symbol_char(-1) == "?"


def test_untraced_runs_give_empty_tables(run):
    requests = run[0].drop(columns=["exec_start", "exec_end", "queued_from", "queue_ms", "compute_ms"])
    assert not analysis.is_traced(requests)
    assert analysis.executions(requests).empty
    assert analysis.marks(requests).empty


def test_transcript_cells_mark_wrong_letters_and_the_first():
    cells = analysis.transcript_cells("HELLO", "HEXXO", 2.0)
    assert [c.wrong for c in cells] == [False, False, True, True, False]
    assert [c.first for c in cells] == [False, False, True, False, False]
    short = analysis.transcript_cells("ABC", "A", 1)
    assert [c.received for c in short] == ["A", "?", "?"]
    assert not any(c.first for c in analysis.transcript_cells("AB", "AB", float("nan")))


def test_batch_distribution_sets_server_counts_beside_the_trace(run):
    table = analysis.batch_distribution({"batch_sizes": {1: 3, 3: 1, 4: 2}}, run[0])
    assert table.to_dict("list") == {"batch_size": [1, 3, 4], "server": [3, 1, 2], "trace": [3, 1, 0]}


def test_queue_compute_from_trace_statistics_and_metrics(run):
    server = {
        "inference_count": 5, "mean_queue_us": 3000.0, "mean_compute_us": 4000.0,
        "metrics": {"nv_inference_request_success": 5.0, "nv_inference_queue_duration_us": 20000.0,
                    "nv_inference_compute_infer_duration_us": 15000.0},
    }
    table = analysis.queue_compute(run[0], server).set_index("source")
    assert list(table.index) == ["trace", "statistics", "metrics"]
    assert table.loc["trace", "queue_ms"] == pytest.approx(3.2)
    assert table.loc["statistics"].tolist() == pytest.approx([3.0, 4.0])
    assert table.loc["metrics"].tolist() == pytest.approx([4.0, 3.0])


def test_latency_percentiles_per_session_length(run):
    requests, sessions = run
    table = analysis.latency_percentiles(requests, sessions)
    assert set(zip(table["length_low"], table["length_high"], strict=True)) == {(1, 1), (2, 2)}
    assert set(table["source"]) == {"client", "trace"}
    two = table[(table["length_low"] == 2) & (table["source"] == "client")].iloc[0]
    assert two["sessions"] == 2 and two["requests"] == 4
    assert two["p50"] <= two["p95"] <= two["p99"]


def test_many_lengths_share_ranges():
    sessions = pd.DataFrame({"session": range(6), "chunks": [1, 5, 10, 20, 30, 40]})
    groups = analysis.length_groups(sessions, max_groups=3)
    assert len(set(groups.values())) <= 3
    assert groups[0] != groups[5]
    assert groups[0][0] == 1 and groups[5][1] == 40 and all(low <= high for low, high in groups.values())


def test_instance_work(run):
    table = analysis.instance_work(run[0]).set_index("instance")
    assert table.loc[0, "requests"] == 3 and table.loc[0, "executions"] == 2
    assert table.loc[1, "busy_ms"] == pytest.approx(6.0)
    assert table.loc[0, "mean_batch"] == pytest.approx(2.0)


def test_waited_for_slot_means_starting_after_another_session_ended():
    rows = [
        request(0, 0, 0, 0, 1, 0.00), request(0, 1, 0, 0, 1, 0.02),
        request(1, 0, 0, 0, 1, 0.10),  # only ran once session 0 had finished
        request(2, 0, 1, 0, 1, 0.01), request(2, 1, 1, 0, 1, 0.20),
    ]
    waited = analysis.waited_for_slot(pd.DataFrame(rows))
    assert waited.to_dict() == {0: False, 1: True, 2: False}


def test_control_rows_show_flags_slot_and_padding(run):
    requests, sessions = run
    table = analysis.control_rows(requests, sessions)
    zero = table[(table["session"] == 1)].sort_values("chunk")
    assert zero["start"].tolist() == [True, False]
    assert zero["end"].tolist() == [False, True]
    first = zero.iloc[0]
    assert (first["batch"], first["padding"]) == (3, 1)
    assert not analysis.control_rows(requests, sessions, sequence=False)["start"].any()
