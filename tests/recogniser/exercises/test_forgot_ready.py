"""Forgot READY on the real server, run once: padding rows corrupt live sessions; honouring READY fixes it."""
from __future__ import annotations

import pandas as pd
import pytest

from app.recogniser.engine.judgement import analysis, evidence
from app.recogniser.exercises.forgot_ready import engine as forgot_ready
from app.registry import exercise_words as text
from tests.exercises.renderings import TRANSLATED, untranslated, untranslated_figures


def _tables(ignored: list[tuple[str, str]], honoured: list[str], batch_sizes=None, inferences: int = 12) -> dict:
    """Hand-made measurements: per session (verdict, whose state it read) for READY ignored, verdicts
    for READY honoured, and the server's batch counts for each run."""
    def rows(run, sessions):
        return [{"session": i, "verdict": v, "read_state_of": who, "first_wrong": None if v == "intact" else 3,
                 "wrong_symbols": 0 if v == "intact" else 5, "detail_code": "read_padding" if who == "padding" else "",
                 "expected_text": "HI", "received_text": "HI", "run": run} for i, (v, who) in enumerate(sessions)]
    sessions = pd.DataFrame(rows("ready_ignored", ignored) + rows("ready_honoured", [(v, "") for v in honoured]))
    server = pd.DataFrame([
        {"run": "ready_ignored", "inference_count": inferences, "execution_count": 4, "requests_sent": inferences,
         "batch_sizes": batch_sizes or {4: 4}},
        {"run": "ready_honoured", "inference_count": inferences, "execution_count": 4, "requests_sent": inferences,
         "batch_sizes": batch_sizes or {4: 4}},
    ])
    return {"sessions": sessions, "server": server}


def test_judge_garbage_when_a_session_read_a_padding_rows_state():
    judged = forgot_ready.judge(_tables([("garbage", "padding"), ("intact", "")], ["intact", "intact"], {4: 4}, inferences=12))
    assert judged.outcome == "garbage"
    assert judged.numbers["padding_rows_run"] == 4 and judged.numbers["ignored_sessions_read_padding"] == 1
    assert [f.values["who"] for f in judged.findings if f.code == "session_padding"] == [0]
    assert judged.findings[-1].code == "honoured_intact" and judged.explanation[-2].code == "fixed_intact"


def test_judge_intact_when_no_session_was_hit():
    judged = forgot_ready.judge(_tables([("intact", ""), ("intact", "")], ["intact", "intact"], {2: 6}, inferences=12))
    assert judged.outcome == "intact"
    assert judged.numbers["padding_rows_run"] == 0 and judged.numbers["ignored_sessions_corrupted"] == 0


def test_judge_refused_when_the_server_refused_a_chunk():
    judged = forgot_ready.judge(_tables([("error", ""), ("garbage", "padding")], ["intact", "error"]))
    assert judged.outcome == "refused"
    assert judged.findings[-1] == forgot_ready.Finding("honoured_verdicts", {"verdicts": {"intact": 1, "error": 1}, "skipped": 4})
    assert judged.explanation[-2] == forgot_ready.Finding("fixed_verdicts", {"verdicts": {"intact": 1, "error": 1}})


@pytest.fixture(scope="module")
def result(exercise_result):
    """One real run. Not certain: `garbage`. A padding row corrupts a session only when it runs in the
    slot of a live session whose next request is not in that batch; whether any batch of this run
    does is timing (the exercise says "on most runs"), so the tests pin the outcome the evidence
    makes certain: `garbage` exactly when some session's first wrong chunk read a padding row's
    state, else `intact`; never `refused` (6 sessions on capacity 2 x 4: no backlog; pauses of at
    most 75 ms against the 5 s idle timeout). Certain whatever the timing:
    - no session reads another's state: direct pins a sequence to its slot, START resets that cell;
    - every session that broke broke on a padding row: the honoured run decodes the same texts and
      audio intact, so nothing is misread;
    - padding rows ran: 6 sessions on 2 instances of 4 slots put at least two on one instance; their
      think times differ by at least 12 ms a pause (staggered 5..65 ms, 180 ms over 15 pauses), so
      their 16 chunks cannot all share executions, and an execution with the higher slot's request
      but not the lower slot's carries a padding row for it (live, ended, or not yet started);
    - READY honoured: every padding row is skipped, so every session of that run is intact."""
    return exercise_result("forgot_ready")


def test_ignoring_ready_folds_padding_into_live_sessions(result):
    broken = result.runs["ready_ignored"]
    # The model's own report: a session's first wrong chunk read state a padding row wrote.
    hit = evidence.broke_on_padding(broken)
    # Whether a padding row lands in a live session's slot is timing (the fixture): the outcome
    # follows from that evidence, and whichever it is, every session that broke broke on padding.
    assert result.outcome == ("garbage" if hit else "intact"), broken.sessions[["session", "verdict", "detail_code"]].to_dict("records")
    assert set(broken.sessions.loc[broken.sessions["verdict"] != "intact", "session"]) == set(hit)
    assert result.numbers["ignored_sessions_read_padding"] == len(hit)
    sessions = broken.sessions.set_index("session")
    assert set(sessions.loc[hit, "read_state_of"]) <= {"padding"}
    # Direct still pins each session to its slot: no other session's state is ever read.
    assert not evidence.broke_on_another_session(broken) and not evidence.strangers_read(broken)
    n = result.numbers
    assert n["ignored_verdicts"] == {k: int(v) for k, v in broken.sessions["verdict"].value_counts().items()}
    assert n["ignored_verdicts"].get("garbage", 0) == len(hit)
    # One finding per session that read a padding row's state, naming that session.
    assert sorted(f.values["who"] for f in result.findings if f.code == "session_padding") == sorted(hit)
    assert result.findings[0] == forgot_ready.Finding("ignored", {"verdicts": n["ignored_verdicts"], "padding": len(hit)})
    sessions = result.tables["sessions"]
    assert set(sessions["run"]) == {"ready_ignored", "ready_honoured"}
    assert set(sessions[sessions["run"] == "ready_ignored"].set_index("session").loc[hit, "detail_code"]) <= {"read_padding"}


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


def test_every_finding_renders_in_every_language(result):
    for lang in TRANSLATED:
        assert not untranslated("forgot_ready", result.findings + result.explanation, lang)
        assert not untranslated_figures(result, lang)
    assert set(result.numbers) == set(text.module("forgot_ready").NUMBERS)
    assert set(forgot_ready.EXERCISE.options) == set(text.module("forgot_ready").OPTIONS)


def hand_made_tables() -> dict:
    """This exercise's judge tables made by hand, for its figures and their summaries
    (tests/recogniser/exercises/test_exercise_chart_summaries.py)."""
    return _tables([("garbage", "padding"), ("intact", "")], ["intact", "intact"], {4: 4}, inferences=12)
