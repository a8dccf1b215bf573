"""The analysis of a generation trace, on hand-made traces whose every figure is worked by hand."""
from __future__ import annotations

import json
import math

import pandas as pd
import pytest

from app.generation.engine import TRACE_COLUMNS, PlannedRequest, analysis, expected_tokens

A = PlannedRequest(index=0, tag=10, arrival_s=0.0, prompt=(1, 2, 3, 4), max_tokens=3)  # streams 43, 47, 58
B = PlannedRequest(index=1, tag=11, arrival_s=0.03, prompt=(0, 0, 0, 0), max_tokens=2)  # streams 5, 31
SENT = {0: 0.0, 1: 0.03}


def response(plan, t_recv, token, step, row, execution, owner=None, final=False, batch=2, instance=0, empty=False, error=""):
    return {"run_id": "r", "index": plan.index, "tag": plan.tag, "request_id": f"r:{plan.index}", "t_send": SENT[plan.index],
            "t_recv": t_recv, "final": final, "empty": empty, "error": error, "token": token, "step": step, "row": row,
            "batch": batch, "execution": execution, "instance": instance, "state_owner": plan.tag if owner is None else owner}


def trace(*rows) -> pd.DataFrame:
    return pd.DataFrame(list(rows), columns=TRACE_COLUMNS)


# In flight: A alone, then B joins at A's second step; both end in execution 3.
INFLIGHT = trace(
    response(A, 0.02, 43, 0, 0, 1, batch=1),
    response(A, 0.04, 47, 1, 0, 2), response(B, 0.04, 5, 0, 1, 2),
    response(A, 0.06, 58, 2, 0, 3, final=True), response(B, 0.06, 31, 1, 1, 3, final=True),
)


def test_the_hand_made_streams_are_the_rule():
    assert expected_tokens(A.prompt, 3) == [43, 47, 58] and expected_tokens(B.prompt, 2) == [5, 31]


def test_per_request_times_tokens_and_verdicts():
    table = analysis.requests_table(INFLIGHT, [A, B]).set_index("index")
    assert table.loc[0, "ttft_ms"] == pytest.approx(20) and table.loc[1, "ttft_ms"] == pytest.approx(10)
    assert table.loc[0, "e2e_ms"] == pytest.approx(60) and table.loc[1, "e2e_ms"] == pytest.approx(30)
    assert table["tokens"].tolist() == [3, 2] and table["received"].tolist() == [[43, 47, 58], [5, 31]]
    assert table["correct"].all() and (table["status"] == "complete").all()
    assert table["first_wrong_step"].tolist() == [-1, -1] and table["foreign_step"].tolist() == [-1, -1]
    assert table["continued_index"].tolist() == [0, 1]


def test_passes_fill_and_the_run_figures():
    steps = analysis.passes(INFLIGHT, max_batch_size=4)
    assert steps[["execution", "pass", "rows"]].values.tolist() == [[1, 0, 1], [2, 0, 2], [3, 0, 2]]
    assert steps["fill"].tolist() == [0.25, 0.5, 0.5]
    figures = analysis.run_figures(analysis.requests_table(INFLIGHT, [A, B]), INFLIGHT, 4)
    assert (figures.requests, figures.complete, figures.correct, figures.tokens) == (2, 2, 2, 5)
    assert (figures.executions, figures.passes) == (3, 3)
    assert figures.wall_s == pytest.approx(0.06) and figures.tokens_per_s == pytest.approx(5 / 0.06)
    assert figures.ttft_p50_ms == pytest.approx(15) and figures.ttft_p95_ms == pytest.approx(19.5)
    assert figures.mean_fill == pytest.approx((0.25 + 0.5 + 0.5) / 3)


def test_the_timeline_has_every_row_of_every_pass_and_leaves_unused_rows_empty():
    table = analysis.timeline(INFLIGHT, max_batch_size=4)
    assert len(table) == 3 * 4 and table.columns.tolist() == analysis.TIMELINE_COLUMNS
    first = table[table["execution"] == 1]
    assert first["tag"].tolist()[0] == 10 and first["tag"].iloc[1:].isna().all()
    second = table[table["execution"] == 2].set_index("row")
    assert (second.loc[0, "tag"], second.loc[0, "step"], second.loc[1, "tag"], second.loc[1, "step"]) == (10, 1, 11, 0)


def test_tags_keep_all_64_bits_in_the_timeline():
    big = PlannedRequest(index=0, tag=(2**62) + 1, arrival_s=0.0, prompt=(1, 2, 3, 4), max_tokens=1)
    table = analysis.timeline(trace(response(big, 0.02, 43, 0, 0, 1, final=True, batch=1)), 2)
    assert int(table["tag"].iloc[0]) == (2**62) + 1 and int(table["state_owner"].iloc[0]) == (2**62) + 1


def test_a_pass_that_holds_requests_at_different_steps_is_mixed():
    mixed = analysis.mixed_passes(INFLIGHT, 4)
    assert mixed["execution"].tolist() == [2, 3]
    lockstep = trace(response(A, 0.02, 43, 0, 0, 1), response(B, 0.02, 5, 0, 1, 1))
    assert analysis.mixed_passes(lockstep, 4).empty


def test_a_static_execution_makes_a_pass_per_step_of_its_longest_request():
    static = trace(
        response(A, 0.02, 43, 0, 0, 1), response(B, 0.02, 5, 0, 1, 1),
        response(A, 0.04, 47, 1, 0, 1), response(B, 0.04, 31, 1, 1, 1, final=True),
        response(A, 0.06, 58, 2, 0, 1, final=True),
    )
    steps = analysis.passes(static, 4)
    assert steps[["execution", "pass", "rows"]].values.tolist() == [[1, 0, 2], [1, 1, 2], [1, 2, 1]]
    figures = analysis.run_figures(analysis.requests_table(static, [A, B]), static, 4)
    assert (figures.executions, figures.passes) == (1, 3)


def test_a_stream_that_continued_another_state_names_whose():
    wrong = trace(
        response(A, 0.02, 43, 0, 0, 1), response(B, 0.02, 5, 0, 1, 1),
        # B's second step read A's cell (row keying): A's owner, A's stream, not B's 31.
        response(A, 0.04, 47, 1, 1, 2, owner=10), response(B, 0.04, 47, 1, 0, 2, owner=10, final=True),
        response(A, 0.06, 12, 1, 0, 3, owner=0, final=True),  # A found an empty cell at its third step
    )
    table = analysis.requests_table(wrong, [A, B]).set_index("index")
    assert not table.loc[1, "correct"]
    assert (table.loc[1, "first_wrong_step"], table.loc[1, "foreign_step"]) == (1, 1)
    assert (table.loc[1, "continued_owner"], table.loc[1, "continued_index"]) == (10, 0)
    assert (table.loc[0, "first_wrong_step"], table.loc[0, "foreign_step"]) == (2, 2)
    assert (table.loc[0, "continued_owner"], table.loc[0, "continued_index"]) == (0, -1)


def test_a_stream_cut_short_or_running_long_is_wrong_where_it_parts_from_the_rule():
    long = trace(*(response(B, 0.02 * (k + 1), t, k, 0, k + 1, batch=1) for k, t in enumerate([5, 31, 7])))
    assert analysis.requests_table(long, [B]).loc[0, "first_wrong_step"] == 2
    short = trace(response(A, 0.02, 43, 0, 0, 1, final=True, batch=1))
    row = analysis.requests_table(short, [A]).loc[0]
    assert (row["first_wrong_step"], row["correct"], row["status"]) == (1, False, "complete")


def test_a_cancelled_request_is_judged_on_what_it_received_and_empty_finals_carry_no_token():
    cancelled = trace(
        response(A, 0.02, 43, 0, 0, 1, batch=1), response(A, 0.04, 47, 1, 0, 2, batch=1),
        response(A, 0.05, -1, -1, -1, -1, final=True, empty=True, error="cancelled"),
        response(B, 0.06, 5, 0, 0, 3, batch=1), response(B, 0.08, 31, 1, 0, 4, batch=1),
        response(B, 0.09, -1, -1, -1, -1, final=True, empty=True),
    )
    table = analysis.requests_table(cancelled, [A, B]).set_index("index")
    assert table["status"].tolist() == ["cancelled", "complete"]
    assert table["tokens"].tolist() == [2, 2] and table["correct"].all()
    assert table.loc[1, "e2e_ms"] == pytest.approx(60)  # the empty final response ends it
    assert len(analysis.passes(cancelled, 4)) == 4


def test_a_request_with_no_response_failed_and_the_figures_still_read():
    table = analysis.requests_table(INFLIGHT[INFLIGHT["index"] == 0], [A, B])
    assert table["status"].tolist() == ["complete", "failed"] and table["correct"].tolist() == [True, False]
    assert math.isnan(table.loc[1, "ttft_ms"])
    figures = analysis.run_figures(table, INFLIGHT[INFLIGHT["index"] == 0], 4)
    assert figures.ttft_p50_ms == pytest.approx(20)
    empty = analysis.run_figures(analysis.requests_table(trace(), [A]), trace(), 4)
    assert empty.to_json()["ttft_p50_ms"] is None and empty.passes == 0


def test_the_report_is_plain_json():
    report = analysis.report_json("r", "gen_inflight", INFLIGHT, [A, B], 4, {"inference_count": 5})
    again = json.loads(json.dumps(report))
    assert again["kind"] == "generation_run" and again["figures"]["tokens"] == 5
    assert len(again["trace"]) == 5 and len(again["timeline"]) == 12 and again["timeline"][1]["tag"] is None
    assert again["requests"][1]["received"] == [5, 31] and again["plans"][0]["prompt"] == [1, 2, 3, 4]
