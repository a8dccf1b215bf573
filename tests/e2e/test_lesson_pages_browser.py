"""The lesson pages in a real Chromium: each lesson's address (/lesson_01, /lesson_02, ...) opens that
lesson, in every language, and a lesson's link onward leads to the next lesson's address. The lesson
pages have no file of their own (app/main.py makes them from lessons/), so their addresses are
checked here, where a browser asks for them."""
from __future__ import annotations

import re

import pytest
from playwright.sync_api import Page, expect

from app.content.lessons import load_translated
from app.i18n import languages, words
from tests.e2e.browser_helpers import new_page, settle

pytestmark = pytest.mark.browser


@pytest.fixture()
def page(browser):
    with new_page(browser, "en-US") as page:
        yield page


@pytest.mark.parametrize("lang", languages())
def test_each_lesson_address_opens_that_lesson(page: Page, app_url, lang):
    lessons = load_translated(lang).lessons
    for number, lesson in enumerate(lessons, start=1):
        page.goto(f"{app_url}/lesson_{number:02d}?lang={lang}")
        settle(page)
        expect(page.locator("h1").first).to_have_text(lesson.title, timeout=60_000)
        expect(page.locator('[data-testid="stException"]')).to_have_count(0)
        assert re.search(rf"/lesson_{number:02d}\?", page.url), page.url  # the address stays, no fallback to home


def test_a_lesson_link_onward_leads_to_the_next_lesson_address(page: Page, app_url):
    lessons = load_translated("en").lessons
    first, second = lessons[0], lessons[1]
    assert list(first.next) == [second.id], "lesson 1 leads on to lesson 2"
    page.goto(f"{app_url}/lesson_01")
    settle(page)
    page.get_by_role("link", name=words("en").render("Next: {title:text}", title=second.title)).click()
    settle(page)
    expect(page.locator("h1").first).to_have_text(second.title, timeout=60_000)
    assert re.search(r"/lesson_02(\?|$)", page.url), page.url
