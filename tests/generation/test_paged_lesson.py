"""Lesson 9's live element, its pure parts: the prediction bands and the reading of a hand-made trace
(app/generation/paged/lesson/engine.py). Its run on the real engine is tests/views/test_lesson_live.py's."""
from __future__ import annotations

import pandas as pd
import pytest

from app.generation.engine import PlannedRequest
from app.generation.paged.engine import MODEL, deployment_for
from app.generation.paged.lesson import engine


@pytest.mark.parametrize(("peak", "band"), [(8, "all"), (9, "all"), (7, "some"), (3, "some"), (2, "few"), (1, "few")])
def test_the_peak_of_running_requests_falls_in_one_band(peak, band):
    assert engine.band(peak, requests=8) == band


def test_the_shipped_engine_is_the_first_choice_and_the_others_differ_only_in_blocks_and_sharing():
    assert deployment_for(engine.settings(engine.BLOCK_CHOICES[0], True))[0] == MODEL
    for blocks in engine.BLOCK_CHOICES:
        for sharing in (True, False):
            chosen = engine.settings(blocks, sharing)
            assert (chosen.num_blocks, chosen.prefix_sharing) == (blocks, sharing)
            assert chosen.block_size == engine.BLOCK_SIZE


def _token(step: int, index: int, running: int, waiting: int, free: int, t: float) -> dict:
    return {"index": index, "tag": 100 + index, "token": 7, "position": step, "step": step, "step_tags": [100 + index],
            "step_tokens": 1, "blocks": [index], "shared_blocks": [], "prefix_blocks": 0, "free_blocks": free,
            "cached_blocks": 0, "waiting": waiting, "running": running, "t_send": 0.0, "t_recv": t, "empty": False,
            "error": ""}


def test_a_run_is_read_off_the_engines_own_report():
    """Two requests on 8 blocks: the second waits while the first runs, then both run. Blocks in use are
    the cache's size less the free blocks the engine reported at each step."""
    trace = pd.DataFrame([
        _token(1, 0, running=1, waiting=1, free=5, t=0.01),
        _token(2, 0, running=2, waiting=0, free=2, t=0.02),
        _token(2, 1, running=2, waiting=0, free=2, t=0.02),
        _token(3, 1, running=1, waiting=0, free=4, t=0.03),
    ])
    plans = [PlannedRequest(index=i, tag=100 + i, arrival_s=0.0, prompt=[1, 2, 3], max_tokens=2) for i in (0, 1)]
    done = engine.read(8, False, trace, plans)
    assert list(done.steps["used_blocks"]) == [3, 6, 4]
    assert (done.figures.peak_running, done.figures.peak_waiting) == (2, 1)
    assert done.figures.requests == 2 and done.seen == "all"  # both ran at once at the peak
    assert list(done.requests["first_step"]) == [1, 2]
