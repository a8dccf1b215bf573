"""kv_cancelled_blocks: every outcome judged on hand-made tables, and one real run."""
from __future__ import annotations

import pandas as pd
import pytest

from app.generation.exercises.kv_cancelled_blocks import engine

TOTAL = 64


def _tables(held_later: int, used_after: int, equal: int = 3) -> dict[str, pd.DataFrame]:
    """The cancelled request (2 blocks) makes tokens in steps 1-4; three neighbours (3 blocks each) run steps 1-10.
    From step 5 on, `held_later` blocks in use belong to no neighbour."""
    requests = pd.DataFrame([dict(label="cancel", index=0, tokens=4, status="cancelled", peak_blocks=2, equal_alone=False)]
                            + [dict(label="cancel", index=i, tokens=40, status="complete", peak_blocks=3,
                                    equal_alone=i <= equal) for i in (1, 2, 3)])
    tokens = []
    for step in range(1, 11):
        holders = [0, 1, 2, 3] if step <= 4 else [1, 2, 3]
        in_use = 3 * 3 + (2 if step <= 4 else held_later)
        for index in holders:
            blocks = [10 * index + b for b in range(2 if index == 0 else 3)]
            tokens.append(dict(label="cancel", index=index, step=step, blocks=blocks, free_blocks=TOTAL - in_use,
                               cached_blocks=0, t_recv=0.01 * step))
    gauge = pd.DataFrame([dict(blocks_used_after=used_after, blocks_used_later=used_after, num_blocks=TOTAL)])
    return {"requests": requests, "tokens": pd.DataFrame(tokens), "gauge": gauge}


def test_blocks_free_while_the_neighbours_run_and_none_after_is_freed():
    judged = engine.judge(_tables(held_later=0, used_after=0))
    assert judged.outcome == "freed"
    assert judged.numbers["held_while_neighbours_ran"] == 0 and judged.numbers["cancelled_peak_blocks"] == 2


def test_blocks_held_while_the_neighbours_run_are_held_and_after_the_run_leaked():
    judged = engine.judge(_tables(held_later=2, used_after=0))
    assert judged.outcome == "held"
    assert judged.numbers["held_while_neighbours_ran"] == 2
    judged = engine.judge(_tables(held_later=2, used_after=2))
    assert judged.outcome == "leaked"


def test_a_neighbour_that_differs_from_its_alone_run_is_hurt():
    judged = engine.judge(_tables(held_later=0, used_after=0, equal=2))
    assert judged.outcome == "hurt"


def test_the_scenario_quotes_the_constants():
    from app.generation.exercises.kv_cancelled_blocks import words

    for said in (f"{engine.WORKLOAD.requests} requests", f"after {engine.CANCEL_AFTER} tokens",
                 f"{engine.WORKLOAD.min_answer_tokens} to {engine.WORKLOAD.max_answer_tokens} tokens"):
        assert said in words.SCENARIO


@pytest.fixture(scope="module")
def result(exercise_result):
    """One real run. Its outcome is certain: the engine model looks for cancelled requests every 20 ms and
    cancels them in the engine, whose scheduler frees their blocks before its next step, while the neighbours
    still have more than 30 tokens to go (at least 10 ms a step); the driver reads kv_blocks_used only once the
    gauges say nothing runs, waits or holds a block (app/generation/paged/engine/driver.py's settle); each request
    attends only to its own blocks, so the neighbours' tokens equal their alone runs."""
    return exercise_result("kv_cancelled_blocks")


def test_a_real_run_frees_the_cancelled_requests_blocks_at_once(result):
    assert result.outcome == "freed"
    assert result.numbers["cancelled_status"] == "cancelled"
    assert result.numbers["cancelled_tokens"] >= engine.CANCEL_AFTER and result.numbers["cancelled_peak_blocks"] > 0
    assert result.numbers["blocks_used_after"] == 0 and result.numbers["neighbours_equal_alone"] == 3
