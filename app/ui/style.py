"""The app's one stylesheet over Streamlit's theme, for what .streamlit/config.toml has no option
for: the colours of syntax-highlighted code.

Streamlit colours code tokens (prism classes) from its fixed palette (green #09ab3b strings,
teal #29b09d numbers, ...), 2.2:1 to 3.6:1 on its light code background: under WCAG AA's 4.5:1.
These keep Streamlit's hue for each kind of token, dark enough to read; tests/views/test_readable_colours.py
measures each against CODE_BACKGROUND and tests/e2e/test_accessibility_browser.py in the page.
"""
from __future__ import annotations

import streamlit as st

CODE_BACKGROUND = "#f7f7f6"  # config.toml's theme.codeBackgroundColor (Streamlit's light default)

# Prism token selectors as Streamlit groups them, and the colour each group gets here.
TOKEN_COLOURS: dict[tuple[str, ...], str] = {
    (".token.comment", ".token.prolog", ".token.doctype", ".token.cdata", ".token.punctuation",
     ".token.unchanged.line", ".comment.linenumber"): "#54575f",
    (".token.attr-name", ".token.property", ".token.variable"): "#005f87",
    (".token.boolean", ".token.constant", ".token.symbol", ".token.inserted.line", ".token.inserted.prefix"): "#2b6a10",
    (".token.number", ".token.regex"): "#006b5e",
    (".token.string", ".token.char", ".token.attr-value"): "#0b6b2b",
    (".token.operator", ".token.entity", ".token.decorator", ".token.atrule"): "#a3400b",
    (".token.url",): "#6d3fc0",
    (".token.keyword", ".token.tag", ".token.function", ".token.class-name", ".token.selector"): "#1259a8",
    (".token.important", ".token.deleted.line", ".token.deleted.prefix"): "#b3261e",
}
# Inside every code block (st.code and markdown fences): one attribute and an element more than
# Streamlit's own `.<class> .token.x` rules, so these win wherever they both apply.
_SCOPE = '[data-testid="stCode"] pre'


def stylesheet() -> str:
    rules = [", ".join(f"{_SCOPE} {token}" for token in tokens) + f" {{ color: {colour}; }}"
             for tokens, colour in TOKEN_COLOURS.items()]
    return "<style>\n" + "\n".join(rules) + "\n</style>"


def apply() -> None:
    """Add the stylesheet to the page (app/main.py, on every page); st.html of a style alone
    takes no room on the page."""
    st.html(stylesheet())
