"""Correlation ID collision on the real server, and the CLI that runs an exercise headless."""
from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from app.lab import exercises


def _merged(result) -> bool:
    return result.outcome == "merged" and result.numbers["fixed_intact"]


@pytest.fixture(scope="module")
def result(exercise_run):
    return exercise_run("id_collision", ok=_merged)


def test_same_id_merges_the_sessions_and_corrupts_both(result):
    assert result.outcome == "merged"
    collide = result.runs["same_id"].sessions.set_index("session")
    assert list(collide["verdict"]) == ["foreign", "foreign"]
    # Each names the other session as the one whose state it read.
    assert collide.loc[0, "read_state_of"] == 1 and collide.loc[1, "read_state_of"] == 0
    assert result.numbers["collide_chunks_reading_other_session"] > 0


def test_first_end_ends_the_sequence_for_both(result):
    assert result.numbers["collide_refused_chunks"] >= 1
    assert result.numbers["refused_after_other_end"]


def test_unique_ids_fix_it(result):
    assert result.numbers["fixed_intact"]
    fixed = result.runs["unique_ids"].sessions
    assert fixed["corrid"].nunique() == 2


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
    assert data["outcome"] in {o.key for o in exercises.get("id_collision").options}
    assert {"same_id", "unique_ids"} == set(data["runs"])
    assert data["runs"]["same_id"]["sessions"][0]["verdict"] in {"foreign", "error", "lost"}


def test_cli_lists_exercises_and_rejects_unknown_names():
    listing = subprocess.run([*_cli(), "exercise"], capture_output=True, text=True, timeout=60)
    assert listing.returncode == 0
    for name in exercises.EXERCISES:
        assert name in listing.stdout
    unknown = subprocess.run([*_cli(), "exercise", "no_such"], capture_output=True, text=True, timeout=60)
    assert unknown.returncode == 2
    assert "sticky_routing" in unknown.stderr
