"""The live lab in a real browser: the mistake shows corruption, the fix keeps every session intact."""
from __future__ import annotations

import re

import pytest
from playwright.sync_api import Page, expect

from tests.e2e.browser_helpers import RUN_TIMEOUT_MS, Photos, settle

pytestmark = pytest.mark.browser


def _open_lab(page: Page, url: str) -> None:
    page.goto(url)
    expect(page.get_by_role("heading", name="Triton Batching Lab")).to_be_visible(timeout=60_000)
    page.locator('[data-testid="stSidebarNav"] a', has_text="Live lab").click()
    expect(page.get_by_role("heading", name="Live lab")).to_be_visible()
    settle(page)

def _run_preset(page: Page, preset: str, prediction: str, scheduler: str) -> None:
    page.get_by_role("button", name=preset, exact=True).click()
    settle(page)
    # The preset is loaded (and the prediction reset) once its set-up is in the address bar.
    page.wait_for_url(re.compile(f"scheduler={scheduler}"), timeout=RUN_TIMEOUT_MS)
    page.get_by_text(prediction, exact=True).click()
    settle(page)
    expect(page.get_by_role("radio", name=prediction)).to_be_checked()
    run = page.get_by_role("button", name="Run", exact=True)
    expect(run).to_be_enabled()
    run.click()
    settle(page)

def _readme_picture(page: Page, photos: Photos) -> None:
    """README's screenshot (docs/lab-after-a-run.png is this file, committed): one screen of the
    results of a run of the mistake, from their heading down: the timeline and the board."""
    page.get_by_role("heading", name="Results of the last run").evaluate("e => e.scrollIntoView({block: 'start'})")
    photos.screen(page, "readme-lab-after-a-run.png")


def test_mistake_then_fix(page: Page, app_url, screenshots):
    _open_lab(page, app_url)
    expect(page.locator('[data-testid="stException"]')).to_have_count(0)

    _run_preset(page, "The mistake", "Corrupted: sessions read each other's state", "dynamic")
    board = page.locator(".st-key-transcript-board")
    expect(board).to_be_visible(timeout=RUN_TIMEOUT_MS)
    expect(board.get_by_text(re.compile(r"sessions corrupted"))).to_be_visible()
    expect(board.get_by_text("CORRUPTED", exact=False).first).to_be_visible()
    expect(page.locator(".js-plotly-plot").first).to_be_visible()
    assert "scheduler=dynamic" in page.url, "the set-up is in the address bar"
    expect(page.locator('[data-testid="stException"]')).to_have_count(0)
    screenshots.whole(page, "lab-the-mistake.png")
    _readme_picture(page, screenshots)

    _run_preset(page, "The fix", "Intact: every session keeps its own state", "direct")
    expect(board.get_by_text(re.compile(r"All \d+ sessions intact"))).to_be_visible(timeout=RUN_TIMEOUT_MS)
    expect(board.get_by_text("CORRUPTED", exact=False)).to_have_count(0)
    assert "scheduler=direct" in page.url
    expect(page.locator('[data-testid="stException"]')).to_have_count(0)
    screenshots.whole(page, "lab-the-fix.png")
