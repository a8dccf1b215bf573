"""Forgot READY on the real server, run once: padding rows corrupt live sessions; honouring READY fixes it."""
from __future__ import annotations

import pytest

from app.charts import exercises as charts
from app.i18n import words
from app.lab.exercises import forgot_ready
from app.lab.judgement import analysis, evidence
from app.text import exercises as text


@pytest.fixture(scope="module")
def result(exercise_result):
    return exercise_result("forgot_ready")


def test_ignoring_ready_folds_padding_into_live_sessions(result):
    assert result.outcome == "garbage"
    broken = result.runs["ready_ignored"]
    # The model's own report: a session's first wrong chunk read state a padding row wrote.
    hit = evidence.broke_on_padding(broken)
    assert hit, broken.sessions[["session", "verdict", "detail_code"]].to_dict("records")
    assert result.numbers["ignored_sessions_read_padding"] == len(hit)
    sessions = broken.sessions.set_index("session")
    assert set(sessions.loc[hit, "read_state_of"]) == {"padding"}
    # Direct still pins each session to its slot: no other session's state is ever read.
    assert not evidence.broke_on_another_session(broken) and not evidence.strangers_read(broken)
    n = result.numbers
    assert n["ignored_verdicts"] == {k: int(v) for k, v in broken.sessions["verdict"].value_counts().items()}
    assert n["ignored_verdicts"].get("garbage", 0) >= len(hit)
    # One finding per session that read a padding row's state, naming that session.
    assert sorted(f.values["who"] for f in result.findings if f.code == "session_padding") == sorted(hit)
    assert result.findings[0] == forgot_ready.Finding("ignored", {"verdicts": n["ignored_verdicts"], "padding": len(hit)})
    sessions = result.tables["sessions"]
    assert set(sessions["run"]) == {"ready_ignored", "ready_honoured"}
    assert set(sessions[sessions["run"] == "ready_ignored"].set_index("session").loc[hit, "detail_code"]) == {"read_padding"}


def test_direct_runs_padding_rows(result):
    # Two independent counts: the server's batch statistics and this run's trace.
    assert result.numbers["padding_rows_run"] > 0
    rows = next(f for f in result.findings if f.code == "padding_rows")
    assert rows.values["padding"] == result.numbers["padding_rows_run"] and rows.values["requests"] == result.numbers["requests"]
    assert result.explanation[2] == forgot_ready.Finding("this_run", {"padding": result.numbers["padding_rows_run"]})
    assert len(analysis.padding_rows(result.runs["ready_ignored"].requests)) > 0


def test_honouring_ready_keeps_every_session_intact(result):
    fixed = result.runs["ready_honoured"]
    assert list(fixed.sessions["received_text"]) == [p.text for p in fixed.plans]
    assert evidence.read_only_own_state(fixed)
    assert result.numbers["honoured_intact"]
    assert result.findings[-1].code == "honoured_intact"
    assert [f.code for f in result.explanation] == [
        "direct_width", "padding_request", "this_run", "folded", "varies", "fixed_intact", "rule"]


def test_every_finding_renders_in_both_languages(result):
    rendered = [text.finding("forgot_ready", f, words(lang)) for f in result.findings + result.explanation for lang in ("en", "zh")]
    assert all(rendered)
    assert set(result.numbers) == set(text.module("forgot_ready").NUMBERS)
    assert set(forgot_ready.EXERCISE.options) == set(text.module("forgot_ready").OPTIONS)
    for lang in ("en", "zh"):
        assert all(fig.layout.title.text for _, fig in charts.figures(result, words(lang)))
