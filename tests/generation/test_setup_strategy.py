"""The generation lab's set-up in the URL: the in-flight strategy travels as g_strategy, and a link from before it
existed (no g_strategy) still opens gen_inflight's strategy, oldest."""
from __future__ import annotations

from app.generation import runs
from app.generation.setup import GenSetup


def test_an_old_link_without_a_strategy_opens_oldest_and_a_new_one_round_trips():
    old = {"g_mode": "inflight", "g_max_batch_size": "4", "g_requests": "8"}
    assert GenSetup.from_query(old).strategy == "oldest"
    direct = GenSetup(mode="inflight", strategy="direct")
    assert direct.to_query()["g_strategy"] == "direct"
    assert GenSetup.from_query(direct.to_query()) == direct
    assert GenSetup.from_query({"g_strategy": "newest"}).strategy == "oldest"


def test_the_strategy_reaches_the_in_flight_deployment_only():
    setup = GenSetup(strategy="direct", max_candidates=2)
    assert runs.settings_for(setup, "inflight").strategy == "direct"
    assert runs.settings_for(setup, "static").normalised().strategy == "oldest"
