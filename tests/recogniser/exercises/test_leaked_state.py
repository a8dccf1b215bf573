"""Leaked state: the reaper frees every slot, the model's own gauge shows it was never told, and
the model's eviction is what frees its state.

The judge's outcomes on hand-made gauges first, then one real run on the server."""
from __future__ import annotations

import json

import pandas as pd
import pytest

from app.cli import print_exercise
from app.exercise_kit import Finding
from app.i18n import languages, words
from app.lab.observation import LogCode, state_cells
from app.recogniser.exercises.leaked_state import engine as leaked_state
from app.registry import exercise_figures as charts
from app.registry import exercise_words as text
from tests.exercises.renderings import assert_translated

ABANDONED = leaked_state.WAVES * leaked_state.PER_WAVE
EVICTING = [(3, 0), (9, 0), (9, 6), (15, 6), (3, 24)]  # the evicting model's gauge: (cells, evicted so far)


def _tables(keep: list[int], evict=EVICTING, reaped: int | None = ABANDONED, refused=(0, 0), beyond=(0, 0)) -> dict:
    """Hand-made gauges, one sample a second: `keep` is the cells the non-evicting model held at each,
    `evict` the evicting model's (cells, evicted); half of each sample's cells on each of two instances.
    `reaped` is the reaper's force-ends in the log (None: no log), `refused` and `beyond` per deployment
    the chunks refused and the requests the model ran beyond the chunks answered."""
    samples = {"keep": [(cells, 0) for cells in keep], "evict": list(evict)}

    def share(n: int, instance: int) -> int:
        return n // 2 + (n % 2 if instance == 0 else 0)

    cells = pd.DataFrame([{"t": float(t), "instance": i, "cells": share(n, i), "evicted": share(e, i), "deployment": label}
                          for label, rows in samples.items() for t, (n, e) in enumerate(rows) for i in (0, 1)])
    marks = pd.DataFrame([{"t": 0.5, "label": leaked_state.wave_mark(1), "deployment": label} for label in samples])
    counts = pd.DataFrame([{"deployment": label, "abandoned": ABANDONED, "reaped_logged": reaped, "model_requests": 100 + beyond[i],
                            "answered": 100, "refused_chunks": refused[i]} for i, label in enumerate(samples)])
    return {"cells": cells, "marks": marks, "counts": counts}


def test_judge_leak_when_every_vanished_session_left_its_cell():
    judged = leaked_state.judge(_tables([3, 9, 15, 21, 27]))  # 3 cells left over from an earlier run, then one per session
    assert judged.outcome == "leak"
    n = judged.numbers
    assert (n["sessions_abandoned"], n["reaper_force_ends_logged"], n["cells_added_no_eviction"]) == (ABANDONED, ABANDONED, 24)
    assert (n["cells_left_no_eviction"], n["peak_cells_no_eviction"]) == (27, 27)
    assert (n["cells_left_with_eviction"], n["peak_cells_with_eviction"], n["cells_evicted_by_the_model"]) == (3, 15, 24)
    assert (n["refused_chunks"], n["model_requests_for_the_reaps"]) == (0, 0)
    assert judged.findings == [
        Finding("keep_cells", {"abandoned": ABANDONED, "added": 24, "start": 3, "left": 27, "slots": leaked_state.SETTINGS.slots}),
        Finding("reaped", {"reaped": ABANDONED}),
        Finding("evict_cells", {"evict": leaked_state.EVICT_S, "peak": 15, "evicted": 24, "left": 3}),
        Finding("refused", {"refused": 0}),
        Finding("model_requests", {"requests": 0}),
    ]
    assert judged.explanation[2] == Finding("why_cells", {"added": 24, "abandoned": ABANDONED, "slots": leaked_state.SETTINGS.slots})
    assert judged.explanation[3].values == {"evict": leaked_state.EVICT_S, "timeout": 0.5, "left": 3}
    tally = judged.tables["tally"].set_index("deployment")
    assert tally.loc["keep", ["cells_at_start", "peak_cells", "cells_left", "cells_added", "evicted"]].tolist() == [3, 27, 27, 24, 0]
    assert tally.loc["evict", ["cells_at_start", "cells_added", "evicted"]].tolist() == [3, 0, 24]


def test_judge_capped_when_no_more_cells_stayed_than_the_slots():
    judged = leaked_state.judge(_tables([0, 6, 12, 12, 12]))
    assert judged.outcome == "capped"
    assert judged.numbers["cells_added_no_eviction"] == leaked_state.SETTINGS.slots == 12


def test_judge_freed_when_the_cells_went_back_to_where_they_started():
    judged = leaked_state.judge(_tables([2, 8, 14, 2], reaped=None, refused=(3, 1), beyond=(6, 0)))
    assert judged.outcome == "freed"
    n = judged.numbers
    assert (n["cells_added_no_eviction"], n["peak_cells_no_eviction"], n["reaper_force_ends_logged"]) == (0, 14, None)
    assert (n["refused_chunks"], n["model_requests_for_the_reaps"]) == (4, 6)
    assert judged.findings[1] == Finding("log_unavailable")
    assert judged.findings[3:] == [Finding("refused", {"refused": 4}), Finding("model_requests", {"requests": 6})]
    assert judged.tables["tally"]["reaped_logged"].isna().all()


@pytest.fixture(scope="module")
def result(exercise_result):
    """One real run. Why what these tests pin is certain (measure() holds each deployment alone
    through its waves, run_queue.hold, on models of the exercise's own):
    - `leak`: every vanished session (unique IDs, corrid-keyed cells) adds one cell at its START and
      never sends END; Triton's reaper (0.5 s) never tells the model, and the `keep` model evicts only
      after 600 s, so exactly 24 cells stay, more than the 12 slots; the closing session's END drops its own.
    - no refusals: 6 sessions a wave on 12 slots (two waves fit even unreaped), 3 chunks 20 ms apart,
      far inside 0.5 s; each of the 24 is reaped (and logged at verbosity 1) well before the log
      closes, 1.2 s gaps and 1.6 s of settling against 0.5 s; oldest has no padding rows, so the
      model ran only the answered chunks.
    - eviction at 1 s: the next wave (1.2 s later) or the closing session (1.6 s) makes the model
      execute after the older cells are 1 s old, so the gauge never holds all 24 and ends at 0.
    - the gauge, sampled every 0.1 s, has read each wave's cells before the next wave's mark, 1.2 s on."""
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


def test_every_finding_is_translated_and_the_words_quote_the_constants(result):
    assert_translated("leaked_state", result.findings + result.explanation)
    scenario = text.module("leaked_state").SCENARIO
    assert f"max_sequence_idle_microseconds is {leaked_state.IDLE_TIMEOUT_US}" in scenario
    assert f"with {leaked_state.SETTINGS.slots} candidate slots" in scenario
    assert f"{leaked_state.WAVES} waves of {leaked_state.PER_WAVE} sessions, {leaked_state.GAP_S:g} s apart" in scenario
    assert f"each send {leaked_state.SENT} chunks" in scenario
    for lang in languages():
        _ = words(lang)
        assert [caption for caption, _fig in charts.figures(result, _)] == [_("The model's gauge"), _("Tally")]


def test_the_printed_result_quotes_the_reaper_and_its_json_holds_the_gauge(result, capsys, tmp_path):
    """What `batching-lab exercise leaked_state --json` prints and writes, through the function the
    command prints with, on the session's one run (tests/test_cli.py runs the command itself)."""
    out = tmp_path / "leaked.json"
    print_exercise(result, words("en"), out)
    assert "Reaper: force-ending CORRID" in capsys.readouterr().out  # the panel as text: the log line, verbatim
    data = json.loads(out.read_text())
    assert data["exercise"] == "leaked_state" and data["outcome"] == "leak"
    assert data["log"]["counts"]["reaper_force_end"] >= ABANDONED
    assert {r["deployment"] for r in data["tables"]["cells"]} == set(leaked_state.DEPLOYMENTS)


def hand_made_tables() -> dict:
    """This exercise's judge tables made by hand, for its figures and their summaries
    (tests/recogniser/exercises/test_exercise_chart_summaries.py)."""
    return _tables([3, 9, 15, 21, 27])
