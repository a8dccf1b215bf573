"""Correlation ID collision: the judge on hand-made tables, one test per outcome; then the real server,
run once, and the CLI that runs an exercise headless."""
from __future__ import annotations

import json

import pandas as pd
import pytest

from app.cli import print_exercise
from app.exercise_kit import ExerciseResult, Finding, Measured
from app.i18n import words
from app.lab.observation import START_REFUSAL
from app.recogniser.engine.judgement import evidence
from app.recogniser.exercises.id_collision import engine as id_collision
from app.registry import exercise_words as text
from tests.exercises.renderings import TRANSLATED, untranslated, untranslated_figures

SHARED = "42"
CONFLICT = "sequence 42 for model 'asr_ex' has a conflict. The previous sequence did not end before this sequence start."
REFUSAL = "inference request for sequence 42 to model 'asr_ex' must specify the START flag on the first request of the sequence"
# Same ID, in send order: (session, chunk, STATE_OWNER read, right, error). Session 0 (tag 11, the shorter
# text, so its END comes first) and session 1 (tag 12) read each other's state, then session 1 is refused.
MERGED = [(0, 0, 0, True, ""), (1, 0, 11, False, ""), (0, 1, 12, False, ""), (1, 1, 11, False, ""), (0, 2, 12, False, ""),
          (1, 2, -1, False, REFUSAL)]
APART = [(0, 0, 0, True, ""), (1, 0, 0, True, ""), (0, 1, 11, True, ""), (1, 1, 12, True, "")]


def _tables(same_id, verdicts=("foreign", "foreign"), read=(1, 0), unique=("intact", "intact"), log=True, conflicts=1) -> dict:
    """Hand-made measurements: each run's requests and sessions, and the same-ID run's server log
    (`conflicts` conflict warnings for the shared ID, one for another ID that must not count)."""
    def requests(run, rows):
        return [{"run": run, "session": s, "chunk": c, "t_send": 0.01 * i, "instance": 0, "state_owner": owner,
                 "symbol": 5 if right else 9, "expected": 5, "error": error}
                for i, (s, c, owner, right, error) in enumerate(rows)]
    unique_rows = [(0, 0, 0, True, ""), (1, 0, 0, True, ""), (0, 1, 21, True, ""), (1, 1, 22, True, "")]
    sessions = [{"session": i, "corrid": SHARED, "verdict": v, "read_state_of": r, "detail_code": "", "expected_text": t,
                 "received_text": t, "tag": 11 + i, "run": "same_id"} for i, (v, r, t) in enumerate(zip(verdicts, read, id_collision.TEXTS, strict=True))]
    sessions += [{"session": i, "corrid": str(43 + i), "verdict": v, "read_state_of": None, "detail_code": "", "expected_text": t,
                  "received_text": t, "tag": 21 + i, "run": "unique_ids"} for i, (v, t) in enumerate(zip(unique, id_collision.TEXTS, strict=True))]
    lines = [{"run": "same_id", "code": "sequence_conflict", "corrid": SHARED, "level": "WARNING", "message": CONFLICT}] * conflicts
    lines += [{"run": "same_id", "code": "sequence_conflict", "corrid": "99", "level": "WARNING", "message": "sequence 99 ..."},
              {"run": "same_id", "code": "sequence_end", "corrid": SHARED, "level": "INFO", "message": "End sequence CORRID 42"}]
    return {
        "requests": pd.DataFrame(requests("same_id", same_id) + requests("unique_ids", unique_rows)),
        "sessions": pd.DataFrame(sessions),
        "server_log": pd.DataFrame(lines if log else [], columns=["run", "code", "corrid", "level", "message"]),
        "logs": pd.DataFrame([{"run": "same_id", "available": log}, {"run": "unique_ids", "available": log}]),
    }


def test_judge_merged_when_the_sessions_read_each_others_state():
    judged = id_collision.judge(_tables(MERGED))
    n = judged.numbers
    assert judged.outcome == "merged"
    assert n["shared_corrid"] == SHARED and n["collide_verdicts"] == {"foreign": 2} and n["collide_foreign_sessions"] == 2
    assert (n["collide_chunks_reading_other_session"], n["collide_chunks_right"], n["collide_chunks"], n["collide_refused_chunks"]) == (4, 1, 6, 1)
    assert n["refused_after_other_end"] and n["fixed_intact"] and n["conflict_warnings_logged"] == 1
    assert judged.findings == [
        Finding("same_id", {"verdicts": {"foreign": 2}, "cross": 4, "chunks": 6}),
        Finding("session_foreign", {"who": 0, "other": 1}),
        Finding("session_foreign", {"who": 1, "other": 0}),
        Finding("unique_intact"),
        Finding("log_warning", {"level": "WARNING", "message": CONFLICT}),
        Finding("refused_after_end", {"who": 1, "chunk": 3, "ended": 0, "message": REFUSAL}),
    ]
    assert [f.code for f in judged.explanation] == ["mechanism", "seen_merged", "log_only_trace", "fix", "fixed_intact"]
    assert judged.explanation[1].values == {"cross": 4, "chunks": 6}
    chunks = judged.tables["chunks"]
    mine = chunks[chunks["run"] == "same_id"]
    assert list(mine["read_state_of"]) == ["fresh", "other", "other", "other", "other", "refused"]
    assert list(mine["other_session"].dropna().astype(int)) == [0, 1, 0, 1]
    assert set(chunks[chunks["run"] == "unique_ids"]["read_state_of"]) == {"fresh", "own"}


def test_judge_apart_when_both_sessions_stayed_intact():
    judged = id_collision.judge(_tables(APART, verdicts=("intact", "intact"), read=(None, None), conflicts=0))
    assert judged.outcome == "apart"
    assert judged.numbers["collide_chunks_reading_other_session"] == 0 and judged.numbers["conflict_warnings_logged"] == 0
    assert not judged.numbers["refused_after_other_end"]
    assert [f.code for f in judged.findings] == ["same_id", "unique_intact"]
    assert [f.code for f in judged.explanation] == ["mechanism", "seen_apart", "fix", "fixed_intact"]


def test_judge_refused_when_the_second_start_was_turned_away():
    refused = [(0, 0, 0, True, ""), (1, 0, -1, False, "sequence 42 conflict"), (0, 1, 11, True, "")]
    judged = id_collision.judge(_tables(refused, verdicts=("intact", "error"), read=(None, None), unique=("intact", "garbage"), log=False))
    assert judged.outcome == "refused"
    assert judged.numbers["conflict_warnings_logged"] is None and not judged.numbers["fixed_intact"]
    assert judged.findings[1] == Finding("session_verdict", {"who": 1, "verdict": "error"})
    assert judged.findings[2] == Finding("unique_verdicts", {"verdicts": {"intact": 1, "garbage": 1}})
    assert judged.findings[3] == Finding("log_unavailable")
    assert judged.findings[4] == Finding("refused_after_end", {"who": 1, "chunk": 1, "ended": 0, "message": "sequence 42 conflict"})
    assert [f.code for f in judged.explanation] == ["mechanism", "seen_refused", "fix", "fixed_verdicts"]
    assert judged.explanation[-1].values == {"verdicts": {"intact": 1, "garbage": 1}}


@pytest.mark.parametrize("lang", TRANSLATED)
def test_judged_findings_and_figures_render_translated(lang):
    """Every template the judge can pick, on the hand-made tables, in every translated language."""
    merged = id_collision.judge(_tables(MERGED))
    refused = id_collision.judge(_tables([(0, 0, 0, True, ""), (1, 0, -1, False, "conflict")], verdicts=("intact", "error"),
                                         read=(None, None), unique=("intact", "garbage"), log=False))
    apart = id_collision.judge(_tables(APART, verdicts=("intact", "intact"), read=(None, None), conflicts=0))
    found = [f for j in (merged, refused, apart) for f in j.findings + j.explanation]
    assert {f.code for f in found} == set(text.module("id_collision").FINDINGS)  # every template the module has
    assert not untranslated("id_collision", found, lang)
    assert not untranslated_figures(ExerciseResult.of(id_collision.EXERCISE, Measured(tables=_tables(MERGED)), merged), lang)


@pytest.fixture(scope="module")
def result(exercise_result):
    """One real run. Why what these tests pin is certain (Enqueue, sequence_batch_scheduler.cc at r24.10):
    - `merged`, never `refused`: a START is never refused; a START for an ID in flight is logged once
      as a conflict (WARNING, any verbosity) and joins that ID's one slot, so both sessions' chunks run
      one at a time on one instance's cell for that ID. Session 2 starts 15 ms after session 1, which
      then has 14 chunks to send: each session's first chunk after the other's write reads the
      other's state (its owner tag), wrong unless the two letters coincide, and both keep sending
      about every 30 ms, so each session's first wrong chunk reads the other's (`foreign`, both).
    - a refusal: both sessions send an END for the one ID; the first END unmaps the ID as it is
      queued, so the other session's next chunk (at the latest its own END) is refused for lacking START.
    Not certain: which END comes first. The shorter session (ENDED_FIRST) sends its END about 33 ms
    of think time before the longer one's, a margin round trips can eat, so the tests pin only that
    the refused session is the one whose END was not the first."""
    return exercise_result("id_collision")


def test_same_id_merges_the_sessions_and_corrupts_both(result):
    assert result.outcome == "merged"
    run = result.runs["same_id"]
    collide = run.sessions.set_index("session")
    assert list(collide["verdict"]) == ["foreign", "foreign"]
    # Each names the other session as the one whose state it read, as the raw STATE_OWNER says.
    assert collide.loc[0, "read_state_of"] == 1 and collide.loc[1, "read_state_of"] == 0
    assert evidence.broke_on_another_session(run) == {0: 1, 1: 0}
    n = result.numbers
    assert n["collide_chunks_reading_other_session"] > 0
    assert n["collide_verdicts"] == {"foreign": 2} and n["collide_foreign_sessions"] == 2
    assert n["shared_corrid"] == str(run.plans[0].corrid) == str(run.plans[1].corrid)
    chunks = result.tables["chunks"]
    cross = chunks[(chunks["run"] == "same_id") & (chunks["read_state_of"] == "other")]
    assert len(cross) == n["collide_chunks_reading_other_session"]
    assert (cross["other_session"] != cross["session"]).all()
    assert set(chunks[chunks["run"] == "unique_ids"]["read_state_of"]) <= {"own", "fresh"}


def test_findings_name_the_sessions_and_the_values(result):
    n = result.numbers
    same = result.findings[0]
    assert same.code == "same_id"
    assert same.values == {"verdicts": {"foreign": 2}, "cross": n["collide_chunks_reading_other_session"], "chunks": n["collide_chunks"]}
    foreign = [f.values for f in result.findings if f.code == "session_foreign"]
    assert foreign == [{"who": 0, "other": 1}, {"who": 1, "other": 0}]
    assert "unique_intact" in [f.code for f in result.findings]
    refused = next(f for f in result.findings if f.code == "refused_after_end")
    assert refused.values["who"] == _ended_and_refused(result)[1]
    assert START_REFUSAL in refused.values["message"]
    if n["conflict_warnings_logged"]:
        assert "log_warning" in [f.code for f in result.findings]
    codes = [f.code for f in result.explanation]
    assert codes[:2] == ["mechanism", "seen_merged"] and codes[-2:] == ["fix", "fixed_intact"]
    assert result.explanation[1].values == {"cross": n["collide_chunks_reading_other_session"], "chunks": n["collide_chunks"]}


def test_every_finding_renders_in_every_language(result):
    english = [text.finding("id_collision", f, words("en")) for f in result.findings + result.explanation]
    assert "session 1: foreign, it read the state of session 2." in english
    for lang in TRANSLATED:
        assert not untranslated("id_collision", result.findings + result.explanation, lang)
        assert not untranslated_figures(result, lang)
    assert set(result.numbers) == set(text.module("id_collision").NUMBERS)
    assert set(id_collision.EXERCISE.options) == set(text.module("id_collision").OPTIONS)


def _ended_and_refused(result) -> tuple[set[int], int]:
    """Of the same-ID run: the sessions whose END was answered, and the session of the first refused chunk."""
    q = result.runs["same_id"].requests
    last = {p.index: len(p.symbols) - 1 for p in result.runs["same_id"].plans}
    ended = {int(r.session) for r in q.itertuples() if r.chunk == last[r.session] and not r.error}
    return ended, int(q[q["error"] != ""].sort_values("t_send")["session"].iloc[0])


def test_first_end_ends_the_sequence_for_both(result):
    assert result.numbers["collide_refused_chunks"] >= 1
    # Which END comes first is a margin of about 33 ms (the fixture); certain is that the first END
    # ended the ID for both: one session's END was answered and the other session was refused.
    ended, refused = _ended_and_refused(result)
    assert len(ended) == 1 and refused not in ended
    assert result.numbers["refused_after_other_end"]
    # The finding names the session whose END it was, read from this run, not the one planned to end first.
    assert [f.values["ended"] for f in result.findings if f.code == "refused_after_end"] == sorted(ended)


def test_unique_ids_fix_it(result):
    fixed = result.runs["unique_ids"]
    assert list(fixed.sessions["received_text"]) == id_collision.TEXTS
    assert evidence.read_only_own_state(fixed)
    assert fixed.sessions["corrid"].nunique() == 2
    assert result.numbers["fixed_intact"]


def test_the_printed_result_and_its_json_say_the_collision(result, capsys, tmp_path):
    """What `batching-lab exercise id_collision --json` prints and writes, through the function the
    command prints with, on the session's one run (tests/test_cli.py runs the command itself)."""
    out = tmp_path / "collision.json"
    print_exercise(result, words("en"), out)
    assert "Correlation ID collision" in capsys.readouterr().out
    data = json.loads(out.read_text())
    assert data["schema"] == 2 and data["exercise"] == "id_collision"
    assert data["outcome"] == "merged" and data["as_taught"] is True
    assert {"same_id", "unique_ids"} == set(data["runs"])
    assert [s["verdict"] for s in data["runs"]["same_id"]["sessions"]] == ["foreign", "foreign"]
    assert [s["verdict"] for s in data["runs"]["unique_ids"]["sessions"]] == ["intact", "intact"]
    assert data["findings"][0]["code"] == "same_id"
    assert data["numbers"]["collide_verdicts"] == {"foreign": 2}


def hand_made_tables() -> dict:
    """This exercise's judge tables made by hand, for its figures and their summaries
    (tests/recogniser/exercises/test_exercise_chart_summaries.py)."""
    return _tables(MERGED)
