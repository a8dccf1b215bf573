"""The app in Chinese in a real Chromium: a browser whose locale is zh-CN gets Chinese without
asking, and the switch turns it English and keeps it so. That every page opens in Chinese with no
English prose or English label left (with --screenshots, photographs in artifacts/screenshots/zh/) is asked on the
accessibility walk (test_accessibility_browser.py), which opens every page in every language."""
from __future__ import annotations

import re

import pytest
from playwright.sync_api import Page, expect

from tests.app_pages import main_pages
from tests.e2e.browser_helpers import new_page, settle
from tests.i18n.text_checks import has_cjk

pytestmark = pytest.mark.browser


@pytest.fixture()
def chinese_page(browser):
    with new_page(browser, "zh-CN") as page:
        yield page


def test_a_chinese_browser_gets_chinese_without_asking(chinese_page: Page, app_url):
    page = chinese_page
    page.goto(app_url)  # no ?lang=: the browser's zh-CN locale decides
    settle(page)
    # The home page's h1 is the product's name, the same in every language; the navigation is not.
    expect(page.locator('[data-testid="stSidebarNav"] a').first).to_have_text(re.compile(r"[\u3400-\u9fff]"), timeout=60_000)
    links = page.locator('[data-testid="stSidebarNav"] a')
    titles = [links.nth(i).inner_text() for i in range(links.count())]
    assert len(titles) == len(main_pages()) and all(has_cjk(t) for t in titles), titles
    expect(page.locator('[data-testid="stException"]')).to_have_count(0)


def test_the_switch_turns_the_page_english_and_keeps_it(chinese_page: Page, app_url):
    page = chinese_page
    page.goto(f"{app_url}/quiz?lang=zh")
    settle(page)
    expect(page.locator("h1").first).to_have_text(re.compile(r"[\u3400-\u9fff]"), timeout=60_000)
    page.locator('[data-testid="stSidebar"] [data-testid="stSelectbox"]').first.click()
    page.get_by_role("option", name="English").click()
    settle(page)
    assert "lang=en" in page.url and "/quiz" in page.url
    expect(page.locator("h1").first).not_to_have_text(re.compile(r"[\u3400-\u9fff]"))
