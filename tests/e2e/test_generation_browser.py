"""The generation work in a real Chromium, on the session's Triton: the Generation lab runs a preset in both modes
and shows its results in English, then, through the language switch, in Chinese (axe-core on the results in both,
the English-left check in Chinese); in Chinese, a generation exercise runs on the Failure modes page, and lesson 8's
live element runs and the lesson, after the run, passes axe and the English-left check; the check page checks the
in-flight generator, a decoupled model, in English. No page may show a Streamlit exception."""
from __future__ import annotations

import re

import pytest
from playwright.sync_api import Page, expect

from app.checker.words import OUTCOME
from app.generation import live as gen_live
from app.generation import words as gw
from app.generation.exercises.state_by_row.engine import EXERCISE as STATE_BY_ROW
from app.i18n import N_, native_name, words
from app.registry import exercise_words as exercise_words
from app.ui import course
from tests.app_pages import main_pages
from tests.e2e import axe
from tests.e2e.browser_helpers import RUN_TIMEOUT_MS, new_page, run_small_check, settle
from tests.e2e.english_left import english_on

pytestmark = pytest.mark.browser

PRESET = "side_by_side"  # eight requests of 2 to 12 tokens, both modes: the preset that compares
# Both modes of the preset run with gen_inflight's shipped settings (4 rows, 4 candidates, one instance), so this
# exercise finds gen_inflight loaded and loads only gen_inflight_by_row: the quickest of the four after the lab.
EXERCISE = STATE_BY_ROW.name
CHECKED_MODEL = "gen_inflight"  # decoupled: the check sends streams, alone and staggered
EXCEPTION = '[data-testid="stException"]'
CJK = re.compile(r"[\u3400-\u9fff]")


def _no_exception(page: Page) -> None:
    expect(page.locator(EXCEPTION)).to_have_count(0)


def _own_violations(page: Page, name: str, lang: str) -> list[axe.Finding]:
    if not axe.AXE_JS.exists():
        pytest.fail(axe.missing_axe_message())
    own, _chrome = axe.split(axe.scan(page, name, lang, axe.chrome_entries()), axe.chrome_entries())
    return own


def _lab_results_show(page: Page, lang: str) -> None:
    """The last run's results as the page draws them in `lang`: the judgement, both tables, the four charts
    (a timeline per mode, latencies, step fill) under their captions, and no exception."""
    _ = words(lang)
    said = re.compile(re.escape(_("Static batching")) + "|" + re.escape(_("In-flight batching")) + "|"
                      + re.escape(_("About the same")))
    expect(page.locator('[data-testid="stAlert"]').filter(has_text=said)).to_have_count(1, timeout=RUN_TIMEOUT_MS)
    expect(page.locator('[data-testid="stDataFrame"]')).to_have_count(2, timeout=RUN_TIMEOUT_MS)  # numbers, requests
    expect(page.locator(".js-plotly-plot")).to_have_count(4, timeout=RUN_TIMEOUT_MS)
    for mode in ("static", "inflight"):
        caption = _.render(N_("Timeline: {mode:text}"), mode=_(gw.MODES[mode]))
        expect(page.get_by_text(caption, exact=True)).to_be_visible()
    expect(page.get_by_text(_("Step fill"), exact=True)).to_be_visible()
    numbers = page.locator('[data-testid="stDataFrame"]').first
    expect(numbers).to_contain_text(_(gw.MODES["static"]))
    expect(numbers).to_contain_text(_(gw.MODES["inflight"]))
    _no_exception(page)


def test_the_generation_lab_compares_in_english_then_reads_in_chinese(browser, app_url):
    en, zh = words("en"), words("zh")
    with new_page(browser, "en-US") as page:
        page.goto(f"{app_url}/generation?lang=en")
        expect(page.get_by_role("heading", name=en(gw.PAGE_TITLE))).to_be_visible(timeout=60_000)
        settle(page)
        _no_exception(page)
        page.get_by_role("button", name=en(gw.PRESETS[PRESET][0]), exact=True).click()
        settle(page)
        page.wait_for_url(re.compile("g_mode=compare"), timeout=RUN_TIMEOUT_MS)  # the preset's set-up is in the link
        prediction = en(gw.ANSWERS["compare"]["inflight"])
        page.get_by_text(prediction, exact=True).click()
        settle(page)
        expect(page.get_by_role("radio", name=prediction)).to_be_checked()
        run = page.get_by_role("button", name=en("Run on the server"), exact=True)
        expect(run).to_be_enabled()
        run.click()
        settle(page)
        _lab_results_show(page, "en")
        assert "g_requests=8" in page.url and "g_max_tokens=12" in page.url  # the preset's workload ran
        own = _own_violations(page, en(gw.PAGE_TITLE) + " (after a run)", "en")
        assert not own, "\n".join(f.line() for f in own)

        # The switch keeps the session: the same results, now drawn in Chinese, with the prediction kept.
        page.locator('[data-testid="stSidebar"] [data-testid="stSelectbox"]').first.click()
        page.get_by_role("option", name=native_name("zh")).click()
        settle(page)
        assert "lang=zh" in page.url and "/generation" in page.url
        expect(page.get_by_role("heading", name=zh(gw.PAGE_TITLE))).to_be_visible()
        expect(page.get_by_role("radio", name=zh(gw.ANSWERS["compare"]["inflight"]))).to_be_checked()
        _lab_results_show(page, "zh")
        own = _own_violations(page, zh(gw.PAGE_TITLE) + " (after a run)", "zh")
        assert not own, "\n".join(f.line() for f in own)
        left = english_on(page)
        assert not left, "\n".join(left[:20])


def test_a_generation_exercise_and_lesson_8_run_in_chinese(browser, app_url):
    zh = words("zh")
    with new_page(browser, "zh-CN") as page:
        page.goto(f"{app_url}/exercises?lang=zh")
        expect(page.get_by_role("heading", name=zh("Failure modes"))).to_be_visible(timeout=60_000)
        settle(page)
        title = exercise_words.title(EXERCISE, zh)
        page.locator('[data-testid="stMain"] [data-testid="stSelectbox"]').first.click()
        page.get_by_role("option", name=title, exact=True).click()
        settle(page)
        expect(page.get_by_role("heading", name=title)).to_be_visible()
        prediction = exercise_words.option(EXERCISE, STATE_BY_ROW.correct, zh)
        page.get_by_text(prediction, exact=True).click()
        settle(page)
        expect(page.get_by_role("radio", name=prediction)).to_be_checked()
        page.get_by_role("button", name=zh("Run on the server"), exact=True).click()
        settle(page)
        # State keyed by batch row crosses streams whenever requests share steps: the taught outcome, judged held.
        held = zh.render(N_("Your prediction held. The server did this: {seen:text}"), seen=prediction)
        expect(page.locator('[data-testid="stAlert"]').filter(has_text=held)).to_be_visible(timeout=RUN_TIMEOUT_MS)
        expect(page.get_by_text(zh("What happened"), exact=True)).to_be_visible()
        expect(page.locator(".js-plotly-plot").first).to_be_visible(timeout=RUN_TIMEOUT_MS)
        _no_exception(page)
        left = english_on(page)
        assert not left, "\n".join(left[:20])

        # Lesson 8, through the navigation (its link's place is app/main.py's order), and its live element run.
        page.locator('[data-testid="stSidebarNav"] a').nth(main_pages().index(course.lesson_url(8))).click()
        settle(page)
        expect(page.locator("h1").first).to_have_text(CJK)
        _no_exception(page)
        _run_lesson_8_live(page, zh)
        own = _own_violations(page, "lesson 8", "zh")
        assert not own, "\n".join(f.line() for f in own)
        left = english_on(page)
        assert not left, "\n".join(left[:20])


def _run_lesson_8_live(page: Page, zh) -> None:
    """Both predictions made, both runs on the server: a verdict per question in Chinese, the latency chart."""
    said = {"ttft": "inflight", "throughput": "static"}
    for question, answer in said.items():
        page.locator(f".st-key-gif-predict-{question}").get_by_text(zh(gen_live.ANSWERS[answer]), exact=True).click()
        settle(page)
    page.get_by_role("button", name=zh("Run both"), exact=True).click()
    settle(page)
    verdicts = page.locator('[data-testid="stAlert"]')
    for answer in said.values():  # held or not, each verdict names the prediction and what the server did
        sentences = [zh.render(form, said=zh(gen_live.ANSWERS[answer]), seen=zh(gen_live.ANSWERS[seen]))
                     for form in (gen_live.HELD, gen_live.NOT_HELD) for seen in gen_live.ANSWERS]
        expect(verdicts.filter(has_text=re.compile("|".join(map(re.escape, sentences))))).to_have_count(
            1, timeout=RUN_TIMEOUT_MS)
    expect(page.locator(".st-key-gif-latencies .js-plotly-plot")).to_be_visible(timeout=RUN_TIMEOUT_MS)
    _no_exception(page)


def test_the_check_page_checks_a_decoupled_generator(page: Page, app_url, lab_server):
    en = words("en")
    lab_server.models.ensure(CHECKED_MODEL)  # shipped, not preloaded: the page offers only a loaded model to check
    # Steps left empty: a stream's length is the model's to decide, and the page refuses Steps for it. The lab leaves
    # the generator's placement outputs (row, batch, execution, instance) out of the comparison; keyed by correlation
    # ID, its streams then come out alike alone and staggered: every check holds.
    run_small_check(page, app_url, CHECKED_MODEL, "en", steps=None)
    expect(page.get_by_text(en(OUTCOME[0]), exact=True)).to_be_visible(timeout=RUN_TIMEOUT_MS)
    expect(page.locator('[data-testid="stDataFrame"]').first).to_be_visible()
    # The timeline draws the response streams as heard (a decoupled check has no server trace), summary under it.
    expect(page.locator(".js-plotly-plot").first).to_be_visible(timeout=RUN_TIMEOUT_MS)
    expect(page.get_by_text("each sent alone twice and staggered once", exact=False)).to_be_visible()
    _no_exception(page)
