"""What every browser test does to a Streamlit page: wait for a rerun to end, and take a
screenshot of the whole app (it scrolls inside its main block, not the window).

A script of the test's own, installed in every browser context before any page loads
(`new_context`), reads the messages the Streamlit server sends over the page's websocket and
counts each script run that finishes (ForwardMsg.script_finished, field 6: a whole run, a
fragment's run or a compile error; a run cut short by st.rerun() is not finished, its rerun
is). Every click, key press or typed input marks the count, so `settle` waits for a run that
finished after the last input (or, with none, the page load's first run), not for a guessed
time: a click whose rerun has yet to start on a busy machine is waited for, a fast rerun is not
missed, and a page that reruns itself is waited for to the end.
"""
from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from playwright.sync_api import Browser, BrowserContext, Page, expect

RUN_TIMEOUT_MS = 120_000

# Top-level fields of each binary ForwardMsg (protobuf wire format: varint keys, length-delimited
# messages skipped); ScriptFinishedStatus 2 is FINISHED_EARLY_FOR_RERUN.
RUN_COUNTER = """(() => {
  const runs = { ended: 0, settled: 0 };
  window.__labRuns = runs;
  const mark = () => { runs.settled = runs.ended; };
  for (const type of ["pointerdown", "keydown", "input"]) window.addEventListener(type, mark, true);
  const finished = (bytes) => {
    let i = 0;
    const varint = () => { let v = 0, s = 0, b; do { b = bytes[i++]; v += (b & 0x7f) * 2 ** s; s += 7; } while (b & 0x80); return v; };
    while (i < bytes.length) {
      const key = varint(), field = Math.floor(key / 8), wire = key % 8;
      if (wire === 0) { const value = varint(); if (field === 6) return value; }
      else if (wire === 2) { const length = varint(); i += length; }
      else if (wire === 1) i += 8;
      else if (wire === 5) i += 4;
      else return null;
    }
    return null;
  };
  const Native = window.WebSocket;
  window.WebSocket = class extends Native {
    constructor(...args) {
      super(...args);
      this.addEventListener("message", (event) => {
        if (!(event.data instanceof ArrayBuffer)) return;
        const status = finished(new Uint8Array(event.data));
        if (status !== null && status !== 2) runs.ended += 1;
      });
    }
  };
})();"""
_RUN_ENDED = """() => { const r = window.__labRuns; const app = document.querySelector('[data-testid="stApp"]');
  return app && r.ended > r.settled && app.getAttribute('data-test-script-state') === 'notRunning'; }"""
# Every plotly chart drawn at the width of its box: after a resize, plotly has re-laid out.
_PLOTS_FIT = """() => [...document.querySelectorAll('.js-plotly-plot')]
  .every(gd => !gd._fullLayout || Math.abs(gd._fullLayout.width - gd.getBoundingClientRect().width) < 1)"""
_TWO_FRAMES = "() => new Promise(done => requestAnimationFrame(() => requestAnimationFrame(done)))"


# No CSS animation or transition: headless Chromium paints in software, and Streamlit's running
# indicator and fades repaint the page every frame while a script or a fragment on a timer runs.
# What a test waits for is the page's state, which motion never changes.
NO_MOTION = """(() => {
  const style = document.createElement("style");
  style.textContent = "*, *::before, *::after { animation: none !important; transition: none !important; }";
  const add = () => (document.head || document.documentElement).appendChild(style);
  if (document.documentElement) add(); else document.addEventListener("DOMContentLoaded", add);
})();"""


def watch_runs(context: BrowserContext) -> BrowserContext:
    """Count script runs in every page this context opens (settle needs it), with no motion."""
    context.add_init_script(RUN_COUNTER)
    context.add_init_script(NO_MOTION)
    return context


def new_context(browser: Browser, **options) -> BrowserContext:
    """browser.new_context(**options) whose pages count their script runs."""
    return watch_runs(browser.new_context(**options))


@contextmanager
def new_page(browser: Browser, locale: str, viewport: dict[str, int] | None = None) -> Iterator[Page]:
    """A page in a browser context of its own (`new_context`), 1400 x 1000 unless told, that waits
    30 s for an element; the context is closed after."""
    context = new_context(browser, viewport=viewport or {"width": 1400, "height": 1000}, locale=locale)
    try:
        page = context.new_page()
        page.set_default_timeout(30_000)
        yield page
    finally:
        context.close()


# Text nodes a learner can see in the sidebar and the page, those inside `skip` (a CSS selector
# list) and hidden ones left out.
_VISIBLE_TEXT = """(skip) => {
  const roots = [...document.querySelectorAll('[data-testid="stSidebar"], [data-testid="stMain"]')];
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


def visible_texts(page: Page, skip: str) -> list[str]:
    """Every text node shown in the sidebar and the page, outside the elements `skip` selects."""
    return page.evaluate(_VISIBLE_TEXT, skip)


def settle(page: Page) -> None:
    """Wait for a script run that finished after the last input and the last settle (a page
    load's first run, or the rerun a click started), then for the app to say it is not running
    and the status widget to go. On a page with a fragment that reruns on a timer (presenter,
    class vote), that fragment's run also counts."""
    assert page.evaluate("() => window.__labRuns !== undefined"), "open the page in browser_helpers.new_context"
    page.wait_for_function(_RUN_ENDED, timeout=RUN_TIMEOUT_MS)
    page.evaluate("() => { window.__labRuns.settled = window.__labRuns.ended; }")
    expect(page.locator('[data-testid="stStatusWidget"]')).to_have_count(0, timeout=RUN_TIMEOUT_MS)


@contextmanager
def whole_content_on_screen(page: Page) -> Iterator[None]:
    """The viewport grown to the content (Streamlit scrolls inside its main block, so a full-page
    shot or a contrast check would see one screen), plotly re-laid out and painted; restored after."""
    height = page.evaluate(
        "() => Math.max(...[...document.querySelectorAll('[data-testid=\"stMain\"], "
        "[data-testid=\"stAppViewContainer\"], body')].map(e => e.scrollHeight))"
    )
    size = page.viewport_size
    page.set_viewport_size({"width": size["width"], "height": min(int(height) + 50, 16000)})
    try:
        page.wait_for_function(_PLOTS_FIT, timeout=RUN_TIMEOUT_MS)  # plotly re-lays out to the new size
        page.evaluate(_TWO_FRAMES)  # and that layout is painted
        yield
    finally:
        page.set_viewport_size(size)


def full_screenshot(page: Page, path) -> None:
    """Grow the viewport to the content first, then shoot the full page."""
    with whole_content_on_screen(page):
        page.mouse.move(0, 0)  # no tooltip of the last clicked button over the content
        page.screenshot(path=str(path), full_page=True)


class Photos:
    """Where the browser tests' photographs go: a folder under artifacts/screenshots/ when pytest runs
    with --screenshots, else nowhere. They are for people (a translation's pages, the presenter's
    steps, README's picture); no test reads them, and each costs Chromium a repaint of the whole
    page and a PNG (0.4 to 0.9 s of CPU on two cores, about 50 a run)."""

    def __init__(self, folder: Path | None) -> None:
        self.folder = folder

    def __truediv__(self, name: str) -> Photos:
        return Photos(self.folder / name if self.folder is not None else None)

    def whole(self, page: Page, name: str) -> None:
        """The whole page (full_screenshot), as `name` in this folder."""
        if self.folder is not None:
            self.folder.mkdir(parents=True, exist_ok=True)
            full_screenshot(page, self.folder / name)

    def screen(self, page: Page, name: str) -> None:
        """What the viewport shows now, as `name` in this folder."""
        if self.folder is not None:
            self.folder.mkdir(parents=True, exist_ok=True)
            page.mouse.move(0, 0)  # no tooltip of the last clicked button over the content
            page.screenshot(path=str(self.folder / name))


def run_small_check(page: Page, app_url: str, model: str, lang: str, steps: str | None = "4") -> None:
    """The check page on `model` in `lang`: a small check (6 sessions x 4 steps; steps=None leaves Steps
    empty, as a decoupled model's check asks: the model decides how many responses a request gets) run
    until its results show."""
    from app.i18n import words

    _ = words(lang)
    page.goto(f"{app_url}/check?model={model}&lang={lang}")
    expect(page.get_by_role("heading", name=_("Check a deployment"))).to_be_visible(timeout=60_000)
    settle(page)
    for label, value in (("Sessions", "6"), ("Steps", steps)):
        if value is None:
            continue
        box = page.get_by_role("spinbutton", name=_(label))
        box.fill(value)
        box.press("Enter")
        settle(page)
    page.get_by_role("button", name=_("Run the check"), exact=True).click()
    settle(page)
    expect(page.get_by_role("heading", name=_("Results of the last check"))).to_be_visible(timeout=RUN_TIMEOUT_MS)
