"""The "Check a deployment" page in a real Chromium, in English and in Chinese: open it on a shipped
model, run a small check, see the checks table and the figures. Screenshots: artifacts/screenshots/."""
from __future__ import annotations

import pytest
from playwright.sync_api import expect

from app.i18n import languages, words
from tests.e2e.browser_helpers import RUN_TIMEOUT_MS, full_screenshot, new_page, run_small_check

pytestmark = pytest.mark.browser

MODEL = "asr_dynamic"  # the shipped mistake: quick to check (dynamic batcher), and it breaks


@pytest.mark.parametrize("lang", languages())
def test_a_check_of_a_shipped_model_shows_its_table_and_figures(browser, app_url, screenshots, lang):
    _ = words(lang)
    with new_page(browser, lang) as page:
        run_small_check(page, app_url, MODEL, lang)
        expect(page.get_by_text(_("A check broke."), exact=True)).to_be_visible()
        expect(page.locator('[data-testid="stDataFrame"]').first).to_be_visible()
        expect(page.locator(".js-plotly-plot")).to_have_count(2, timeout=RUN_TIMEOUT_MS)  # the timeline and the error figure
        expect(page.get_by_text(_("Executions over time: one row per instance, coloured by session"))).to_be_visible()
        expect(page.locator('[data-testid="stException"]')).to_have_count(0)
        full_screenshot(page, screenshots / f"check-{MODEL}-{lang}.png")
