"""What every browser test does to a Streamlit page: wait for a rerun to end, and take a
screenshot of the whole app (it scrolls inside its main block, not the window)."""
from __future__ import annotations

from playwright.sync_api import Page, expect

RUN_TIMEOUT_MS = 120_000


def settle(page: Page) -> None:
    # Streamlit shows a "running" status widget while the script reruns, and marks the app root
    # with the script's state (rerunRequested, running, notRunning): wait for both to be idle,
    # so a click is not made while the previous click's rerun has yet to start on a busy machine.
    page.wait_for_timeout(300)
    expect(page.locator('[data-testid="stApp"]')).to_have_attribute("data-test-script-state", "notRunning",
                                                                    timeout=RUN_TIMEOUT_MS)
    expect(page.locator('[data-testid="stStatusWidget"]')).to_have_count(0, timeout=RUN_TIMEOUT_MS)


def full_screenshot(page: Page, path) -> None:
    """Grow the viewport to the content first, then shoot the full page."""
    height = page.evaluate(
        "() => Math.max(...[...document.querySelectorAll('[data-testid=\"stMain\"], "
        "[data-testid=\"stAppViewContainer\"], body')].map(e => e.scrollHeight))"
    )
    size = page.viewport_size
    page.set_viewport_size({"width": size["width"], "height": min(int(height) + 50, 16000)})
    page.mouse.move(0, 0)  # no tooltip of the last clicked button over the content
    page.wait_for_timeout(800)  # plotly re-lays out to the new size
    page.screenshot(path=str(path), full_page=True)
    page.set_viewport_size(size)
