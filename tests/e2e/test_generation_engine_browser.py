"""The Generation lab's engine mode in a real Chromium, on the session's Triton: a link opens the engine mode in
English, a prediction and a run draw its figures, and the language switch draws the same results in Chinese. No
page may show a Streamlit exception."""
from __future__ import annotations

from urllib.parse import urlencode

import pytest
from playwright.sync_api import Page, expect

from app.generation import words as gw
from app.generation.paged import words as pw
from app.generation.paged.engine import PagedWorkload
from app.generation.paged.setup import LAB_KEY, PagedSetup
from app.i18n import N_, native_name, words
from tests.e2e.browser_helpers import RUN_TIMEOUT_MS, new_page, settle

pytestmark = pytest.mark.browser

EXCEPTION = '[data-testid="stException"]'
# One setting (the shipped kv_engine's), three requests: the smallest run that draws every figure.
SETUP = PagedSetup(compare=False, workload=PagedWorkload(requests=3, mean_gap_ms=10.0))


def _no_exception(page: Page) -> None:
    expect(page.locator(EXCEPTION)).to_have_count(0)


def _results_show(page: Page, lang: str) -> None:
    """The run's verdict, the numbers and requests tables, and three charts (the block table, the queue, the
    latencies) under their captions, in `lang`."""
    _ = words(lang)
    verdicts = [_.render(N_("Your prediction held. The server did this: {seen:text}"), seen=_(a))
                for a in pw.ANSWERS["single"].values()]
    verdicts += [_.render(N_("Your prediction did not hold. The server did this: {seen:text}"), seen=_(a))
                 for a in pw.ANSWERS["single"].values()]
    alerts = page.locator('[data-testid="stAlert"]')
    expect(alerts.filter(has_text=verdicts[0]).or_(alerts.filter(has_text=verdicts[1])).or_(
        alerts.filter(has_text=verdicts[2])).or_(alerts.filter(has_text=verdicts[3]))).to_have_count(1, timeout=RUN_TIMEOUT_MS)
    expect(page.locator('[data-testid="stDataFrame"]')).to_have_count(2, timeout=RUN_TIMEOUT_MS)
    expect(page.locator(".js-plotly-plot")).to_have_count(3, timeout=RUN_TIMEOUT_MS)
    expect(page.get_by_text(_.render(pw.CAPTIONS["blocks"], side=_(pw.SIDES["a"])), exact=True)).to_be_visible()
    expect(page.get_by_text(_(pw.CAPTIONS["queue"]), exact=True)).to_be_visible()
    _no_exception(page)


def test_the_engine_mode_runs_in_english_and_reads_in_chinese(browser, app_url):
    en, zh = words("en"), words("zh")
    query = urlencode({"lang": "en", LAB_KEY: "engine", **SETUP.to_query()})
    with new_page(browser, "en-US") as page:
        page.goto(f"{app_url}/generation?{query}")
        expect(page.get_by_role("heading", name=en(gw.PAGE_TITLE))).to_be_visible(timeout=60_000)
        settle(page)
        _no_exception(page)
        expect(page.get_by_text(en(pw.ENGINE_INTRO))).to_be_visible()
        prediction = en(pw.ANSWERS["single"]["no"])
        page.get_by_text(prediction, exact=True).click()
        settle(page)
        expect(page.get_by_role("radio", name=prediction)).to_be_checked()
        run = page.get_by_role("button", name=en("Run on the server"), exact=True)
        expect(run).to_be_enabled()
        run.click()
        settle(page)
        _results_show(page, "en")
        assert f"{LAB_KEY}=engine" in page.url and "k_requests=3" in page.url

        page.locator('[data-testid="stSidebar"] [data-testid="stSelectbox"]').first.click()
        page.get_by_role("option", name=native_name("zh")).click()
        settle(page)
        assert "lang=zh" in page.url and f"{LAB_KEY}=engine" in page.url
        expect(page.get_by_role("heading", name=zh(gw.PAGE_TITLE))).to_be_visible()
        expect(page.get_by_text(zh(pw.ENGINE_INTRO))).to_be_visible()
        expect(page.get_by_role("radio", name=zh(pw.ANSWERS["single"]["no"]))).to_be_checked()
        _results_show(page, "zh")
