"""A class on several app replicas, in real browsers: three `streamlit run app/main.py` processes
behind one nginx, sharing the session's Triton and one PostgreSQL (TRITON_LAB_DATABASE_URL).

Each browser context is pinned to a replica by the proxy's cookie, and every page load checks,
by the proxy's X-Lab-Replica header, that the replica it meant served it. What must hold:

- one presenter poll takes votes from learners on every replica and the presenter, on another
  replica, counts each voter once;
- a learner's progress link opens the same progress on another replica;
- two learners on two replicas who press Run on the same deployment at the same moment take
  turns across replicas: each gets the outcome it gets alone, and one page shows its place in
  the queue while the other runs;
- a replica killed while its run holds a deployment does not hold it for ever: a learner on
  another replica gets a result within the lease's time-to-live and a margin;
- PostgreSQL restarted mid-class loses no acknowledged vote, and the pages recover.

Waits are for what proves a state (Playwright's expect, tests.waiting.wait_for), never a time.
"""
from __future__ import annotations

import re
import time
from contextlib import contextmanager
from urllib.parse import parse_qs, urlparse

import pytest
import sqlalchemy as sa
from playwright.sync_api import Page, expect

from app.i18n import words
from app.lab.scenario.scenario import random_texts
from app.quiz.bank import load_bank
from app.recogniser import demo as demos
from app.recogniser.words import prediction as prediction_words
from tests.e2e.browser_helpers import RUN_TIMEOUT_MS, new_context, settle
from tests.e2e.conftest import INSTRUCTOR_KEY, REPLICAS, open_home
from tests.e2e.conftest import LEASE_TTL_S as REPLICA_LEASE_TTL_S
from tests.e2e.replicas import HEADER, ReplicaSet
from tests.e2e.test_classroom_browsers import EXPECTED_ROWS, FIX, fill_in_the_fix
from tests.waiting import wait_for

pytestmark = pytest.mark.browser

DEMO = demos.get("state_key")
EN = words("en")
LABELS = {option: EN(prediction_words.CHOICES[option]) for option in DEMO.options}
LIVE_MS = 30_000  # the presenter's histogram re-reads every 2 s, a learner's ballot every 3 s
FIX_MODEL = "asr_sequence_direct"  # the deployment the fix's settings load as
LEASE_TTL_S = float(REPLICA_LEASE_TTL_S)  # TRITON_LAB_LEASE_TTL_S, as the replicas get it (replica_env)
MARGIN_S = 45.0  # the run itself, the page drawing it, a busy two-core machine
SINGLE = load_bank()["choose-ticket-language"]

# Records, in the page, when the run's progress bar said it waited for the deployment and when it
# counted answered requests (first and last time each was seen). A MutationObserver sees every
# change, so a short wait is not missed between two polls of the test.
PROGRESS_WATCH = """(() => {
  const seen = window.__labProgress = { waiting: null, running: null };
  const note = (kind) => { const now = Date.now(); const s = seen[kind];
    if (s === null) seen[kind] = [now, now]; else s[1] = now; };
  const look = () => {
    for (const bar of document.querySelectorAll('[data-testid="stProgress"]')) {
      const text = bar.textContent || "";
      if (text.includes("waiting for the deployment")) note("waiting");
      if (text.includes("requests answered")) note("running");
    }
  };
  new MutationObserver(look).observe(document, { subtree: true, childList: true, characterData: true });
})();"""


# -- helpers ---------------------------------------------------------------------------------

@contextmanager
def pinned_page(browser, replicas: ReplicaSet, index: int, watch_progress: bool = False):
    """A browser context of its own (a learner) whose requests the proxy sends to replica `index`."""
    context = new_context(browser, viewport={"width": 1400, "height": 1000}, locale="en-US")
    try:
        replicas.pin(context, index)
        if watch_progress:
            context.add_init_script(PROGRESS_WATCH)
        page = context.new_page()
        page.set_default_timeout(30_000)
        yield page
    finally:
        context.close()


def open_on(page: Page, replicas: ReplicaSet, index: int, path_or_url: str) -> None:
    """Load a page through the proxy and check that replica `index` served it."""
    url = path_or_url if path_or_url.startswith("http") else f"{replicas.url}{path_or_url}"
    answer = page.goto(url, timeout=60_000)
    assert answer is not None, f"no answer for {url}"
    served = answer.headers.get(HEADER, "")
    assert served == replicas[index].address, f"{url} was served by {served!r}, not r{index} ({replicas[index].address})"


def unlock_presenter(page: Page) -> None:
    page.get_by_label("Instructor key").fill(INSTRUCTOR_KEY)
    page.get_by_role("button", name="Unlock").click()
    settle(page)


def open_poll(page: Page, replicas: ReplicaSet, index: int) -> tuple[str, str]:
    """The presenter's vote step on replica `index`: unlock, open a poll; its code and join link."""
    open_on(page, replicas, index, f"/presenter?demo={DEMO.name}&step=3")
    expect(page.get_by_label("Instructor key")).to_be_visible(timeout=60_000)
    settle(page)
    unlock_presenter(page)
    code_box = page.locator(".presenter-code")
    expect(code_box).to_have_text(re.compile(r"^[A-Z0-9]{4,6}$"), timeout=RUN_TIMEOUT_MS)
    code = code_box.inner_text().strip()
    link = page.get_by_text(re.compile(rf"/demo\?code={code}")).inner_text().strip()
    assert link.startswith(replicas.url), f"the join link {link} goes through the proxy"
    expect(page.get_by_text("Votes: 0")).to_be_visible()
    return code, link


def vote(page: Page, replicas: ReplicaSet, index: int, link: str, option: str) -> None:
    """A learner on replica `index` opens the join link and votes `option`; the page acknowledges it."""
    open_on(page, replicas, index, link)
    expect(page.get_by_role("heading", name="Class vote")).to_be_visible(timeout=60_000)
    settle(page)
    choose(page, option)


def choose(page: Page, option: str) -> None:
    page.get_by_text(LABELS[option], exact=True).click()
    settle(page)
    page.get_by_role("button", name="Vote", exact=True).click()
    settle(page)
    expect(your_vote(page, option)).to_be_visible(timeout=LIVE_MS)


def your_vote(page: Page, option: str):
    return page.get_by_text(re.compile(rf"^Your vote: {re.escape(LABELS[option])}\."))


def stored_votes(url: str, code: str) -> dict[str, str]:
    """{voter: option} of one poll, read from the class database itself."""
    engine = sa.create_engine(url)
    try:
        with engine.connect() as conn:
            rows = conn.execute(sa.text("SELECT voter, option FROM demo_votes WHERE code = :code"), {"code": code}).all()
    finally:
        engine.dispose()
    return {voter: option for voter, option in rows}


def prepare_fix(page: Page, replicas: ReplicaSet, index: int, seed: int, think_ms: float | None = None) -> None:
    """Open the lab on replica `index`, load the fix, give it this learner's seed (and think time)
    and predict; Run is not pressed. The fix's settings load as the shipped asr_sequence_direct."""
    open_on(page, replicas, index, "/lab")
    fill_in_the_fix(page, seed, think_ms)


def expect_own_intact_run(page: Page, seed: int) -> None:
    """The board shows this learner's run alone: every session intact, its sessions and requests
    only, exactly the utterances of its seed."""
    board = page.locator(".st-key-transcript-board")
    expect(board).to_be_visible(timeout=RUN_TIMEOUT_MS)
    expect(page.locator('[data-testid="stException"]')).to_have_count(0)
    expect(board.get_by_text(f"All {FIX.sessions} sessions intact", exact=False)).to_be_visible()
    expect(board.get_by_text("CORRUPTED", exact=False)).to_have_count(0)
    expect(page.get_by_text(f"{FIX.sessions} sessions, {FIX.sessions * FIX.chunks} requests on {FIX_MODEL}",
                            exact=False)).to_be_visible()
    own = [t.upper().strip() for t in random_texts(FIX.sessions, FIX.chunks, seed)]
    assert sorted(board.evaluate(EXPECTED_ROWS)) == sorted(own), f"the board of seed {seed} shows other words"


def active_tickets(url: str, model: str) -> list[dict]:
    """The leases (active run tickets) held on `model`, read from the class database."""
    from app.lab.database import schema  # the lead's shared-server tables (app/lab/database/schema.py)

    tickets = schema.run_tickets
    engine = sa.create_engine(url)
    try:
        with engine.connect() as conn:
            if not sa.inspect(conn).has_table(tickets.name):
                return []  # no replica has used the database yet (each brings its schema up when it first does)
            rows = conn.execute(sa.select(tickets).where(tickets.c.model == model, tickets.c.active.is_(True))).mappings().all()
    finally:
        engine.dispose()
    return [dict(r) for r in rows]


def live_leases(url: str, ids: list[int]) -> list[int]:
    """Which of these tickets are still active with a heartbeat younger than the lease's TTL
    (by the database's clock, as the replicas judge it)."""
    engine = sa.create_engine(url)
    try:
        with engine.connect() as conn:
            rows = conn.execute(sa.text("SELECT id FROM run_tickets WHERE id = ANY(:ids) AND active "
                                        "AND heartbeat_at > now() - make_interval(secs => :ttl)"),
                                {"ids": ids, "ttl": LEASE_TTL_S}).scalars().all()
    finally:
        engine.dispose()
    return list(rows)


def press_retry_if_offered(page: Page) -> None:
    """A page that lost the database offers a button to try again; press it if it is there."""
    retry = page.get_by_role("button", name=re.compile(r"^(Try again|Retry|Reload)", re.IGNORECASE))
    if retry.count():
        retry.first.click()
        settle(page)


# -- the tests -------------------------------------------------------------------------------

def test_each_learner_reaches_its_replica_through_the_proxy(browser, app_replicas):
    assert len(app_replicas.replicas) == REPLICAS
    earlier = len(app_replicas.routes())  # what other tests sent (a failover included) is not this test's
    for replica in app_replicas.replicas:
        with pinned_page(browser, app_replicas, replica.index) as page:
            open_on(page, app_replicas, replica.index, "/")
            expect(page.get_by_role("heading", name="Triton Batching Lab")).to_be_visible(timeout=60_000)
            settle(page)
            expect(page.locator('[data-testid="stException"]')).to_have_count(0)
    # The pages' websockets went through the proxy to the same replica as the page.
    names = {r.name for r in app_replicas.replicas}
    streams = [(cookie, upstream) for cookie, upstream, _status in app_replicas.routes()[earlier:] if cookie in names and "," not in upstream]
    assert {cookie for cookie, _upstream in streams} == names
    for cookie, upstream in streams:
        assert app_replicas.replica_at(upstream).name == cookie, f"cookie {cookie} was served by {upstream}"


def test_learners_on_every_replica_vote_in_one_poll_and_the_presenter_counts_each_once(browser, app_replicas):
    # The presenter on r2; voters on r0, r1 and r2 (two each), one of whom changes their mind.
    plan = [(0, "foreign"), (0, "intact"), (1, "lost"), (1, "foreign"), (2, "garbage"), (2, "foreign")]
    with pinned_page(browser, app_replicas, 2) as presenter:
        code, link = open_poll(presenter, app_replicas, 2)
        voter_ids = []
        for index, option in plan:
            with pinned_page(browser, app_replicas, index) as voter:
                vote(voter, app_replicas, index, link, option)
                voter_ids.append(parse_qs(urlparse(voter.url).query)["learner"][0])
                if (index, option) == plan[0]:
                    choose(voter, "intact")  # voting again replaces the vote: still one voter
                    plan[0] = (index, "intact")
        assert len(set(voter_ids)) == len(plan), "every learner is a voter of their own"

        expect(presenter.get_by_text(f"Votes: {len(plan)}")).to_be_visible(timeout=LIVE_MS)  # no click: the fragment re-reads
        stored = stored_votes(app_replicas.database_url, code)
        assert stored == {voter: option for voter, (_i, option) in zip(voter_ids, plan, strict=True)}
        expect(presenter.locator('[data-testid="stException"]')).to_have_count(0)


def test_a_progress_link_opens_the_same_progress_on_another_replica(browser, app_replicas):
    total = len(load_bank())
    score = re.compile(rf"^Score 1(\.0+)? / {total} · 1 of {total} answered")
    with pinned_page(browser, app_replicas, 0) as first:
        open_on(first, app_replicas, 0, "/quiz")
        expect(first.get_by_role("heading", name="Quiz")).to_be_visible(timeout=60_000)
        settle(first)
        first.wait_for_url(re.compile(r"learner="), timeout=RUN_TIMEOUT_MS)
        query = parse_qs(urlparse(first.url).query)
        learner, seed = query["learner"][0], query["seed"][0]
        open_on(first, app_replicas, 0, f"/quiz?learner={learner}&seed={seed}&item={SINGLE.id}")
        expect(first.get_by_text(SINGLE.prompt, exact=True)).to_be_visible(timeout=60_000)
        settle(first)
        first.locator('[data-testid="stForm"]').get_by_text(next(o for o in SINGLE.options if o.correct).text, exact=True).click()
        first.get_by_role("button", name="Submit answer").click()
        settle(first)
        expect(first.get_by_text("Correct: 1 point")).to_be_visible()
        expect(first.get_by_text(score)).to_be_visible()
        link = first.url
        assert f"learner={learner}" in link and f"item={SINGLE.id}" in link, "the address bar is the progress link"

    with pinned_page(browser, app_replicas, 1) as elsewhere:
        open_on(elsewhere, app_replicas, 1, link)
        expect(elsewhere.get_by_text(SINGLE.prompt, exact=True)).to_be_visible(timeout=60_000)
        settle(elsewhere)
        expect(elsewhere.get_by_role("button", name="Answered")).to_be_disabled()
        expect(elsewhere.get_by_text("Correct: 1 point")).to_be_visible()
        expect(elsewhere.get_by_text(score)).to_be_visible()
        expect(elsewhere.locator('[data-testid="stException"]')).to_have_count(0)


def test_two_replicas_take_turns_on_one_deployment_and_each_learner_sees_their_own_run(browser, app_replicas):
    seeds = {0: 301, 1: 302}
    with pinned_page(browser, app_replicas, 0, watch_progress=True) as a, \
         pinned_page(browser, app_replicas, 1, watch_progress=True) as b:
        pages = {0: a, 1: b}
        for index, page in pages.items():
            prepare_fix(page, app_replicas, index, seeds[index])
        for page in pages.values():  # as close to together as one driver gets: no waiting between the clicks
            page.get_by_role("button", name="Run", exact=True).click()
        for index, page in pages.items():
            settle(page)
            expect_own_intact_run(page, seeds[index])
        seen = {index: page.evaluate("() => window.__labProgress") for index, page in pages.items()}

    waited = [i for i, s in seen.items() if s["waiting"] is not None]
    assert waited, f"neither page showed its place in the queue: {seen}"
    # The one that waited did so while the other's requests were being answered.
    assert any(
        seen[other]["running"] is not None
        and seen[w]["waiting"][0] <= seen[other]["running"][1] and seen[other]["running"][0] <= seen[w]["waiting"][1]
        for w in waited for other in seen if other != w
    ), f"no page waited while the other ran: {seen}"


def test_a_killed_replica_does_not_hold_its_deployment_past_the_lease(browser, app_replicas):
    assert float(app_replicas.env["TRITON_LAB_LEASE_TTL_S"]) == LEASE_TTL_S
    try:
        with pinned_page(browser, app_replicas, 0) as doomed, \
             pinned_page(browser, app_replicas, 1, watch_progress=True) as survivor:
            # A long run on r0 (24 chunks 400 ms apart per session): it holds the deployment when killed.
            prepare_fix(doomed, app_replicas, 0, seed=401, think_ms=400)
            prepare_fix(survivor, app_replicas, 1, seed=402)
            before = {t["id"] for t in active_tickets(app_replicas.database_url, FIX_MODEL)}
            doomed.get_by_role("button", name="Run", exact=True).click()
            held = wait_for(lambda: [t for t in active_tickets(app_replicas.database_url, FIX_MODEL) if t["id"] not in before],
                            f"r0's run to hold {FIX_MODEL} (an active row in run_tickets)", timeout_s=RUN_TIMEOUT_MS / 1000)
            expect(doomed.locator(".st-key-transcript-board")).to_have_count(0)  # still running, not finished
            app_replicas.kill(0)

            started = time.monotonic()
            survivor.get_by_role("button", name="Run", exact=True).click()
            board = survivor.locator(".st-key-transcript-board")
            expect(board).to_be_visible(timeout=(LEASE_TTL_S + MARGIN_S) * 1000)
            took = time.monotonic() - started
            assert took <= LEASE_TTL_S + MARGIN_S, f"a result after {took:.1f} s"
            settle(survivor)
            expect(survivor.locator('[data-testid="stException"]')).to_have_count(0)
            expect(survivor.get_by_text(f"{FIX.sessions} sessions, {FIX.sessions * FIX.chunks} requests on {FIX_MODEL}",
                                        exact=False)).to_be_visible()
            waited = survivor.evaluate("() => window.__labProgress")["waiting"]
            assert waited is not None, "the survivor's run waited behind the dead replica's lease, then ran"
            left = live_leases(app_replicas.database_url, [t["id"] for t in held])
            assert not left, f"the dead replica's lease is still alive after the survivor's run: {left}"
    finally:
        app_replicas.revive(0)  # the other tests of the module have their three replicas
        open_home(browser, app_replicas, 0)


def test_postgres_restarted_mid_class_loses_no_acknowledged_vote_and_the_pages_recover(browser, app_replicas, replicas_postgres):
    # The module's own PostgreSQL (no other module's test uses it) and the last test of the module,
    # so the restart disturbs no other test; the replicas are the module's, already used by the class.
    replicas, database = app_replicas, app_replicas.database_url
    plan = [(0, "foreign"), (1, "intact"), (0, "lost"), (1, "foreign")]
    with pinned_page(browser, replicas, 2) as presenter, \
         pinned_page(browser, replicas, 0) as early_a, pinned_page(browser, replicas, 1) as early_b:
        code, link = open_poll(presenter, replicas, 2)
        early = {0: early_a, 1: early_b}
        for index, option in plan[:2]:  # these two pages stay open across the restart
            vote(early[index], replicas, index, link, option)
        for index, option in plan[2:]:
            with pinned_page(browser, replicas, index) as voter:
                vote(voter, replicas, index, link, option)
        expect(presenter.get_by_text(f"Votes: {len(plan)}")).to_be_visible(timeout=LIVE_MS)
        acknowledged = stored_votes(database, code)
        assert sorted(acknowledged.values()) == sorted(option for _i, option in plan)

        replicas_postgres.restart()

        # Every vote acknowledged before the restart is there after it, in the database and on screen.
        assert stored_votes(database, code) == acknowledged
        wait_for(lambda: (press_retry_if_offered(presenter),
                          presenter.get_by_text(f"Votes: {len(plan)}").count())[1],
                 "the presenter's count after the restart", timeout_s=LIVE_MS / 1000 * 2)
        for index, option in plan[:2]:
            wait_for(lambda page=early[index], option=option: (press_retry_if_offered(page), your_vote(page, option).count())[1],
                     f"r{index}'s open ballot to show its vote again", timeout_s=LIVE_MS / 1000 * 2)
            expect(early[index].locator('[data-testid="stException"]')).to_have_count(0)

        # A vote after the restart is stored (if the first try meets a dead connection, the page says so
        # and the learner presses again).
        with pinned_page(browser, replicas, 0) as late:
            open_on(late, replicas, 0, link)
            expect(late.get_by_role("heading", name="Class vote")).to_be_visible(timeout=60_000)
            settle(late)
            for _attempt in range(3):
                late.get_by_text(LABELS["garbage"], exact=True).click()
                settle(late)
                late.get_by_role("button", name="Vote", exact=True).click()
                settle(late)
                if your_vote(late, "garbage").count():
                    break
                press_retry_if_offered(late)
            expect(your_vote(late, "garbage")).to_be_visible()
            late_voter = parse_qs(urlparse(late.url).query)["learner"][0]
        assert stored_votes(database, code) == {**acknowledged, late_voter: "garbage"}
        expect(presenter.get_by_text(f"Votes: {len(plan) + 1}")).to_be_visible(timeout=LIVE_MS)
