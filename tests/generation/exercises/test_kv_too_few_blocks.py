"""kv_too_few_blocks: every outcome judged on hand-made tables, and one real run."""
from __future__ import annotations

import pandas as pd
import pytest

from app.generation.exercises.kv_too_few_blocks import engine


def _tables(few_ttft: list[float], few_waiting: int, few_status: str = "complete", few_equal: bool = True) -> dict[str, pd.DataFrame]:
    plenty_ttft = [40.0, 45.0, 50.0, 55.0]
    requests = pd.DataFrame(
        [dict(label="plenty", index=i, ttft_ms=t, status="complete", first_step=1 + i, equal_alone=True)
         for i, t in enumerate(plenty_ttft)]
        + [dict(label="few", index=i, ttft_ms=t, status=few_status if i == 3 else "complete", first_step=1 + 10 * i,
                equal_alone=few_equal or i != 2) for i, t in enumerate(few_ttft)])
    steps = pd.DataFrame([dict(label="plenty", step=s, waiting=0) for s in range(1, 6)]
                         + [dict(label="few", step=s, waiting=few_waiting if s == 2 else 0) for s in range(1, 6)])
    return {"requests": requests, "steps": steps}


def test_requests_that_wait_for_memory_start_later_and_say_the_same():
    judged = engine.judge(_tables([40.0, 45.0, 400.0, 900.0], few_waiting=2))
    assert judged.outcome == "wait"
    assert judged.numbers["peak_waiting_few"] == 2 and judged.numbers["equal_alone_few"] == 4
    assert judged.numbers["ttft_p95_ms_few"] > engine.TTFT_RISE * judged.numbers["ttft_p95_ms_plenty"]


def test_a_failed_request_is_refused_and_a_changed_stream_is_changed():
    judged = engine.judge(_tables([40.0, 45.0, 400.0, float("nan")], few_waiting=2, few_status="failed"))
    assert judged.outcome == "refused"
    judged = engine.judge(_tables([40.0, 45.0, 400.0, 900.0], few_waiting=2, few_equal=False))
    assert judged.outcome == "changed"


def test_no_wait_or_no_later_first_token_is_no_effect():
    judged = engine.judge(_tables([40.0, 45.0, 50.0, 55.0], few_waiting=0))
    assert judged.outcome == "no_effect"
    judged = engine.judge(_tables([40.0, 45.0, 50.0, 60.0], few_waiting=1))  # waited, yet no later first token
    assert judged.outcome == "no_effect"


def test_the_scenario_quotes_the_constants():
    from app.generation.exercises.kv_too_few_blocks import words

    for said in (f"{engine.WORKLOAD.requests} requests", f"{engine.WORKLOAD.system_tokens}-token system prompt",
                 f"{engine.WORKLOAD.mean_gap_ms:g} ms apart", f"{engine.SETTINGS['plenty'].num_blocks} blocks",
                 f"{engine.SETTINGS['few'].num_blocks} blocks", f"{engine.SETTINGS['few'].block_size} tokens"):
        assert said in words.SCENARIO


@pytest.fixture(scope="module")
def result(exercise_result):
    """One real run. Its outcome is certain with a wide margin: 8 blocks of 16 tokens hold 128 tokens, while the
    8 requests' prompts alone (32 + 4..24 tokens each) need more than 300, so the engine must keep some waiting
    (measured: 2 at once, the last starting some 70 steps in) and their first tokens come hundreds of ms later
    (p95 5 to 20 times the roomy run's on this machine, against a 1.5 threshold); every request fits the cache on
    its own, so none is refused, and each request reads only its own blocks, so every stream equals its alone run."""
    return exercise_result("kv_too_few_blocks")


def test_a_real_run_keeps_requests_waiting_for_memory_with_streams_unchanged(result):
    # Not pinned: the roomy run's waiting, which a step's token budget (128) can make 1 for a step when
    # arrivals bunch up on a loaded machine; only memory makes several wait for many steps.
    assert result.outcome == "wait", result.numbers
    assert result.numbers["peak_waiting_few"] > 0, result.numbers
    assert result.numbers["equal_alone_few"] == result.numbers["equal_alone_plenty"] == engine.WORKLOAD.requests, result.numbers
    payload = result.to_json()
    assert payload["exercise"] == "kv_too_few_blocks" and payload["outcome"] == "wait" and payload["as_taught"]
