"""The list of Streamlit's own violations is strict: each entry says which rule, inside which of
Streamlit's elements, why that element is not the app's, and the upstream issue or what was
searched for; no entry may cover a container that holds the app's own content."""
from __future__ import annotations

import yaml

from tests.e2e import axe

# Containers whose insides are (also) the app's: an entry on one would excuse the app's elements.
APP_CONTAINERS = {"body", "html", "#root", '[data-testid="stApp"]', '[data-testid="stAppViewContainer"]',
                  '[data-testid="stMain"]', '[data-testid="stMainBlockContainer"]', '[data-testid="stSidebar"]',
                  '[data-testid="stSidebarContent"]', '[data-testid="stSidebarUserContent"]', '[data-testid="stVerticalBlock"]'}


def test_every_entry_names_rule_streamlit_element_reason_and_issue_or_search():
    rows = yaml.safe_load(axe.CHROME_FILE.read_text(encoding="utf-8"))
    assert rows, "an empty list: delete the file's entries only when axe finds nothing of Streamlit's"
    for row in rows:
        assert set(row) <= {"rule", "selector", "why", "issue", "searched"}, row
        assert row["rule"] and row["selector"] and len(row["why"]) > 40, row
        assert (row.get("issue") or "").startswith("https://github.com/streamlit/streamlit/issues/") or row.get("searched"), row
        assert row["selector"] not in APP_CONTAINERS, row


def test_a_finding_is_streamlits_only_for_its_rule_inside_its_element():
    entry = axe.ChromeEntry("list", '[data-testid="stSidebarNav"]', "why", None)
    inside = axe.Finding("Home", "en", "list", "ul", "<ul>", "help", "url", "", inside=('[data-testid="stSidebarNav"]',))
    other_rule = axe.Finding("Home", "en", "color-contrast", "ul", "<ul>", "help", "url", "", inside=inside.inside)
    outside = axe.Finding("Home", "en", "list", "ul", "<ul>", "help", "url", "")
    own, chrome = axe.split([inside, other_rule, outside], [entry])
    assert own == [other_rule, outside] and chrome == [(inside, entry)]
