"""head_of_line: every outcome judged on hand-made tables, and one real run."""
from __future__ import annotations

import pandas as pd
import pytest

from app.generation.exercises.head_of_line import engine
from tests.generation import tables as made


def _tables(static_short_ttft: float, inflight_short_ttft: float) -> dict[str, pd.DataFrame]:
    rows = []
    for mode, short in (("static", static_short_ttft), ("inflight", inflight_short_ttft)):
        rows.append(dict(mode=mode, tag=1, ttft_ms=20.0, e2e_ms=820.0, tokens=engine.LONG_TOKENS, wrong=0))
        rows += [dict(mode=mode, tag=2 + k, ttft_ms=short, e2e_ms=short + 25, tokens=engine.SHORT_TOKENS, wrong=0)
                 for k in range(engine.SHORT)]
    return {"requests": pd.DataFrame(rows), "tokens": made.tokens(), "steps": made.steps("static", [1, 1])}


def test_short_requests_held_behind_the_long_one_under_static_are_hostages():
    judged = engine.judge(_tables(780.0, 30.0))
    assert judged.outcome == "hostage"
    assert judged.numbers["short_ttft_static_ms"] == 780.0 and judged.numbers["long_e2e_static_ms"] == 820.0


def test_close_first_tokens_are_the_same_and_a_slower_in_flight_is_static_faster():
    judged = engine.judge(_tables(40.0, 30.0))
    assert judged.outcome == "same"
    judged = engine.judge(_tables(30.0, 400.0))
    assert judged.outcome == "static_faster"


def test_the_scenario_quotes_the_constants():
    from app.generation.exercises.head_of_line import words

    for said in (f"{engine.LONG_TOKENS} tokens", f"{engine.SHORT} short ones ({engine.SHORT_TOKENS} tokens each)",
                 f"{engine.SHORT_GAP_MS} ms apart", f"{engine.STEP_MS} ms per step"):
        assert said in words.SCENARIO


@pytest.fixture(scope="module")
def result(exercise_result):
    """One real run. The outcome is certain: the long request (40 tokens at 20 ms a step, 0.8 s or more) has
    started before the first short one arrives 30 ms later, so under static batching every short request waits in
    the queue for that execution to return (one instance, and Triton gives an instance its next batch only then),
    while in flight the short ones join at the next step and finish within a few steps: more than three times
    apart whatever the machine's load."""
    return exercise_result("head_of_line")


def test_a_real_run_holds_the_short_requests_behind_the_long_one(result):
    assert result.outcome == "hostage"
    # They waited for the long request's execution, which began before the first of them arrived (30 to 90 ms in).
    assert result.numbers["short_ttft_static_ms"] > result.numbers["long_e2e_static_ms"] / 2
    tokens = result.tables["tokens"]
    assert not tokens["wrong"].any()
    assert set(tokens["mode"]) == {"static", "inflight"}
