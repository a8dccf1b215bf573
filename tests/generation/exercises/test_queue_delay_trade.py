"""queue_delay_trade: every outcome judged on hand-made tables, and one real run."""
from __future__ import annotations

import pandas as pd
import pytest

from app.generation.exercises.queue_delay_trade import engine
from tests.generation import tables as made


def _tables(fill: dict[str, list[int]], ttft: dict[str, float]) -> dict[str, pd.DataFrame]:
    steps = pd.concat([made.steps("static", rows).assign(label=code) for code, rows in fill.items()], ignore_index=True)
    requests = pd.concat([made.requests("static", [ttft[code]] * 3, [ttft[code] + 40] * 3).assign(label=code)
                          for code in fill], ignore_index=True)
    return {"steps": steps, "requests": requests, "tokens": made.tokens("static")}


def test_fuller_steps_bought_with_later_first_tokens_are_the_trade():
    judged = engine.judge(_tables({"no_delay": [1, 1, 2, 1], "delay": [4, 4, 4, 4]}, {"no_delay": 25.0, "delay": 90.0}))
    assert judged.outcome == "trade"
    assert judged.numbers["fill_delay"] == 1.0 and judged.numbers["fill_no_delay"] == 0.3125


def test_fuller_steps_without_later_first_tokens_are_free_and_no_fuller_steps_are_nothing():
    judged = engine.judge(_tables({"no_delay": [1, 1, 2, 1], "delay": [4, 4, 4, 4]}, {"no_delay": 90.0, "delay": 60.0}))
    assert judged.outcome == "free"
    judged = engine.judge(_tables({"no_delay": [4, 4], "delay": [4, 4]}, {"no_delay": 25.0, "delay": 90.0}))
    assert judged.outcome == "nothing"


def test_the_scenario_quotes_the_constants():
    from app.generation.exercises.queue_delay_trade import words

    for said in (f"{engine.REQUESTS} short requests ({engine.TOKENS} token each)", f"{engine.GAP_MS} ms apart",
                 f"{engine.DELAY_MS} ms"):
        assert said in words.SCENARIO


@pytest.fixture(scope="module")
def result(exercise_result):
    """One real run. The outcome is certain: requests arrive 25 ms apart, so four are queued 75 ms after the first,
    inside the 100 ms delay, and the dynamic batcher sends batches of four (it sends at once when max_batch_size
    requests are queued): every step is full and the requests wait 75, 50, 25 and 0 ms for their batch. With no
    delay it sends what is queued whenever the instance is free, and a 1-token step takes 20 ms, shorter than the
    gap, so most requests run alone at once: fill near a quarter, first tokens after about one step. Both gaps are
    wide against the machine's jitter (tens of ms), so the direction is certain; the exact fill is not (a busy
    machine can hold the client's sending back until the delay closes a batch of fewer than four), so the tests
    pin the direction only."""
    return exercise_result("queue_delay_trade")


def test_a_real_run_shows_the_trade(result):
    assert result.outcome == "trade"
    assert result.numbers["fill_delay"] >= result.numbers["fill_no_delay"] + engine.FULLER
    assert result.numbers["ttft_delay_ms"] > result.numbers["ttft_no_delay_ms"]
