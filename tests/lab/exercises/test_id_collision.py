"""Correlation ID collision on the real server, run once, and the CLI that runs an exercise headless."""
from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from app.charts import exercises as charts
from app.i18n import words
from app.lab import exercises
from app.lab.exercises import id_collision
from app.lab.judgement import evidence
from app.text import exercises as text


@pytest.fixture(scope="module")
def result(exercise_result):
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
    assert refused.values["who"] != refused.values["ended"]
    assert id_collision.START_REFUSAL in refused.values["message"]
    if n["conflict_warnings_logged"]:
        assert "log_warning" in [f.code for f in result.findings]
    codes = [f.code for f in result.explanation]
    assert codes[:2] == ["mechanism", "seen_merged"] and codes[-2:] == ["fix", "fixed_intact"]
    assert result.explanation[1].values == {"cross": n["collide_chunks_reading_other_session"], "chunks": n["collide_chunks"]}


def test_every_finding_renders_in_both_languages(result):
    rendered = [text.finding("id_collision", f, words(lang)) for f in result.findings + result.explanation for lang in ("en", "zh")]
    assert all(rendered)
    assert "session 1: foreign, it read the state of session 2." in rendered
    assert set(result.numbers) == set(text.module("id_collision").NUMBERS)
    assert set(id_collision.EXERCISE.options) == set(text.module("id_collision").OPTIONS)
    for lang in ("en", "zh"):
        assert all(fig.layout.title.text for _, fig in charts.figures(result, words(lang)))


def test_first_end_ends_the_sequence_for_both(result):
    assert result.numbers["collide_refused_chunks"] >= 1
    assert result.numbers["refused_after_other_end"]


def test_unique_ids_fix_it(result):
    fixed = result.runs["unique_ids"]
    assert list(fixed.sessions["received_text"]) == id_collision.TEXTS
    assert evidence.read_only_own_state(fixed)
    assert fixed.sessions["corrid"].nunique() == 2
    assert result.numbers["fixed_intact"]


def _cli() -> list[str]:
    script = Path(sys.executable).parent / "batching-lab"
    return [str(script)] if script.exists() else [sys.executable, "-m", "app.cli"]


def test_cli_writes_the_exercise_as_json(server_env, tmp_path):
    out = tmp_path / "collision.json"
    proc = subprocess.run([*_cli(), "exercise", "id_collision", "--json", str(out)], env=dict(os.environ),
                          capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stderr
    assert "Correlation ID collision" in proc.stdout
    data = json.loads(out.read_text())
    assert data["schema"] == 2 and data["exercise"] == "id_collision"
    assert data["outcome"] == "merged" and data["as_taught"] is True
    assert {"same_id", "unique_ids"} == set(data["runs"])
    assert [s["verdict"] for s in data["runs"]["same_id"]["sessions"]] == ["foreign", "foreign"]
    assert [s["verdict"] for s in data["runs"]["unique_ids"]["sessions"]] == ["intact", "intact"]
    assert data["findings"][0]["code"] == "same_id"
    assert data["numbers"]["collide_verdicts"] == {"foreign": 2}


def test_cli_lists_exercises_and_rejects_unknown_names():
    listing = subprocess.run([*_cli(), "exercise"], capture_output=True, text=True, timeout=60)
    assert listing.returncode == 0
    for name in exercises.EXERCISES:
        assert name in listing.stdout
    unknown = subprocess.run([*_cli(), "exercise", "no_such"], capture_output=True, text=True, timeout=60)
    assert unknown.returncode == 2
    assert "sticky_routing" in unknown.stderr
