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
    """Two requests batched in one execution (3 and 1 tokens), then one more alone: the short one's row
    stays empty while the long one finishes, and the next batch starts after it."""
    from app.generation import runs

    trace = pd.DataFrame([
        dict(tag=1, sent_s=0.0, t_s=0.02 * (k + 1), instance=0, execution=0, row=0, batch=2, step=k, token=k, expected=k,
             owner=1) for k in range(3)] + [
        dict(tag=2, sent_s=0.0, t_s=0.02, instance=0, execution=0, row=1, batch=2, step=0, token=0, expected=0, owner=2),
        dict(tag=3, sent_s=0.01, t_s=0.08, instance=0, execution=1, row=0, batch=1, step=0, token=5, expected=4, owner=3)])
    tokens, requests, steps = runs.tables(trace, "static", 2)
    assert tokens.set_index(["tag", "step"])["tick"].to_dict() == {(1, 0): 0, (1, 1): 1, (1, 2): 2, (2, 0): 0, (3, 0): 3}
    assert steps["rows"].tolist() == [2, 1, 1, 1] and steps["fill"].tolist() == [1.0, 0.5, 0.5, 0.5]
    assert requests.set_index("tag")["ttft_ms"].round(1).to_dict() == {1: 20.0, 2: 20.0, 3: 70.0}
    assert tokens["wrong"].tolist() == [False, False, False, False, True]
    said = runs.numbers(tokens, requests, steps)
    assert said["wrong_tokens"] == 1 and said["tokens"] == 5 and said["mean_fill"] == 0.625
    assert len(figures.timeline(tokens, 2).data[0].x) == 3  # the empty row places at steps 1, 2 and 3
