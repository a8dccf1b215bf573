"""The pseudo-locale (tests/i18n/pseudo.py) in a real Chromium: an app started with only a language
pack more (TRITON_LAB_LOCALES) shows every page of its navigation in it, with no Streamlit exception
and no English word of the English sources left in what a learner reads (text, labels, the tab's
title, chart text); the lab is run once. A failure names the word, the text and the page.
With --screenshots, photographs in artifacts/screenshots/qps/."""
from __future__ import annotations

import re

import pytest
from playwright.sync_api import Page, expect

from app.i18n import LOCALES_ENV
from tests.app_pages import main_pages
from tests.e2e.browser_helpers import new_page, settle, visible_texts
from tests.e2e.conftest import running_app
from tests.i18n.pseudo import LANG, build_pack, english_left, pseudo

pytestmark = pytest.mark.browser

# What a learner can see in the sidebar and the page (widget labels and chart text included), code
# left out, and the tab's title. Streamlit's and plotly's own controls name themselves in English in
# aria-label attributes ("Copy to clipboard", "Zoom in"): their chrome, not the app's words. An icon's
# name is a ligature the icon font draws, not a word anyone reads; a file uploader's drop zone
# ("Upload", "200MB per file") is Streamlit's own words, written into its front end.
_SKIP = ('pre, code, style, script, [data-testid="stCode"], .stCode, [data-testid="stIconMaterial"], '
         '[data-testid="stFileUploaderDropzone"]')


@pytest.fixture(scope="module")
def pseudo_url(lab_server, tmp_path_factory):
    root = build_pack(tmp_path_factory.mktemp("locales"))
    with running_app(lab_server, tmp_path_factory.mktemp("streamlit-qps") / "streamlit.log", **{LOCALES_ENV: str(root)}) as url:
        yield url


@pytest.fixture()
def pseudo_page(browser):
    with new_page(browser, "en-US") as page:
        yield page


def english_on(page: Page, where: str) -> list[str]:
    shown = [*visible_texts(page, _SKIP), page.title()]
    return [f"{where}: {left} in {text[:100]!r}" for text in shown if (left := english_left(text))]


def test_every_page_in_the_pseudo_locale(pseudo_page: Page, pseudo_url, screenshots):
    page = pseudo_page
    folder = screenshots / LANG
    page.goto(f"{pseudo_url}/?lang={LANG}")
    settle(page)
    links = page.locator('[data-testid="stSidebarNav"] a')
    expect(links.first).to_have_text(re.compile(r"\[.* ~+\]"), timeout=60_000)  # the navigation is in the pack's words
    assert links.count() == len(main_pages())
    found: list[str] = []
    for index in range(links.count()):
        title = links.nth(index).locator("span").last.inner_text()
        links.nth(index).click()
        settle(page)
        expect(page.locator('[data-testid="stException"]')).to_have_count(0)
        folder.whole(page, f"{index:02d}.png")
        found += english_on(page, f"page {index} {title!r} ({page.url.removeprefix(pseudo_url)})")
    assert not found, f"{len(found)} texts with English left:\n" + "\n".join(found[:60])


def test_a_lab_run_in_the_pseudo_locale(pseudo_page: Page, pseudo_url):
    page = pseudo_page
    page.goto(f"{pseudo_url}/?lang={LANG}")
    settle(page)
    page.locator('[data-testid="stSidebarNav"] a').nth(main_pages().index("views/lab.py")).click()
    settle(page)
    # The learner's way through the page, by the words the pack shows.
    page.get_by_role("button", name=pseudo("The mistake"), exact=True).click()
    settle(page)
    page.get_by_text(pseudo("Corrupted: sessions read each other's state"), exact=True).click()
    settle(page)
    page.get_by_role("button", name=pseudo("Run"), exact=True).click()
    settle(page)
    expect(page.locator(".st-key-transcript-board")).to_be_visible(timeout=120_000)
    expect(page.locator('[data-testid="stException"]')).to_have_count(0)
    expect(page.locator(".js-plotly-plot").first).to_be_visible(timeout=120_000)
    found = english_on(page, "lab after a run")
    assert not found, f"{len(found)} texts with English left:\n" + "\n".join(found[:60])
