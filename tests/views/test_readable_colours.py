"""The colours the app sets over Streamlit's look reach WCAG AA's 4.5:1 for text, measured here
from the values themselves (the browser proof is tests/e2e/test_accessibility_browser.py, which
runs axe-core on every page)."""
from __future__ import annotations

import re

import pytest

from app.charts.palette import contrast
from app.lab.paths import REPO_ROOT
from app.ui import style

AA_TEXT = 4.5
WHITE = "#ffffff"
CAPTION_OPACITY = 0.6  # Streamlit draws captions (theme fadedText60) as textColor at 60 % opacity


def over(colour: str, background: str, opacity: float) -> str:
    """colour at `opacity` painted on background, as #rrggbb."""
    mix = [round(opacity * int(colour[i:i + 2], 16) + (1 - opacity) * int(background[i:i + 2], 16)) for i in (1, 3, 5)]
    return "#" + "".join(f"{c:02x}" for c in mix)


@pytest.fixture(scope="module")
def theme() -> dict:
    tomllib = pytest.importorskip("tomllib")  # Python 3.11+, as Streamlit itself needs to read the file
    return tomllib.loads((REPO_ROOT / ".streamlit" / "config.toml").read_text(encoding="utf-8"))["theme"]


def test_the_contrast_formula_gives_the_known_ratios():
    assert contrast("#000000", WHITE) == pytest.approx(21.0)
    assert contrast("#767676", WHITE) == pytest.approx(4.54, abs=0.01)  # the lightest grey that passes on white
    assert contrast("#828180", WHITE) == pytest.approx(3.88, abs=0.01)  # Streamlit's own caption grey, as axe measured it


def test_captions_are_readable_on_the_light_theme(theme):
    assert theme["base"] == "light"
    caption = over(theme["textColor"], WHITE, CAPTION_OPACITY)
    assert contrast(caption, WHITE) >= AA_TEXT, caption


def test_every_code_token_colour_is_readable_on_the_code_background(theme):
    assert theme["codeBackgroundColor"] == style.CODE_BACKGROUND
    low = {tokens: round(contrast(colour, style.CODE_BACKGROUND), 2) for tokens, colour in style.TOKEN_COLOURS.items()
           if contrast(colour, style.CODE_BACKGROUND) < AA_TEXT}
    assert not low, low


def test_the_stylesheet_colours_every_token_group_inside_code_blocks_only():
    sheet = style.stylesheet()
    rules = re.findall(r"^(.+) \{ color: (#[0-9a-f]{6}); \}$", sheet, flags=re.M)
    assert len(rules) == len(style.TOKEN_COLOURS)
    for (selectors, colour), (tokens, expected) in zip(rules, style.TOKEN_COLOURS.items(), strict=True):
        assert colour == expected
        assert [s.strip() for s in selectors.split(",")] == [f'[data-testid="stCode"] pre {token}' for token in tokens]
