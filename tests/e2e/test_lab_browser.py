"""The live lab in a real browser: the mistake shows corruption, the fix keeps every session intact."""
from __future__ import annotations

import re

import pytest
from playwright.sync_api import Page, expect

pytestmark = pytest.mark.browser
RUN_TIMEOUT_MS = 120_000


def _settle(page: Page) -> None:
    # Streamlit shows a "running" status widget while the script reruns.
    page.wait_for_timeout(300)
    expect(page.locator('[data-testid="stStatusWidget"]')).to_have_count(0, timeout=RUN_TIMEOUT_MS)


def _full_screenshot(page: Page, path) -> None:
    """The app scrolls inside its main block, so grow the viewport to the content first."""
    height = page.evaluate(
        "() => Math.max(...[...document.querySelectorAll('[data-testid=\"stMain\"], [data-testid=\"stAppViewContainer\"], body')]"
        ".map(e => e.scrollHeight))"
    )
    size = page.viewport_size
    page.set_viewport_size({"width": size["width"], "height": min(int(height) + 50, 16000)})
    page.mouse.move(0, 0)  # no tooltip of the last clicked button over the content
    page.wait_for_timeout(800)  # plotly re-lays out to the new size
    page.screenshot(path=str(path), full_page=True)
    page.set_viewport_size(size)


def _open_lab(page: Page, url: str) -> None:
    page.goto(url)
    expect(page.get_by_role("heading", name="Triton Batching Lab")).to_be_visible(timeout=60_000)
    page.locator('[data-testid="stSidebarNav"] a', has_text="Live lab").click()
    expect(page.get_by_role("heading", name="Live lab")).to_be_visible()
    _settle(page)


def _run_preset(page: Page, preset: str, prediction: str) -> None:
    page.get_by_role("button", name=preset, exact=True).click()
    _settle(page)
    page.get_by_text(prediction, exact=True).click()
    _settle(page)
    run = page.get_by_role("button", name="Run", exact=True)
    expect(run).to_be_enabled()
    run.click()
    _settle(page)


def test_mistake_then_fix(page: Page, app_url, screenshots):
    _open_lab(page, app_url)
    expect(page.locator('[data-testid="stException"]')).to_have_count(0)

    _run_preset(page, "The mistake", "Corrupted: sessions read each other's state")
    board = page.locator(".st-key-transcript-board")
    expect(board).to_be_visible(timeout=RUN_TIMEOUT_MS)
    expect(board.get_by_text(re.compile(r"sessions corrupted"))).to_be_visible()
    expect(board.get_by_text("CORRUPTED", exact=False).first).to_be_visible()
    expect(page.locator(".js-plotly-plot").first).to_be_visible()
    assert "scheduler=dynamic" in page.url, "the set-up is in the address bar"
    expect(page.locator('[data-testid="stException"]')).to_have_count(0)
    _full_screenshot(page, screenshots / "lab-the-mistake.png")

    _run_preset(page, "The fix", "Intact: every session keeps its own state")
    expect(board.get_by_text(re.compile(r"All \d+ sessions intact"))).to_be_visible(timeout=RUN_TIMEOUT_MS)
    expect(board.get_by_text("CORRUPTED", exact=False)).to_have_count(0)
    assert "scheduler=direct" in page.url
    expect(page.locator('[data-testid="stException"]')).to_have_count(0)
    _full_screenshot(page, screenshots / "lab-the-fix.png")


def test_every_page_opens_in_the_browser(page: Page, app_url, screenshots):
    page.goto(app_url)
    expect(page.get_by_role("heading", name="Triton Batching Lab")).to_be_visible(timeout=60_000)
    _settle(page)
    links = page.locator('[data-testid="stSidebarNav"] a')
    titles = [links.nth(i).inner_text() for i in range(links.count())]
    assert any("Live lab" in t for t in titles) and len(titles) >= 9, titles
    for title in titles:
        links.nth(titles.index(title)).click()
        _settle(page)
        expect(page.locator('[data-testid="stException"]')).to_have_count(0)
    page.goto(app_url)
    _settle(page)
    _full_screenshot(page, screenshots / "home.png")
