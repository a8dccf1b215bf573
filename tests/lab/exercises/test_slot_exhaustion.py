"""Slot exhaustion on the real server, run once: sessions beyond capacity wait in the backlog, no errors."""
from __future__ import annotations

import pytest

from app.charts import exercises as charts
from app.i18n import words
from app.lab.exercises import slot_exhaustion
from app.text import exercises as text


@pytest.fixture(scope="module")
def result(exercise_result):
    return exercise_result("slot_exhaustion")


def test_sessions_beyond_capacity_wait_without_errors(result):
    n = result.numbers
    assert result.outcome == "wait"
    assert n["errors"] == 0
    # 5 sessions on 2 slots: at least the ones that found no free slot waited for one.
    assert n["direct_sessions_waited"] >= 1
    assert n["direct_max_wait_ms"] > slot_exhaustion.WAITED_MS
    sessions = result.tables["sessions"]
    assert set(sessions["verdict"]) == {"intact"}
    assert len(sessions) == 2 * slot_exhaustion.SESSIONS


def test_oldest_has_the_same_capacity_limit(result):
    assert result.numbers["oldest_sessions_waited"] >= 1
    assert result.numbers["oldest_max_wait_ms"] > slot_exhaustion.WAITED_MS


def test_slots_are_held_far_more_than_the_instance_computes(result):
    n = result.numbers
    assert n["direct_slots_held_pct"] > n["direct_instance_busy_pct"]


def test_sweep_wait_grows_with_sessions(result):
    sweep = result.tables["sweep"]
    assert set(sweep["sessions"]) == set(slot_exhaustion.SWEEP)
    for strategy, rows in sweep.groupby("strategy"):
        waits = rows.set_index("sessions")["max_wait_ms"]
        assert waits[max(slot_exhaustion.SWEEP)] > waits[min(slot_exhaustion.SWEEP)], strategy
        assert rows["intact"].all()


def test_findings_carry_the_measured_values(result):
    n = result.numbers
    codes = [f.code for f in result.findings]
    assert codes[:3] == ["direct_waited", "direct_held", "oldest_waited"]
    waited = result.findings[0].values
    assert waited["waited"] == n["direct_sessions_waited"] and waited["sessions"] == slot_exhaustion.SESSIONS
    assert waited["longest"] == n["direct_max_wait_ms"]
    held = result.findings[1].values
    assert held["held"] == pytest.approx(n["direct_slots_held_pct"] / 100)
    assert held["busy"] == pytest.approx(n["direct_instance_busy_pct"] / 100)
    sweep = [f.values for f in result.findings if f.code == "sweep"]
    assert {(v["strategy"], v["sessions"]) for v in sweep} == {(s, c) for s in slot_exhaustion.STRATEGIES for c in slot_exhaustion.SWEEP}
    assert [f.code for f in result.explanation] == ["slot_until_end", "capacity", "backlog", "slots_not_server", "oldest_same", "cure"]
    assert result.explanation[1].values == {"capacity": n["capacity_sequences"]}


def test_every_finding_renders_in_both_languages(result):
    rendered = [text.finding("slot_exhaustion", f, words(lang)) for f in result.findings + result.explanation for lang in ("en", "zh")]
    assert all(rendered)
    assert f"{result.numbers['direct_sessions_waited']} of {slot_exhaustion.SESSIONS} sessions waited" in rendered[0]
    assert set(slot_exhaustion.EXERCISE.options) == set(text.module("slot_exhaustion").OPTIONS)
    assert set(result.numbers) == set(text.module("slot_exhaustion").NUMBERS)
    for lang in ("en", "zh"):
        figures = charts.figures(result, words(lang))
        assert [caption for caption, _ in figures] and all(fig.layout.title.text for _, fig in figures)


def test_result_is_reported_as_text_and_json(result):
    summary = text.summary(result, words("en"))
    assert "Slot exhaustion" in summary and "direct: longest backlog wait (ms)" in summary
    data = result.to_json()
    assert data["exercise"] == "slot_exhaustion" and data["outcome"] == "wait"
    assert {"sessions", "holding", "sweep"} <= set(data["tables"])
    assert set(data["runs"]) == {"direct", "oldest"}
    assert data["findings"][0]["code"] == "direct_waited"
