"""The one palette of every chart (no Streamlit): colours a colour-blind learner can tell apart,
and a second cue (marker symbol, line dash, bar pattern) wherever colour tells categories apart.

The colours are Okabe and Ito's eight ("Color Universal Design", 2002; Wong, "Points of view:
Color blindness", Nature Methods 8, 441 (2011)), chosen to stay distinct under protanopia,
deuteranopia and tritanopia. Meanings keep one colour across the app: bluish green is what
went right (an intact transcript, the right letter, a check that held), vermillion what went
wrong, grey what is neither (padding, queue time, a skipped check).

Okabe and Ito's orange, sky blue and yellow are lighter than WCAG 2.1's 3:1 for a shape against
white (success criterion 1.4.11, non-text contrast), so `finish` gives every bar and marker filled
that light a dark outline, which is the shape's edge a learner sees; the fill keeps its colour.

Importing this module also makes it plotly express's default sequences, so a px chart that
names no colours of its own draws from it too; `finish(fig)` gives every trace still without a
colour, symbol or dash its own from here. tests/charts/test_chart_palette.py holds every chart to it.
"""
from __future__ import annotations

from typing import Any

import plotly.express as px
import plotly.graph_objects as go

BLUE = "#0072b2"
ORANGE = "#e69f00"
BLUISH_GREEN = "#009e73"
VERMILLION = "#d55e00"
REDDISH_PURPLE = "#cc79a7"
SKY_BLUE = "#56b4e9"
YELLOW = "#f0e442"
BLACK = "#000000"
CATEGORY: tuple[str, ...] = (BLUE, ORANGE, BLUISH_GREEN, VERMILLION, REDDISH_PURPLE, SKY_BLUE, BLACK, YELLOW)

GOOD, BAD = BLUISH_GREEN, VERMILLION
GREY = "#999999"  # neither good nor bad: padding, skipped, unknown
DARK_GREY = "#555555"
LIGHT_GREY = "#c7c7c7"
WHITE = "#ffffff"
NEUTRALS: tuple[str, ...] = (GREY, DARK_GREY, LIGHT_GREY, WHITE, "#111111", "#888888", "#8a8a8a", "#dddddd")
NON_TEXT = 3.0  # WCAG 2.1 1.4.11: a shape against what it sits on
OUTLINE = DARK_GREY  # 7.5:1 on white

# The second cue, in the order categories meet them.
SYMBOLS: tuple[str, ...] = ("circle", "square", "diamond", "triangle-up", "x", "cross", "star", "triangle-down")
DASHES: tuple[str, ...] = ("solid", "dash", "dot", "dashdot", "longdash", "longdashdot")
PATTERNS: tuple[str, ...] = ("", "/", "\\", "x", "-", "|", "+", ".")


def tint(colour: str, share: float) -> str:
    """colour mixed with white, `share` of it kept (0 white .. 1 the colour): light fills."""
    channels = [int(colour[i:i + 2], 16) for i in (1, 3, 5)]
    return "#" + "".join(f"{round(255 - share * (255 - c)):02x}" for c in channels)


def rgba(colour: str, alpha: float) -> str:
    """colour at opacity alpha, as plotly reads it."""
    r, g, b = (int(colour[i:i + 2], 16) for i in (1, 3, 5))
    return f"rgba({r},{g},{b},{alpha})"


LIGHT_GOOD, LIGHT_BAD = tint(GOOD, 0.3), tint(BAD, 0.3)  # a good or bad cell's fill, its text dark on it


def session_colour(session: int) -> str:
    """Session k's colour; with more sessions than colours, session_pattern tells them apart."""
    return CATEGORY[int(session) % len(CATEGORY)]


def session_pattern(session: int) -> str:
    """Session k's bar pattern: none for the first len(CATEGORY) sessions, then one per round."""
    return PATTERNS[(int(session) // len(CATEGORY)) % len(PATTERNS)]


def luminance(colour: str) -> float:
    """WCAG 2.1 relative luminance of #rrggbb."""
    channels = [int(colour.lstrip("#")[i:i + 2], 16) / 255 for i in (0, 2, 4)]
    linear = [c / 12.92 if c <= 0.04045 else ((c + 0.055) / 1.055) ** 2.4 for c in channels]
    return 0.2126 * linear[0] + 0.7152 * linear[1] + 0.0722 * linear[2]


def contrast(a: str, b: str) -> float:
    """WCAG 2.1 contrast ratio of two #rrggbb colours (1 to 21)."""
    high, low = sorted((luminance(a), luminance(b)), reverse=True)
    return (high + 0.05) / (low + 0.05)


def _on_white(colour: str) -> str | None:
    """A #rrggbb or rgba() colour as it shows on white, as #rrggbb; None for anything else."""
    colour = colour.strip().lower()
    if len(colour) == 7 and colour.startswith("#"):
        return colour
    if colour.startswith("rgba(") or colour.startswith("rgb("):
        r, g, b, *alpha = (float(v) for v in colour[colour.index("(") + 1:colour.rindex(")")].split(","))
        return tint("#" + "".join(f"{round(c):02x}" for c in (r, g, b)), alpha[0] if alpha else 1.0)
    return None


def faint(colours: object) -> bool:
    """Whether a fill (one colour or one per point) has a colour under NON_TEXT against white."""
    values = [colours] if isinstance(colours, str) else list(colours) if isinstance(colours, (list, tuple)) else []
    shown = [v for c in values if isinstance(c, str) and (v := _on_white(c)) is not None]
    return any(contrast(v, WHITE) < NON_TEXT for v in shown)


def _key(trace: Any) -> str:  # plotly's traces are untyped
    """A trace's category; tables and other traces without a legend have none of their own."""
    return str(getattr(trace, "legendgroup", None) or getattr(trace, "name", None) or "")


def _modes(trace: Any) -> str:
    """A scatter trace's mode as plotly draws it (unset: lines, markers too on short traces)."""
    return str(trace.mode or ("lines+markers" if len(trace.x or ()) < 20 else "lines"))


def finish(fig: go.Figure) -> go.Figure:
    """Every chart's last step: the palette as the figure's colorway; each category (a trace's
    legend group or name) without a colour of its own gets the next palette colour, and, as its
    second cue, markers without a symbol the next symbol, lines without a dash the next dash and,
    where bars of several categories meet, bars without a pattern the next pattern (each counted
    among the figure's marker, line or bar categories, so a lone line stays solid, a lone bar plain).
    Traces of one category (facets of a px chart) share theirs."""
    fig.update_layout(colorway=list(CATEGORY))
    everyone = list(dict.fromkeys(_key(t) for t in fig.data))
    scatters = [t for t in fig.data if t.type == "scatter"]
    with_markers = list(dict.fromkeys(_key(t) for t in scatters if "markers" in _modes(t)))
    with_lines = list(dict.fromkeys(_key(t) for t in scatters if "lines" in _modes(t)))
    bars = list(dict.fromkeys(_key(t) for t in fig.data if t.type == "bar"))
    for trace in fig.data:
        key = _key(trace)
        own = CATEGORY[everyone.index(key) % len(CATEGORY)]
        if trace.type in ("bar", "histogram", "box") and trace.marker.color is None:
            trace.marker.color = own
        if trace.type == "bar" and len(bars) > 1 and trace.marker.pattern.shape is None:
            trace.marker.pattern.shape = PATTERNS[bars.index(key) % len(PATTERNS)]
        if trace.type in ("bar", "histogram"):
            _outline(trace)
        if trace.type != "scatter":
            continue
        if trace.marker.color is None and trace.line.color is None:
            trace.marker.color = trace.line.color = own
        if "markers" in _modes(trace) and trace.marker.symbol is None:
            trace.marker.symbol = SYMBOLS[with_markers.index(key) % len(SYMBOLS)]
        if "markers" in _modes(trace):
            _outline(trace)
        if "lines" in _modes(trace) and trace.line.dash is None:
            trace.line.dash = DASHES[with_lines.index(key) % len(DASHES)]
    return fig


def fill_of(trace: Any) -> Any:
    """The colour a trace's bars or markers are filled with: their own, or (plotly's rule for a
    scatter whose markers name none) the line's."""
    if trace.marker.color is not None or trace.type != "scatter":
        return trace.marker.color
    return trace.line.color


def _outline(trace: Any) -> None:
    """A dark edge on bars or markers filled too light to see against white, unless they have one."""
    if trace.marker.line.color is None and faint(fill_of(trace)):
        trace.marker.line.color = OUTLINE
        if not trace.marker.line.width:
            trace.marker.line.width = 1


px.defaults.color_discrete_sequence = list(CATEGORY)
px.defaults.symbol_sequence = list(SYMBOLS)
px.defaults.line_dash_sequence = list(DASHES)
