"""kv_shared_prefix: every outcome judged on hand-made tables, and one real run."""
from __future__ import annotations

import pandas as pd
import pytest

from app.generation.exercises.kv_shared_prefix import engine

SYSTEM_BLOCKS = engine.WORKLOAD.system_tokens // engine.BLOCK_SIZE


def _tables(off_found: list[int], on_found: list[int]) -> dict[str, pd.DataFrame]:
    rows = []
    for label, found in (("off", off_found), ("on", on_found)):
        rows += [dict(label=label, index=i, prompt_tokens=80, prefix_blocks=f, ttft_ms=100.0 - 10 * f)
                 for i, f in enumerate(found)]
    return {"requests": pd.DataFrame(rows)}


def test_later_requests_finding_the_system_prompt_only_with_sharing_on_is_shared():
    judged = engine.judge(_tables([0, 0, 0, 0], [0, SYSTEM_BLOCKS, SYSTEM_BLOCKS, SYSTEM_BLOCKS]))
    assert judged.outcome == "shared"
    assert judged.numbers["prefix_blocks_possible"] == 3 * SYSTEM_BLOCKS
    assert judged.numbers["prompt_tokens_computed_on"] == 4 * 80 - 3 * SYSTEM_BLOCKS * engine.BLOCK_SIZE
    assert judged.numbers["prompt_tokens_computed_off"] == 4 * 80


def test_too_few_blocks_found_is_recomputed_and_blocks_found_with_sharing_off_is_always():
    judged = engine.judge(_tables([0, 0, 0, 0], [0, 1, 0, 1]))
    assert judged.outcome == "recomputed"
    judged = engine.judge(_tables([0, 2, 2, 2], [0, SYSTEM_BLOCKS, SYSTEM_BLOCKS, SYSTEM_BLOCKS]))
    assert judged.outcome == "always"


def test_the_scenario_quotes_the_constants():
    from app.generation.exercises.kv_shared_prefix import words

    for said in (f"{engine.WORKLOAD.requests} requests", f"{engine.WORKLOAD.system_tokens}-token system prompt",
                 f"{SYSTEM_BLOCKS} blocks of {engine.BLOCK_SIZE} tokens", f"{engine.WORKLOAD.mean_gap_ms:g} ms apart",
                 f"{engine.SETTINGS['on'].token_ms:g} ms longer per token"):
        assert said in words.SCENARIO


@pytest.fixture(scope="module")
def result(exercise_result):
    """One real run. Its outcome is certain: with prefix_sharing false the engine never looks a prompt up, so no
    block is found; with it true, every request that starts after the first one's prompt step finds the system
    prompt's 4 complete blocks (measured: 28 of 28 on every run, 7 requests x 4 blocks, against a 75 % threshold),
    and a later run on the same deployment only finds more (the first request then finds them too)."""
    return exercise_result("kv_shared_prefix")


def test_a_real_run_finds_the_system_prompt_in_the_cache_only_with_sharing_on(result):
    assert result.outcome == "shared"
    assert result.numbers["blocks_found_off"] == 0
    assert result.numbers["blocks_found_on"] >= engine.SHARED_AT_LEAST * result.numbers["prefix_blocks_possible"]
    assert result.numbers["prompt_tokens_computed_on"] < result.numbers["prompt_tokens_computed_off"]
