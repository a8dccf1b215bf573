"""The presenter's generation demo: the diff is the generator's scheduler change, its options are the lab
page's compare answers, and the reveal judges them by the runs' numbers (runs.answer)."""
from __future__ import annotations

import pandas as pd
import pytest

from app.generation import demo as gen_demo
from app.generation import runs
from app.generation import words as gw
from app.presenter import view as ui


def test_the_diff_swaps_the_dynamic_batcher_for_iterative_sequences_and_keys_state_by_corrid():
    demo = gen_demo.DEMOS["static_inflight"]
    out, into = gen_demo.changed(demo)
    assert [line.strip() for line in out] == ["dynamic_batching {", 'string_value: "row"']
    assert "sequence_batching {" in into and "iterative_sequence: true" in [line.strip() for line in into]
    assert [line.strip() for line in into][-1] == 'string_value: "corrid"'
    assert any("state_key" in d.text for d in gen_demo.config_diff(demo) if d.kind == "context")


def test_the_options_are_the_compare_answers_and_the_family_is_told_apart():
    assert set(gen_demo.OPTIONS) == set(gw.ANSWERS[gen_demo.KIND])
    assert ui.family("static_inflight") == gen_demo.FAMILY and ui.family("state_key") == ui.RECOGNISER
    assert ui.known("static_inflight") == "static_inflight" and ui.known("nonsense") == "state_key"
    assert len(set(ui.DEMO_NAMES)) == len(ui.DEMO_NAMES)


def _run(mode: str, ttft_p50_ms: float) -> runs.GenRun:
    empty = pd.DataFrame()
    return runs.GenRun(mode=mode, label=mode, model=mode, max_batch_size=4, tokens=empty, requests=empty, steps=empty,
                       numbers={"ttft_p50_ms": ttft_p50_ms})


@pytest.mark.parametrize("static, inflight, seen", [(300.0, 40.0, "inflight"), (40.0, 300.0, "static"),
                                                    (100.0, 110.0, "same")])
def test_the_reveal_is_what_the_numbers_say_and_the_share_is_of_the_votes(static, inflight, seen):
    demo = gen_demo.DEMOS["static_inflight"]
    done = {"before": _run("static", static), "after": _run("inflight", inflight)}
    answer = gen_demo.reveal(demo, done, {"inflight": 3, "static": 1, "elsewhere": 5})
    assert answer.seen == seen and answer.right == (seen,)
    assert answer.votes == 4 and answer.share_right == {"inflight": 0.75, "static": 0.25, "same": 0.0}[seen]
    assert gen_demo.reveal(demo, done, {}).share_right is None
