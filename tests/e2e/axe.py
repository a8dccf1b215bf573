"""axe-core in a real page: inject it, run the WCAG 2.1 A and AA rules, and sort what it finds
into the app's own violations (a test fails on them) and Streamlit's chrome (listed in
axe_streamlit_chrome.yaml with the upstream issue, reported but not failed on).

axe-core comes from npm (package.json and its lockfile at the repository root; README's test
command runs `npm ci`), so the rules are a pinned release rather than a copy in this repository.
"""
from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import yaml
from playwright.sync_api import Page

from app.lab.paths import REPO_ROOT
from tests.e2e.browser_helpers import whole_content_on_screen

AXE_JS = REPO_ROOT / "node_modules" / "axe-core" / "axe.min.js"
CHROME_FILE = Path(__file__).with_name("axe_streamlit_chrome.yaml")
WCAG_21_AA = ["wcag2a", "wcag2aa", "wcag21a", "wcag21aa"]

# Each violation's nodes, flattened: the rule, its help URL, the node's CSS path (axe's target), its
# markup, and which of the chrome selectors the node lies inside (Element.closest on that path).
_RUN = """async ([tags, chrome]) => {
  const result = await axe.run(document, { runOnly: { type: 'tag', values: tags }, resultTypes: ['violations'] });
  return result.violations.flatMap(v => v.nodes.map(n => {
    const el = n.target.length === 1 && typeof n.target[0] === 'string' ? document.querySelector(n.target[0]) : null;
    return {
      rule: v.id, help: v.help, url: v.helpUrl,
      target: n.target.map(t => Array.isArray(t) ? t.join(' >>> ') : t).join(' | '),
      html: n.html.slice(0, 300), summary: (n.failureSummary || '').replace(/\\s+/g, ' ').slice(0, 300),
      inside: el ? chrome.filter(selector => el.closest(selector)) : [],
    };
  }));
}"""


@dataclass(frozen=True)
class Finding:
    """One element that breaks one rule, where it was seen."""
    page: str
    lang: str
    rule: str
    target: str
    html: str
    help: str
    url: str
    summary: str
    inside: tuple[str, ...] = ()  # the chrome selectors (axe_streamlit_chrome.yaml) the element lies inside

    def line(self) -> str:
        return (f"{self.page} [{self.lang}] {self.rule}: {self.target}\n    {self.html}\n    {self.summary}\n"
                f"    {self.help}: {self.url}")


@dataclass(frozen=True)
class ChromeEntry:
    """A violation of Streamlit's own interface: the rule, a CSS selector of the Streamlit element
    the violating node lies inside, why that element is Streamlit's and not the app's, and the
    upstream issue (None where a search found none)."""
    rule: str
    selector: str
    why: str
    issue: str | None

    def covers(self, finding: Finding) -> bool:
        return finding.rule == self.rule and self.selector in finding.inside


def chrome_entries(path: Path = CHROME_FILE) -> list[ChromeEntry]:
    rows = yaml.safe_load(path.read_text(encoding="utf-8")) or []
    return [ChromeEntry(row["rule"], row["selector"], row["why"], row.get("issue")) for row in rows]


def missing_axe_message() -> str:
    return (f"axe-core is not installed at {AXE_JS.relative_to(REPO_ROOT)}; the accessibility tests need it. "
            "Install it from the repository root with `npm ci` (README's test command does), then rerun.")


def scan(page: Page, name: str, lang: str, entries: list[ChromeEntry]) -> list[Finding]:
    """axe's WCAG 2.1 A/AA violations on the page as it is now (the caller has let it settle), with
    the whole content on screen: axe measures the contrast only of what it can see."""
    if not page.evaluate("() => typeof window.axe !== 'undefined'"):  # once per document: page links do not reload it
        page.add_script_tag(path=str(AXE_JS))
    with whole_content_on_screen(page):
        nodes = page.evaluate(_RUN, [WCAG_21_AA, sorted({e.selector for e in entries})])
    return [Finding(page=name, lang=lang, rule=n["rule"], target=n["target"], html=n["html"], help=n["help"],
                    url=n["url"], summary=n["summary"], inside=tuple(n["inside"])) for n in nodes]


def split(findings: list[Finding], entries: list[ChromeEntry]) -> tuple[list[Finding], list[tuple[Finding, ChromeEntry]]]:
    """(the app's own findings, Streamlit's chrome findings with the entry that names each)."""
    own: list[Finding] = []
    chrome: list[tuple[Finding, ChromeEntry]] = []
    for finding in findings:
        entry = next((e for e in entries if e.covers(finding)), None)
        if entry is None:
            own.append(finding)
        else:
            chrome.append((finding, entry))
    return own, chrome
