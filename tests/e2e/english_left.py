"""English left on a translated page in Chromium: prose of three or more English words outside
code, and widget labels with no word of the page's language (tests/i18n/text_checks.py decides
both, as it does for the AppTest walk). The accessibility walk asks it on every page of every
language but the source one, so the pages are walked once for both checks."""
from __future__ import annotations

from playwright.sync_api import Page

from tests.e2e.browser_helpers import visible_texts
from tests.i18n.text_checks import english_label, english_runs

# Code and hidden parts are not read as prose.
_SKIP = 'pre, code, style, script, [data-testid="stCode"], .stCode, [data-testid="stExpanderDetails"] pre'
_LABELS = """() => [...document.querySelectorAll(
  '[data-testid="stWidgetLabel"], [data-testid="stSidebar"] [data-testid="stWidgetLabel"], button[kind] p, '
  + '[data-testid="stTab"] p, [data-testid="stExpander"] summary p')]
  .filter(e => e.offsetParent !== null && !e.closest('code, pre')).map(e => e.innerText.trim()).filter(Boolean)"""


def english_on(page: Page) -> list[str]:
    """What on the page, as shown now, is still English."""
    found = [f"English text: {t[:90]!r}" for t in visible_texts(page, _SKIP) if english_runs(t)]
    found += [f"English label: {label!r}" for label in page.evaluate(_LABELS) if english_label(label)]
    return found
