"""The whole app in Chinese in a real Chromium: a browser whose locale is zh-CN gets Chinese
without asking, every page opens without a Streamlit exception, no English prose is left
outside code, and no widget has an English label. Screenshots: artifacts/screenshots/zh/."""
from __future__ import annotations

import re

import pytest
from playwright.sync_api import Page, expect

from tests.app_pages import main_pages
from tests.e2e.browser_helpers import full_screenshot, new_context, settle
from tests.i18n.text_checks import english_label, english_runs, has_cjk

pytestmark = pytest.mark.browser

# Text nodes a learner reads in the sidebar and the page, code and hidden parts left out.
_VISIBLE_TEXT = """() => {
  const roots = [...document.querySelectorAll('[data-testid="stSidebar"], [data-testid="stMain"]')];
  const skip = 'pre, code, style, script, [data-testid="stCode"], .stCode, [data-testid="stExpanderDetails"] pre';
  const out = [];
  for (const root of roots) {
    const walker = document.createTreeWalker(root, NodeFilter.SHOW_TEXT);
    for (let node = walker.nextNode(); node; node = walker.nextNode()) {
      const el = node.parentElement;
      const text = node.textContent.trim();
      if (!text || !el || el.closest(skip) || el.offsetParent === null) continue;
      out.push(text);
    }
  }
  return out;
}"""
_LABELS = """() => [...document.querySelectorAll(
  '[data-testid="stWidgetLabel"], [data-testid="stSidebar"] [data-testid="stWidgetLabel"], button[kind] p, '
  + '[data-testid="stTab"] p, [data-testid="stExpander"] summary p')]
  .filter(e => e.offsetParent !== null && !e.closest('code, pre')).map(e => e.innerText.trim()).filter(Boolean)"""


@pytest.fixture()
def chinese_page(browser):
    context = new_context(browser, viewport={"width": 1400, "height": 1000}, locale="zh-CN")
    page = context.new_page()
    page.set_default_timeout(30_000)
    yield page
    context.close()


def _problems(page: Page) -> list[str]:
    found = [f"English text: {t[:90]!r}" for t in page.evaluate(_VISIBLE_TEXT) if english_runs(t)]
    found += [f"English label: {label!r}" for label in page.evaluate(_LABELS) if english_label(label)]
    return found


def test_every_page_in_chinese(chinese_page: Page, app_url, screenshots):
    page = chinese_page
    folder = screenshots / "zh"
    folder.mkdir(exist_ok=True)
    page.goto(app_url)  # no ?lang=: the browser's zh-CN locale decides
    settle(page)
    # The home page's h1 is the product's name, the same in every language; the navigation is not.
    expect(page.locator('[data-testid="stSidebarNav"] a').first).to_have_text(re.compile(r"[\u3400-\u9fff]"), timeout=60_000)
    links = page.locator('[data-testid="stSidebarNav"] a')
    titles = [links.nth(i).inner_text() for i in range(links.count())]
    assert len(titles) == len(main_pages()) and all(has_cjk(t) for t in titles), titles
    problems: dict[str, list[str]] = {}
    for index, title in enumerate(titles):
        links.nth(index).click()
        settle(page)
        expect(page.locator('[data-testid="stException"]')).to_have_count(0)
        full_screenshot(page, folder / f"{index:02d}.png")
        if found := _problems(page):
            problems[title] = found
    assert not problems, "\n".join(f"{t}: {p}" for t, found in problems.items() for p in found[:12])


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
