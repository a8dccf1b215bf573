"""Workloads: seeded, in arrival order, within their ranges, with tags no other run shares."""
from __future__ import annotations

import pytest

from app.generation.engine import MAX_TOKENS_LIMIT, PlannedRequest, Workload
from app.lab.problems import LabError


def test_the_same_workload_and_tags_plan_the_same_requests_and_another_seed_others():
    tags = list(range(100, 124))
    a = Workload(requests=24, seed=3).plan(tags)
    assert a == Workload(requests=24, seed=3).plan(tags)
    assert a != Workload(requests=24, seed=4).plan(tags)
    assert [p.tag for p in a] == tags and [p.index for p in a] == list(range(24))


def test_arrivals_start_at_zero_rise_and_average_the_mean_gap():
    plans = Workload(requests=64, mean_gap_ms=40, seed=1).plan(list(range(64)))
    arrivals = [p.arrival_s for p in plans]
    assert arrivals[0] == 0.0 and arrivals == sorted(arrivals)
    assert 0.025 < arrivals[-1] / 63 < 0.055  # exponential gaps of mean 40 ms over 63 gaps
    assert all(a == 0.0 for a in (p.arrival_s for p in Workload(requests=5, mean_gap_ms=0).plan(list(range(5)))))


def test_lengths_and_prompts_stay_in_range():
    plans = Workload(requests=64, min_tokens=3, max_tokens=5, seed=2).plan(list(range(64)))
    assert {p.max_tokens for p in plans} == {3, 4, 5}
    assert all(len(p.prompt) == 4 and all(0 <= t < 64 for t in p.prompt) for p in plans)


def test_two_plans_without_tags_never_share_one():
    first, second = Workload(requests=8).plan(), Workload(requests=8).plan()
    assert len({p.tag for p in first} | {p.tag for p in second}) == 16


@pytest.mark.parametrize(("workload", "codes"), [
    (Workload(requests=0), ["gen_requests_range"]),
    (Workload(requests=65), ["gen_requests_range"]),
    (Workload(mean_gap_ms=-1), ["gen_gap_range"]),
    (Workload(min_tokens=0), ["gen_tokens_range"]),
    (Workload(min_tokens=9, max_tokens=8), ["gen_tokens_range"]),
    (Workload(max_tokens=MAX_TOKENS_LIMIT + 1), ["gen_tokens_range"]),
    (Workload(requests=0, max_tokens=0), ["gen_requests_range", "gen_tokens_range"]),
    (Workload(requests=64, min_tokens=64, max_tokens=64, mean_gap_ms=10_000), []),
])
def test_each_bad_setting_is_named(workload, codes):
    assert [p.code for p in workload.problems()] == codes
    if codes:
        with pytest.raises(LabError) as err:
            workload.plan()
        assert [p.code for p in err.value.problems] == codes


def test_tags_must_match_the_requests():
    with pytest.raises(ValueError, match="3 requests need 3 tags"):
        Workload(requests=3).plan([1, 2])
    assert isinstance(Workload(requests=1).plan([7])[0], PlannedRequest)
