"""The generation figures and their summaries, on hand-made tables, in English and Chinese."""
from __future__ import annotations

import pandas as pd
import pytest

from app.generation import figures
from app.i18n import words
from tests.generation import tables


def _marks(fig, name):
    return [t for t in fig.data if t.name == name]


def test_the_timeline_shows_empty_rows_joins_leaves_and_the_wrong_token_with_whose_state_it_continued():
    tokens = tables.tokens(wrong_at=(3, 1))
    fig = figures.timeline(tokens, 4)
    empty = _marks(fig, "empty row")
    assert len(empty) == 1 and len(empty[0].x) == 5 * 4 - len(tokens)  # every unused row of every execution
    late = _marks(fig, "request 3")[0]
    assert list(late.marker.symbol) == ["triangle-right", "triangle-left"]  # joins, then leaves
    wrong = _marks(fig, "wrong token")[0]
    assert list(wrong.x) == [4] and "request 1" in wrong.hovertext[0]
    said = figures.timeline_summary(tokens, 4)
    assert "Wrong tokens: 1" in said and "request 1" in said and "joined a running batch: 2" in said


def test_a_static_batch_started_together_has_no_request_that_joined_a_running_batch():
    """One execution generates the whole batch: its requests' first tokens share the execution's
    first model step, and their later tokens the steps after it, so nobody joined anyone."""
    rows = [dict(mode="static", tag=tag, instance=0, execution=0, tick=step, row=tag - 1, batch=3, step=step,
                 last=step == n - 1, t_s=0.02 * (step + 1), wrong=False, owner=tag)
            for tag, n in ((1, 5), (2, 3), (3, 2)) for step in range(n)]
    assert "joined a running batch: 0" in figures.timeline_summary(pd.DataFrame(rows), 4)


def test_a_run_without_mistakes_says_every_token_was_right_and_time_can_run_across():
    tokens = tables.tokens()
    assert "Every token was right." in figures.timeline_summary(tokens, 4)
    fig = figures.timeline(tokens, 4, x="time")
    assert max(max(t.x) for t in fig.data) == pytest.approx(tokens["t_s"].max())


def test_latencies_and_fill_put_both_modes_side_by_side_and_say_their_medians_and_means():
    requests = pd.concat([tables.requests("static", [100, 110, 300], [300, 310, 500]),
                          tables.requests("inflight", [20, 40, 60], [120, 140, 160])])
    fig = figures.latencies(requests)
    assert {t.name for t in fig.data} == {"static batching", "in-flight batching"} and len(fig.data) == 4
    said = figures.latencies_summary(requests)
    assert "static batching 110.0 ms" in said and "in-flight batching 40.0 ms" in said
    steps = pd.concat([tables.steps("static", [3, 3]), tables.steps("inflight", [1, 2, 3, 3, 2])])
    assert len(figures.fill(steps).data) == 2
    assert "55%" in figures.fill_summary(steps) and "75%" in figures.fill_summary(steps)


def test_the_charts_read_in_chinese():
    zh = words("zh")
    tokens = tables.tokens(wrong_at=(3, 1))
    requests = tables.requests("inflight", [20, 40, 60], [120, 140, 160])
    drawn = figures.charts(tokens, requests, tables.steps("inflight", [1, 2, 3, 3, 2]), 4, _=zh)
    english = figures.charts(tokens, requests, tables.steps("inflight", [1, 2, 3, 3, 2]), 4)
    assert len(drawn) == 3
    for ours, theirs in zip(drawn, english, strict=True):
        assert ours.caption != theirs.caption and ours.summary != theirs.summary


def test_empty_tables_draw_a_message_not_an_error():
    empty = tables.tokens().iloc[0:0]
    assert figures.timeline(empty, 4).layout.annotations
    assert figures.timeline_summary(empty, 4)


def test_a_static_batch_generated_in_one_execution_spreads_over_model_steps_and_shows_its_empty_rows():
    """Two requests batched in one execution (3 and 1 tokens), then one more alone whose token is wrong: the
    short one's row stays empty while the long one finishes, and the next batch starts after it."""
    from app.generation import runs
    from app.generation.engine import PlannedRequest, expected_tokens

    plans = [PlannedRequest(index=i, tag=100 + i, arrival_s=0.0, prompt=(i, 1, 2, 3), max_tokens=n)
             for i, n in enumerate((3, 1, 1))]
    rows = []

    def token(plan, k, t, execution, row, batch, value=None):
        value = expected_tokens(plan.prompt, k + 1)[k] if value is None else value
        rows.append(dict(run_id="r", index=plan.index, tag=plan.tag, request_id=f"r:{plan.index}", t_send=0.01 * plan.index,
                         t_recv=t, final=k == plan.max_tokens - 1, empty=False, error="", token=value, step=k, row=row,
                         batch=batch, execution=execution, instance=0, state_owner=plan.tag))

    for k in range(3):
        token(plans[0], k, 0.02 * (k + 1), 1, 0, 2)
    token(plans[1], 0, 0.02, 1, 1, 2)
    token(plans[2], 0, 0.08, 2, 0, 1, value=(expected_tokens(plans[2].prompt, 1)[0] + 1) % 64)
    trace = pd.DataFrame(rows).sort_values("t_recv", kind="stable")
    tokens, requests, steps = runs.tables(trace, plans, "static", 2)
    assert tokens.set_index(["tag", "step"])["tick"].to_dict() == {(1, 0): 0, (1, 1): 1, (1, 2): 2, (2, 0): 0, (3, 0): 3}
    assert steps["rows"].tolist() == [2, 1, 1, 1] and steps["fill"].tolist() == [1.0, 0.5, 0.5, 0.5]
    assert requests.set_index("tag")["ttft_ms"].round(1).to_dict() == {1: 20.0, 2: 10.0, 3: 60.0}
    assert tokens.sort_values(["tag", "step"])["wrong"].tolist() == [False, False, False, False, True]
    assert requests.set_index("tag")["wrong"].to_dict() == {1: 0, 2: 0, 3: 1}
    assert tokens.set_index(["tag", "step"])["last"].to_dict() == {(1, 0): False, (1, 1): False, (1, 2): True, (2, 0): True,
                                                                   (3, 0): True}
    assert len(figures.timeline(tokens, 2).data[0].x) == 3  # the empty row places at steps 1, 2 and 3
