"""Pages everyone can read: axe-core's WCAG 2.1 A and AA rules on every page of the navigation, in
every language, and on the live lab and the check page after a run (their results are most of what
a learner reads). Zero violations from the app's own elements; what Streamlit's own interface
commits is listed in axe_streamlit_chrome.yaml with its upstream issue, printed and written to
artifacts/axe/<lang>.txt, and not failed on. One browser session per language.

The same walk asks, in every language but the source one, that no English is left on any page
(tests/e2e/english_left.py) and, under --screenshots, photographs each page (artifacts/screenshots/<lang>/): one walk of
the pages per language serves both checks. Its check of a shipped model is also the check page's
own browser test, in every language: the verdict, the checks table and both figures show."""
from __future__ import annotations

import re

import pytest
from playwright.sync_api import Page, expect

from app.i18n import SOURCE_LANGUAGE, languages, words
from app.lab.paths import REPO_ROOT
from tests.app_pages import main_pages
from tests.e2e import axe
from tests.e2e.browser_helpers import RUN_TIMEOUT_MS, Photos, new_page, run_small_check, settle
from tests.e2e.english_left import english_on

pytestmark = pytest.mark.browser

REPORTS = REPO_ROOT / "artifacts" / "axe"
CHECKED_MODEL = "asr_dynamic"  # the shipped mistake: quick to check, and it breaks, so every result part shows


def _walk_navigation(page: Page, app_url: str, lang: str, chrome: list[axe.ChromeEntry], shots: Photos,
                     english: dict[str, list[str]]) -> list[axe.Finding]:
    """Every page of the navigation opens without an exception (in every language, so this is also
    the walk that proves the pages open), and axe scans it; the home page is photographed (Photos: only
    under --screenshots). In a translated language every page is photographed too, and what English it still shows goes into
    `english`, by page title."""
    page.goto(f"{app_url}/?lang={lang}")
    expect(page.get_by_role("heading", name="Triton Batching Lab")).to_be_visible(timeout=60_000)
    settle(page)
    shots.whole(page, f"home-{lang}.png")
    translated = lang != SOURCE_LANGUAGE
    links = page.locator('[data-testid="stSidebarNav"] a')
    expect(links).to_have_count(len(main_pages()), timeout=60_000)
    titles = [links.nth(i).inner_text().splitlines()[-1] for i in range(links.count())]  # the title, not its icon's name
    found: list[axe.Finding] = []
    for index, title in enumerate(titles):
        links.nth(index).click()
        settle(page)
        expect(page.locator('[data-testid="stException"]')).to_have_count(0)
        found += axe.scan(page, title, lang, chrome)
        if translated:
            (shots / lang).whole(page, f"{index:02d}.png")
            if left := english_on(page):
                english[title] = left
    return found


def _lab_after_a_run(page: Page, app_url: str, lang: str, chrome: list[axe.ChromeEntry]) -> list[axe.Finding]:
    _ = words(lang)
    page.goto(f"{app_url}/lab?lang={lang}")
    expect(page.get_by_role("heading", name=_("Live lab"))).to_be_visible(timeout=60_000)
    settle(page)
    page.get_by_role("button", name=_("The mistake"), exact=True).click()
    settle(page)
    page.wait_for_url(re.compile("scheduler=dynamic"), timeout=RUN_TIMEOUT_MS)
    prediction = _("Corrupted: sessions read each other's state")
    page.get_by_text(prediction, exact=True).click()
    settle(page)
    expect(page.get_by_role("radio", name=prediction)).to_be_checked()
    page.get_by_role("button", name=_("Run"), exact=True).click()
    settle(page)
    expect(page.locator(".st-key-transcript-board")).to_be_visible(timeout=RUN_TIMEOUT_MS)
    expect(page.locator(".js-plotly-plot").first).to_be_visible(timeout=RUN_TIMEOUT_MS)
    return axe.scan(page, _("Live lab") + " (after a run)", lang, chrome)


def _check_after_a_run(page: Page, app_url: str, lang: str, chrome: list[axe.ChromeEntry], shots: Photos) -> list[axe.Finding]:
    """The check page on a shipped model, a small check run: its verdict, the checks table and both
    figures show (the timeline and the error figure), with no exception; photographed, then scanned."""
    _ = words(lang)
    run_small_check(page, app_url, CHECKED_MODEL, lang)
    expect(page.get_by_text(_("A check broke."), exact=True)).to_be_visible()
    expect(page.locator('[data-testid="stDataFrame"]').first).to_be_visible()
    expect(page.locator(".js-plotly-plot")).to_have_count(2, timeout=RUN_TIMEOUT_MS)
    expect(page.get_by_text(_("Executions over time: one row per instance, coloured by session"))).to_be_visible()
    expect(page.locator('[data-testid="stException"]')).to_have_count(0)
    shots.whole(page, f"check-{CHECKED_MODEL}-{lang}.png")
    return axe.scan(page, _("Check a deployment") + " (after a run)", lang, chrome)


def _report(lang: str, own: list[axe.Finding], chrome: list[tuple[axe.Finding, axe.ChromeEntry]]) -> str:
    lines = [f"axe-core WCAG 2.1 A/AA, language {lang}: {len(own)} from the app, {len(chrome)} from Streamlit's chrome"]
    lines += ["", "The app's own (each fails the test):"] + [f.line() for f in own]
    lines += ["", "Streamlit's chrome (axe_streamlit_chrome.yaml; not failed on):"]
    for entry in dict.fromkeys(e for _, e in chrome):  # one line per entry, in the order first met
        pages = list(dict.fromkeys(f.page for f, e in chrome if e == entry))
        count = sum(e == entry for _, e in chrome)
        lines.append(f"{entry.rule} inside {entry.selector}: {count} elements on {len(pages)} pages ({', '.join(pages)})\n"
                     f"    {entry.why}\n    upstream: {entry.issue or 'no issue found'}")
    return "\n".join(lines)


@pytest.mark.parametrize("lang", languages())
def test_every_page_passes_axe_in_every_language(browser, app_url, lang, screenshots):
    if not axe.AXE_JS.exists():
        pytest.fail(axe.missing_axe_message())
    chrome = axe.chrome_entries()
    english: dict[str, list[str]] = {}
    with new_page(browser, lang) as page:
        found = _walk_navigation(page, app_url, lang, chrome, screenshots, english)
        found += _lab_after_a_run(page, app_url, lang, chrome)
        found += _check_after_a_run(page, app_url, lang, chrome, screenshots)
    own, streamlits = axe.split(found, chrome)
    report = _report(lang, own, streamlits)
    REPORTS.mkdir(parents=True, exist_ok=True)
    (REPORTS / f"{lang}.txt").write_text(report + "\n", encoding="utf-8")
    print(report)
    assert not own, report
    assert not english, "\n".join(f"{t}: {p}" for t, left in english.items() for p in left[:12])
