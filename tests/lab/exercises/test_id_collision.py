"""Correlation ID collision on the real server, run once, and the CLI that runs an exercise headless."""
from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from app.lab import evidence, exercises
from app.lab.exercises import id_collision


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
    assert result.numbers["collide_chunks_reading_other_session"] > 0


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
    assert data["schema"] == 1 and data["exercise"] == "id_collision"
    assert data["outcome"] == "merged" and data["as_taught"] is True
    assert {"same_id", "unique_ids"} == set(data["runs"])
    assert [s["verdict"] for s in data["runs"]["same_id"]["sessions"]] == ["foreign", "foreign"]
    assert [s["verdict"] for s in data["runs"]["unique_ids"]["sessions"]] == ["intact", "intact"]


def test_cli_lists_exercises_and_rejects_unknown_names():
    listing = subprocess.run([*_cli(), "exercise"], capture_output=True, text=True, timeout=60)
    assert listing.returncode == 0
    for name in exercises.EXERCISES:
        assert name in listing.stdout
    unknown = subprocess.run([*_cli(), "exercise", "no_such"], capture_output=True, text=True, timeout=60)
    assert unknown.returncode == 2
    assert "sticky_routing" in unknown.stderr
