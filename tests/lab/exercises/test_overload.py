"""Overload on the real server, run once: no session is refused at the door, the wait grows with
the load, and at 8x the sessions that waited past the idle timeout are reaped right after they
get a slot; each remedy stops the reaping."""
from __future__ import annotations

import pytest

from app.charts import exercises as charts
from app.i18n import words
from app.lab.exercises import overload
from app.text import exercises as text


@pytest.fixture(scope="module")
def result(exercise_result):
    return exercise_result("overload")


def test_nobody_is_refused_and_the_wait_grows_with_the_load(result):
    loads = result.tables["loads"].set_index("run")
    assert list(loads["sessions"]) == [load * overload.CAPACITY for load in overload.LOADS]
    assert loads["refused_at_start"].sum() == 0
    means = list(loads["mean_wait_s"])
    assert means == sorted(means) and means[-1] > 2 * means[0]
    assert loads.loc["2x", "reaped"] == 0  # two waves: nobody waits anywhere near the 2 s timeout


def test_at_8x_sessions_that_waited_past_the_timeout_are_reaped_after_getting_a_slot(result):
    assert result.outcome == "reaped"
    s = result.tables["sessions"]
    heavy = s[s["run"] == f"{overload.OVERLOAD}x"]
    reaped = heavy[heavy["reaped"]]
    assert not reaped.empty
    assert set(reaped["chunks_answered"]) == {1}  # the first chunk ran in the slot; the next lacked START
    timeout_s = overload.IDLE_TIMEOUT_US / 1e6
    assert reaped["wait_s"].min() > timeout_s - overload.THINK_MS / 1000 - 0.05
    # No upper bound on the waits of sessions that were not reaped: when the reaper thread runs late
    # on a loaded machine, a session can take its slot after 2.5 s and still send in time (seen once).
    assert (heavy[~heavy["reaped"]]["verdict"] == "intact").all()
    n = result.numbers
    assert n["first_load_with_reaping"] in ("4x", "8x") and n["chunks_a_reaped_session_got"] == "1"
    assert n["reaped_8x"] == len(reaped) and n["refused_at_start"] == 0
    found = {f.code: f.values for f in result.findings}
    assert found["reaped_sessions"] == {"wait": reaped_min(s), "timeout": timeout_s, "chunks": "1"}
    loads = [f.values for f in result.findings if f.code == "load"]
    assert [v["load"] for v in loads] == list(overload.LOADS) and loads[-1]["reaped"] == len(reaped)
    assert [f.code for f in result.explanation] == ["why_no_queue_policy", "why_idle_clock", "why_reaped", "why_remedies"]
    assert result.explanation[2].values == {"load": int(n["first_load_with_reaping"].removesuffix("x"))}


def reaped_min(s):
    return float(s[s["reaped"] & s["run"].isin([f"{load}x" for load in overload.LOADS])]["wait_s"].min())


def test_the_servers_log_shows_one_reaper_force_end_and_one_start_refusal_per_reaped_session(result):
    heavy = result.runs[f"{overload.OVERLOAD}x"]
    loads = result.tables["loads"].set_index("run")
    reaped = loads.loc[f"{overload.OVERLOAD}x", "reaped"]
    assert loads.loc[f"{overload.OVERLOAD}x", "reaper_force_ends_logged"] == reaped
    assert heavy.log.count(overload.LogCode.START_FLAG_MISSING) == reaped
    # Sessions that reached the server while all CAPACITY slots were held had to wait in the
    # backlog; one that arrives after an END freed a slot need not. So count only the sessions
    # whose START was sent before the first END ran (server time, from the trace), with a margin
    # for the trip to the server: at least that many minus CAPACITY were backlogged.
    q = heavy.requests
    last = q[q["error"] == ""].sort_values("chunk").groupby("session").tail(1)
    ended = last.merge(heavy.sessions[["session", "chunks"]], on="session")
    ended = ended[ended["chunk"] == ended["chunks"] - 1]
    first_release = ended["exec_end"].min() if not ended.empty else float("inf")
    starts = q[q["chunk"] == 0]
    early = int((starts["t_send"] < first_release - 0.05).sum())
    assert loads.loc[f"{overload.OVERLOAD}x", "backlog_logged"] >= early - overload.CAPACITY
    assert loads.loc[f"{overload.OVERLOAD}x", "backlog_logged"] <= heavy.sessions.shape[0] - 1


def test_each_remedy_stops_the_reaping_and_says_what_it_costs(result):
    remedies = result.tables["remedies"].set_index("run")
    assert list(remedies.index) == [code for code, *_ in overload.REMEDIES]
    assert (remedies["reaped"] == 0).all() and (remedies["refused_at_start"] == 0).all()
    assert (remedies["intact"] == overload.OVERLOAD * overload.CAPACITY).all()
    assert remedies.loc["more_slots", "max_wait_s"] < result.tables["loads"].set_index("run").loc["8x", "max_wait_s"]
    said = {f.code: f for f in result.findings if f.code.startswith("remedy_")}
    assert list(said) == [f"remedy_{code}" for code, *_ in overload.REMEDIES]
    for code, f in said.items():
        assert f.values["reaped"] == 0 and f.values["max_wait"] == remedies.loc[code.removeprefix("remedy_"), "max_wait_s"]
        assert "; cost: " in text.finding("overload", f, words("en"))  # each remedy says what it costs


def test_every_finding_renders_in_both_languages_and_the_words_quote_the_constants(result):
    rendered = [text.finding("overload", f, words(lang)) for f in result.findings + result.explanation
                for lang in ("en", "zh")]
    assert all(rendered)
    assert set(result.numbers) == set(text.module("overload").NUMBERS)
    scenario = text.module("overload").SCENARIO
    c = overload.CAPACITY
    assert f"{overload.BASE.instances} instance × {overload.BASE.slots} slots (capacity {c} sequences)" in scenario
    assert f"max_sequence_idle_microseconds = {overload.IDLE_TIMEOUT_US}" in scenario
    assert f"A burst of {overload.OVERLOAD * c} clients ({overload.OVERLOAD}× capacity)" in scenario
    assert f"each sends {overload.CHUNKS} chunks, {overload.THINK_MS:.0f} ms apart" in scenario
    assert f"the {overload.OVERLOAD * c} sessions" in text.module("overload").QUESTION
    for lang in ("en", "zh"):
        assert len(charts.figures(result, words(lang))) == 2
