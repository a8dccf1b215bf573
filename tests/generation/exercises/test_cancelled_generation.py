"""cancelled_generation: every outcome judged on hand-made tables, and one real run."""
from __future__ import annotations

import pandas as pd
import pytest

from app.generation.exercises.cancelled_generation import engine
from tests.generation import tables as made


def _tables(honour_after: int, ignore_after: int) -> dict[str, pd.DataFrame]:
    cells = pd.DataFrame([
        dict(deployment="honour", cells_before=1, cells_after=honour_after, waited_s=0.3, long_status="cancelled",
             long_tokens=3, short_complete=2),
        dict(deployment="ignore", cells_before=0, cells_after=ignore_after, waited_s=3.0, long_status="cancelled",
             long_tokens=3, short_complete=2),
    ])
    return {"cells": cells, "tokens": made.tokens(), "requests": made.requests("inflight", [20, 30, 40], [80, 90, 100]),
            "steps": made.steps("inflight", [1, 2, 3, 3, 2])}


def test_a_cell_left_only_where_the_model_never_asks_is_the_models_job():
    judged = engine.judge(_tables(honour_after=1, ignore_after=1))  # counted from before: 0 and 1 added
    assert judged.outcome == "model_must"
    assert judged.numbers["cells_left_honour"] == 0 and judged.numbers["cells_left_ignore"] == 1


def test_no_cell_left_anywhere_is_triton_freeing_and_cells_left_everywhere_is_neither():
    judged = engine.judge(_tables(honour_after=1, ignore_after=0))
    assert judged.outcome == "triton_frees"
    judged = engine.judge(_tables(honour_after=2, ignore_after=1))
    assert judged.outcome == "neither"


def test_the_scenario_quotes_the_constants():
    from app.generation.exercises.cancelled_generation import words

    for said in (f"asks for {engine.LONG_TOKENS} tokens", f"after {engine.CANCEL_AFTER}", f"{engine.SHORT_TOKENS} tokens"):
        assert said in words.SCENARIO


@pytest.fixture(scope="module")
def result(exercise_result):
    """One real run. The outcome is certain: the deployment that ignores cancellation never asks and has no sweep,
    and Triton drops the cancelled request when it comes back to the queue, so nothing frees its cell; the one that
    honours it either sees is_cancelled() at its next step or, when Triton dropped the request first, sweeps the
    untouched cell after 5 s, inside the 8 s the measurement waits for the gauge to fall back (it waits for that
    event and reads the gauge under the deployment's hold, so no other run adds cells)."""
    return exercise_result("cancelled_generation")


def test_a_real_run_leaves_the_cell_only_where_the_model_never_asks(result):
    assert result.outcome == "model_must"
    assert result.numbers["cells_left_ignore"] == 1 and result.numbers["cells_left_honour"] == 0
    cells = result.tables["cells"]
    assert set(cells["long_status"]) == {"cancelled"} and (cells["long_tokens"] >= engine.CANCEL_AFTER).all()
