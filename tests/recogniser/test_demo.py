"""The presenter's demos: the config diff names the changed lines, both sides get identical
traffic, and the reveal judges each option by what a real run did."""
from __future__ import annotations

import pandas as pd
import pytest

from app.recogniser import demo as demos
from app.recogniser.engine.presets import PRESETS


@pytest.mark.parametrize("name, removed, added", [
    ("state_key", 'string_value: "slot"', 'string_value: "corrid"'),
    ("ready", 'string_value: "false"', 'string_value: "true"'),
])
def test_one_line_changes(name, removed, added):
    out, into = demos.changed(demos.DEMOS[name])
    assert [line.strip() for line in out] == [removed] and [line.strip() for line in into] == [added]
    lines = demos.config_diff(demos.DEMOS[name])
    assert [d.kind for d in lines].count("removed") == 1 and [d.kind for d in lines].count("added") == 1
    assert any("state_key" in d.text or "honour_ready" in d.text for d in lines if d.kind == "context"), \
        "the context names the parameter that changed"


def test_the_scheduler_demo_swaps_the_batcher_block():
    out, into = demos.changed(demos.DEMOS["scheduler"])
    assert any("dynamic_batching" in line for line in out)
    assert any("sequence_batching" in line for line in into) and any("direct" in line for line in into)


def test_every_demo_pairs_two_presets_and_an_unknown_name_falls_back():
    for demo in demos.DEMOS.values():
        assert demo.before in PRESETS and demo.after in PRESETS and demo.asks in demos.SIDES
        assert demo.settings("before") != demo.settings("after")
    assert demos.get("nonsense") is demos.DEMOS[demos.DEFAULT]


def _sessions(*verdicts: str) -> pd.DataFrame:
    return pd.DataFrame({"session": range(len(verdicts)), "verdict": list(verdicts)})


def test_reveal_counts_votes_for_options_the_run_bears_out():
    demo = demos.DEMOS["state_key"]
    tally = {"intact": 3, "foreign": 5, "lost": 2}
    both = demos.reveal(demo, _sessions("foreign", "lost", "intact"), tally)
    assert both.outcome == "corrupted" and set(both.right) == {"foreign", "lost"}
    assert both.share_right == pytest.approx(7 / 10) and both.share_outcome_right == pytest.approx(7 / 10)
    one = demos.reveal(demo, _sessions("foreign", "foreign"), tally)
    assert one.right == ("foreign",) and one.share_right == pytest.approx(0.5)
    assert set(one.outcome_right) == {"foreign", "garbage", "lost"} and one.share_outcome_right == pytest.approx(0.7)
    clean = demos.reveal(demo, _sessions("intact", "intact"), tally)
    assert clean.right == ("intact",) and clean.share_right == pytest.approx(0.3)
    assert demos.reveal(demo, _sessions("intact"), {}).share_right is None


def test_both_sides_run_the_same_traffic_and_the_reveal_follows_the_run(lab_server, deployer):
    demo = demos.DEMOS["state_key"]
    sides = demos.run_side_by_side(lab_server, deployer, demo, sessions=4)
    before, after = sides["before"].result, sides["after"].result
    assert before.scenario.texts == after.scenario.texts and before.scenario.seed == after.scenario.seed
    assert len(before.sessions) == 4
    seen = set(before.sessions["verdict"])
    answer = demos.reveal(demo, before.sessions, {"intact": 1, "foreign": 1})
    expected = {"intact"} if seen == {"intact"} else seen - {"intact"}
    assert set(answer.right) == expected & set(demo.options)
    assert answer.outcome == ("intact" if seen == {"intact"} else "corrupted")
    assert set(after.sessions["verdict"]) == {"intact"}, "state keyed by correlation ID survives oldest"
