"""Presenter mode in real browsers: a learner votes through the join link while the presenter's
histogram follows, the presenter runs both set-ups side by side, plays the replay and reveals."""
from __future__ import annotations

import re

import pytest
from playwright.sync_api import Page, expect

from app.i18n import words
from app.quiz import votes
from app.recogniser.words import prediction as prediction_words
from tests.e2e.browser_helpers import RUN_TIMEOUT_MS, new_context, new_page, settle

pytestmark = pytest.mark.browser

FOREIGN = words("en")(prediction_words.CHOICES["foreign"])  # the option the learner votes for
LIVE_MS = 20_000  # the histogram re-reads the votes every 2 s


def _next(page: Page) -> None:
    page.get_by_role("button", name="Next step").click()
    settle(page)


def _replay_frame(page: Page) -> int:
    """The replay's slider position (its current frame), read from the plotly figure."""
    return page.evaluate("() => { const plots = [...document.querySelectorAll('.js-plotly-plot')];"
                         " const gd = plots[plots.length - 1]; return gd._fullLayout.sliders[0].active; }")


def _frame_ms(page: Page, label: str) -> int:
    """How long one frame stays on screen for the first replay button whose label holds `label`."""
    return page.evaluate("""label => { const plots = [...document.querySelectorAll('.js-plotly-plot')];
      const buttons = plots[plots.length - 1].layout.updatemenus[0].buttons;
      return buttons.find(b => b.label.includes(label)).args[1].frame.duration; }""", label)


def test_a_class_votes_and_the_presenter_runs_replays_and_reveals(page: Page, browser, app_url, screenshots):
    shots = screenshots / "presenter"
    page.goto(f"{app_url}/presenter?demo=state_key&step=1")
    expect(page.get_by_role("heading", name="Oldest: where the model keeps its state")).to_be_visible(timeout=60_000)
    settle(page)
    expect(page.locator(".presenter-diff .removed")).to_have_text(re.compile(r'string_value: "slot"'))
    expect(page.locator(".presenter-diff .added")).to_have_text(re.compile(r'string_value: "corrid"'))
    shots.whole(page, "1-change.png")

    _next(page)
    expect(page.get_by_text("What happens to their transcripts?")).to_be_visible()
    assert "step=2" in page.url
    shots.whole(page, "2-question.png")

    _next(page)
    code_box = page.locator(".presenter-code")
    expect(code_box).to_have_text(re.compile(r"^[A-Z0-9]{4,6}$"))
    code = code_box.inner_text().strip()
    assert f"code={code}" in page.url, "a reload keeps the vote"
    link = page.get_by_text(re.compile(rf"/demo\?code={code}")).inner_text().strip()
    expect(page.get_by_text("Votes: 0")).to_be_visible()

    learner = new_context(browser, viewport={"width": 1200, "height": 900}, locale="en-US")
    try:
        voter = learner.new_page()
        voter.set_default_timeout(30_000)
        voter.goto(link)
        expect(voter.get_by_role("heading", name="Class vote")).to_be_visible(timeout=60_000)
        settle(voter)
        voter.get_by_text(FOREIGN, exact=True).click()
        settle(voter)
        voter.get_by_role("button", name="Vote", exact=True).click()
        settle(voter)
        expect(voter.get_by_text(re.compile(r"^Your vote: Corrupted: sessions read each other's state\."))).to_be_visible()
        shots.whole(voter, "learner-voted.png")

        expect(page.get_by_text("Votes: 1")).to_be_visible(timeout=LIVE_MS)  # no click: the fragment re-reads
        shots.whole(page, "3-votes.png")

        _next(page)
        page.get_by_role("button", name="Run both set-ups").click()
        settle(page)
        before, after = page.locator(".st-key-presenter-board-before"), page.locator(".st-key-presenter-board-after")
        expect(before.get_by_text(re.compile(r"sessions corrupted"))).to_be_visible(timeout=RUN_TIMEOUT_MS)
        expect(after.get_by_text(re.compile(r"All \d+ sessions intact"))).to_be_visible()
        expect(page.locator(".js-plotly-plot")).to_have_count(3)  # two timelines and the replay
        expect(page.locator('[data-testid="stException"]')).to_have_count(0)
        shots.whole(page, "4-run.png")

        assert _replay_frame(page) == 0
        page.locator(".js-plotly-plot").last.locator(".updatemenu-button", has_text="▶").first.click()
        page.wait_for_function("() => { const plots = [...document.querySelectorAll('.js-plotly-plot')];"
                               " return plots[plots.length - 1]._fullLayout.sliders[0].active > 2; }", timeout=30_000)
        page.locator(".js-plotly-plot").last.locator(".updatemenu-button", has_text="pause").click()
        paused = _replay_frame(page)
        # Three frames of the speed that was playing, as the figure itself times them: that long,
        # a replay still playing would have moved on.
        page.wait_for_timeout(3 * _frame_ms(page, "▶"))
        assert _replay_frame(page) == paused > 2, "play moves the replay on, pause holds it"
        shots.whole(page, "4-replay.png")

        voter.reload()  # the learner's address now carries their id: a reload keeps their vote
        expect(voter.get_by_text("Voting is closed", exact=False)).to_be_visible(timeout=LIVE_MS)
        expect(voter.get_by_text(f"Your vote: {FOREIGN}.", exact=True)).to_be_visible()

        _next(page)
        page.get_by_role("button", name="Reveal the answer").click()
        settle(page)
        expect(page.get_by_text(re.compile(r"^Before the change, the run came back corrupted\."))).to_be_visible()
        # One vote, for FOREIGN: the share right is all or nothing, and the learner's page agrees with it.
        # Which options were right is what the app recorded from the run (the vote store it shares
        # with this test through TRITON_LAB_DATA), not what this page lists.
        held = "foreign" in votes.store().poll(code).right
        right = page.locator('[data-testid="stMetric"]', has_text="Right").first
        expect(right).to_contain_text(re.compile(r"100(\.0)?%" if held else r"\b0(\.0)?%"))
        expect(page.locator('[data-testid="stException"]')).to_have_count(0)
        shots.whole(page, "5-reveal.png")

        verdict = "Your prediction held." if held else "Your prediction did not hold."
        expect(voter.get_by_text(verdict, exact=True)).to_be_visible(timeout=LIVE_MS)
        shots.whole(voter, "learner-revealed.png")
    finally:
        learner.close()


def test_the_vote_screen_and_the_learner_page_in_chinese(browser, app_url, screenshots):
    shots = screenshots / "presenter"
    with new_page(browser, "zh-CN") as page:
        page.goto(f"{app_url}/presenter?demo=ready&step=3&lang=zh")
        expect(page.get_by_role("heading", name="Direct：遵守 READY")).to_be_visible(timeout=60_000)
        settle(page)
        code = page.locator(".presenter-code").inner_text().strip()
        expect(page.get_by_text("票数：0")).to_be_visible()
        shots.whole(page, "3-votes-zh.png")
        page.goto(f"{app_url}/demo?code={code}&lang=zh")
        expect(page.get_by_role("heading", name="课堂投票")).to_be_visible(timeout=60_000)
        settle(page)
        expect(page.get_by_role("button", name="投票", exact=True)).to_be_visible()
        shots.whole(page, "learner-zh.png")
