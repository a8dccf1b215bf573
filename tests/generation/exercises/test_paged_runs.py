"""What the paged engine's exercises share (app/generation/exercises/paged_runs.py), and the token_ms
setting two of them use (PagedSettings.token_ms): pure, no server."""
from __future__ import annotations

import hashlib
import math

import pandas as pd

from app.generation.exercises import paged_runs
from app.generation.paged.engine import PagedSettings, setup_name
from app.generation.paged.engine.settings import settings_of


def test_gaps_are_pooled_per_request_in_receive_order():
    tokens = pd.DataFrame({"index": [0, 1, 0, 1, 0], "t_recv": [0.0, 0.005, 0.010, 0.105, 0.030]})
    assert sorted(round(g, 6) for g in paged_runs.gaps_ms(tokens)) == [10.0, 20.0, 100.0]
    assert paged_runs.gaps_ms(tokens.iloc[:0]).size == 0


def test_percentiles_skip_what_is_not_a_number():
    assert paged_runs.pct([1.0, float("nan"), 3.0], 50) == 2.0
    assert math.isnan(paged_runs.pct([float("nan")], 99))


def test_runs_join_table_by_table_and_are_picked_by_label():
    a = {"requests": pd.DataFrame({"label": ["on"], "index": [0]})}
    b = {"requests": pd.DataFrame({"label": ["off"], "index": [0]})}
    joined = paged_runs.joined([a, b])["requests"]
    assert list(joined["label"]) == ["on", "off"]
    assert list(paged_runs.of(joined, "off")["label"]) == ["off"]


def test_token_ms_names_a_deployment_only_when_set_and_round_trips_through_the_config():
    plain, costly = PagedSettings(num_blocks=16), PagedSettings(num_blocks=16, token_ms=2.0)
    assert "token_ms" not in plain.parameters() and costly.parameters()["token_ms"] == "2"
    assert setup_name(plain) != setup_name(costly)
    assert setup_name(plain) == setup_name(PagedSettings(num_blocks=16, token_ms=0.0))
    # The name settings without token_ms had before the field came: deployments keep their names.
    before = sorted([("num_blocks", 16), ("block_size", 16), ("max_batch_tokens", 128), ("scheduler", "fifo"),
                     ("prefix_sharing", True), ("step_ms", 10.0)])
    assert setup_name(plain) == f"kv_lab_{hashlib.sha256(repr(before).encode()).hexdigest()[:10]}"
    assert settings_of(costly.to_config(setup_name(costly))) == costly
    assert settings_of(plain.to_config(setup_name(plain))) == plain


def test_token_ms_out_of_range_is_a_problem():
    assert [p.code for p in PagedSettings(token_ms=-1.0).problems()] == ["kv_setting_range"]
    assert not PagedSettings(token_ms=2.0).problems()
