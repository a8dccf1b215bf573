"""Leaked state on the real server, run once: the reaper frees every slot, the model's own gauge
shows it was never told, and the model's eviction is what frees its state."""
from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest

from app.charts import exercises as charts
from app.i18n import words
from app.lab.exercises import leaked_state
from app.lab.observation import state_cells
from app.lab.observation.server_log import LogCode
from app.text import exercises as text

ABANDONED = leaked_state.WAVES * leaked_state.PER_WAVE


@pytest.fixture(scope="module")
def result(exercise_result):
    return exercise_result("leaked_state")


def test_every_vanished_session_leaves_its_cell_although_the_reaper_ended_it(result):
    assert result.outcome == "leak"
    keep = result.tables["tally"].set_index("deployment").loc["keep"]
    assert keep["cells_added"] == ABANDONED  # one cell per vanished session, none given back
    assert keep["reaped_logged"] == ABANDONED  # Triton's reaper ended each of them (its own log lines)
    assert result.numbers["refused_chunks"] == 0  # so every wave found free slots: nobody was refused
    assert result.numbers["model_requests_for_the_reaps"] == 0  # Triton's statistics: the reaps sent the model nothing
    assert result.numbers["reaper_force_ends_logged"] == ABANDONED
    found = {f.code: f.values for f in result.findings}
    assert list(found) == ["keep_cells", "reaped", "evict_cells", "refused", "model_requests"]
    assert found["keep_cells"]["abandoned"] == found["keep_cells"]["added"] == ABANDONED
    assert found["keep_cells"]["left"] - found["keep_cells"]["start"] == ABANDONED
    assert found["reaped"] == {"reaped": ABANDONED}
    assert found["refused"] == {"refused": 0} and found["model_requests"] == {"requests": 0}
    why = {f.code: f.values for f in result.explanation}
    assert why["why_cells"] == {"added": ABANDONED, "abandoned": ABANDONED, "slots": leaked_state.SETTINGS.slots}
    assert why["why_eviction"]["left"] == 0


def test_the_reapers_lines_name_this_runs_sequences(result):
    corrids = {str(p.corrid) for label, run in result.runs.items() if label.startswith("keep_wave") for p in run.plans}
    reaped = {e.corrid for e in result.log.entries if e.code == LogCode.REAPER_FORCE_END
              and e.model == leaked_state.DEPLOYMENTS["keep"][0]}
    assert reaped == corrids


def test_the_models_own_eviction_frees_the_cells(result):
    evict = result.tables["tally"].set_index("deployment").loc["evict"]
    assert evict["cells_left"] == 0
    assert evict["evicted"] >= ABANDONED
    assert evict["peak_cells"] < ABANDONED  # older waves were evicted while later ones ran


def test_the_gauge_climbs_wave_by_wave_without_eviction(result):
    cells = result.tables["cells"]
    keep = state_cells.totals(cells[cells["deployment"] == "keep"])
    marks = result.tables["marks"].drop_duplicates("label").set_index("label")["t"]
    start = keep["cells"].iloc[0]
    # Just before each later wave, the cells of all earlier waves are still there.
    for wave in range(2, leaked_state.WAVES + 1):
        before = keep[keep["t"] < marks[leaked_state.wave_mark(wave)]]["cells"].iloc[-1]
        assert before - start == (wave - 1) * leaked_state.PER_WAVE


def test_every_finding_renders_in_both_languages_and_the_words_quote_the_constants(result):
    rendered = [text.finding("leaked_state", f, words(lang)) for f in result.findings + result.explanation
                for lang in ("en", "zh")]
    assert all(rendered)
    scenario = text.module("leaked_state").SCENARIO
    assert f"max_sequence_idle_microseconds is {leaked_state.IDLE_TIMEOUT_US}" in scenario
    assert f"with {leaked_state.SETTINGS.slots} candidate slots" in scenario
    assert f"{leaked_state.WAVES} waves of {leaked_state.PER_WAVE} sessions, {leaked_state.GAP_S:g} s apart" in scenario
    assert f"each send {leaked_state.SENT} chunks" in scenario
    for lang in ("en", "zh"):
        assert len(charts.figures(result, words(lang))) == 2


def test_cli_writes_the_gauge_and_the_log_as_json(server_env, tmp_path):
    out = tmp_path / "leaked.json"
    proc = subprocess.run([sys.executable, "-m", "app.cli", "exercise", "leaked_state", "--json", str(out)],
                          env=dict(os.environ), capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stderr
    assert "Reaper: force-ending CORRID" in proc.stdout  # the panel as text: the log line, verbatim
    data = json.loads(out.read_text())
    assert data["exercise"] == "leaked_state" and data["outcome"] == "leak"
    assert data["log"]["counts"]["reaper_force_end"] >= ABANDONED
    assert {r["deployment"] for r in data["tables"]["cells"]} == set(leaked_state.DEPLOYMENTS)
