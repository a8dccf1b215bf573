"""A class in real browsers: four learners (separate browser contexts, so separate Streamlit
sessions and learner ids) load the fix, each with their own seed, and press Run together.

All four set-ups have the fix's deployment settings, so they share one model on the server
(asr_sequence_direct) and their runs take turns on it. Each learner must see a result of their
own: every session intact, eight sessions and their requests only, and on the board exactly
the utterances of their own seed, none of another learner's.
"""
from __future__ import annotations

import re

import pytest
from playwright.sync_api import Page, expect

from app.lab.scenario.scenario import random_texts
from app.recogniser.engine.presets import PRESETS
from tests.e2e.browser_helpers import RUN_TIMEOUT_MS, new_context, settle

pytestmark = pytest.mark.browser

LEARNERS = 4
PREDICTION = "Intact: every session keeps its own state"
FIX = PRESETS["the_fix"].traffic

# The expected row of each session on the board: the label cell, then one cell per letter.
EXPECTED_ROWS = """board => [...board.querySelectorAll('div')]
  .filter(row => row.firstElementChild && row.firstElementChild.textContent === 'expected')
  .map(row => [...row.children].slice(1).map(cell => cell.textContent).join('').replace(/\\u00a0/g, ' ').trim())"""


def _seed(i: int) -> int:
    return 100 + i


def _prepare(page: Page, url: str, seed: int) -> None:
    """Open the lab, load the fix, give it this learner's seed and predict; Run is not pressed."""
    page.goto(f"{url}/lab")
    fill_in_the_fix(page, seed)


def fill_in_the_fix(page: Page, seed: int, think_ms: float | None = None) -> None:
    """On an open lab page: load the fix, give it this learner's seed (and think time) and
    predict, for a learner on one app or on any replica of several; Run is not pressed."""
    expect(page.get_by_role("heading", name="Live lab")).to_be_visible(timeout=60_000)
    settle(page)
    page.get_by_role("button", name="The fix", exact=True).click()
    settle(page)
    page.wait_for_url(re.compile("scheduler=direct"), timeout=RUN_TIMEOUT_MS)
    boxes = {"Seed": seed} if think_ms is None else {"Seed": seed, "Think time (ms)": think_ms}
    for name, value in boxes.items():
        box = page.get_by_role("spinbutton", name=name)
        box.fill(str(value))
        box.press("Enter")
        settle(page)
    page.wait_for_url(re.compile(f"seed={seed}(&|$)"), timeout=RUN_TIMEOUT_MS)
    page.get_by_text(PREDICTION, exact=True).click()
    settle(page)
    expect(page.get_by_role("radio", name=PREDICTION)).to_be_checked()
    expect(page.get_by_role("button", name="Run", exact=True)).to_be_enabled()


def test_four_learners_press_run_together_and_each_sees_only_their_own_run(browser, app_url, screenshots):
    contexts = [new_context(browser, viewport={"width": 1400, "height": 1000}, locale="en-US") for _ in range(LEARNERS)]
    try:
        pages = [context.new_page() for context in contexts]
        for i, page in enumerate(pages):
            page.set_default_timeout(30_000)
            _prepare(page, app_url, _seed(i))

        for page in pages:  # as close to together as one driver gets: no waiting between the clicks
            page.get_by_role("button", name="Run", exact=True).click()

        # As the board shows them: upper case, without the spaces that pad an utterance's end.
        own = {i: [t.upper().strip() for t in random_texts(FIX.sessions, FIX.chunks, _seed(i))] for i in range(LEARNERS)}
        assert len({tuple(t) for t in own.values()}) == LEARNERS, "the seeds give each learner other words"
        requests = FIX.sessions * FIX.chunks
        for i, page in enumerate(pages):
            settle(page)
            board = page.locator(".st-key-transcript-board")
            expect(board).to_be_visible(timeout=RUN_TIMEOUT_MS)
            expect(page.locator('[data-testid="stException"]')).to_have_count(0)
            expect(board.get_by_text(f"All {FIX.sessions} sessions intact", exact=False)).to_be_visible()
            expect(board.get_by_text("CORRUPTED", exact=False)).to_have_count(0)
            # Its own run only: eight sessions and their requests, on the fix's shared deployment.
            expect(page.get_by_text(f"{FIX.sessions} sessions, {requests} requests on asr_sequence_direct",
                                    exact=False)).to_be_visible()
            shown = board.evaluate(EXPECTED_ROWS)
            assert sorted(shown) == sorted(own[i]), f"learner {i} sees other words than its own: {shown}"
            others = {t for j, texts in own.items() if j != i for t in texts} - set(own[i])
            assert not others & set(shown), f"learner {i}'s board shows another learner's sessions"
            expect(page.get_by_text(re.compile("Your prediction could not be saved"))).to_have_count(0)
            screenshots.whole(page, f"classroom-learner-{i + 1}.png")
    finally:
        for context in contexts:
            context.close()
