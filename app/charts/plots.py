"""What the exercises' figures share (no Streamlit): colours (from app/charts/palette.py), session labels, layout.

Each exercise draws its own figures in its module (`figures(result, _)`), from the result's
tables, so what a learner sees is exactly what the CLI's JSON holds. Tables hold codes
(session indexes, "own", "fresh", verdict codes); the figures show them through `_`, a
Words or plain `str`, with the labels below.
"""
from __future__ import annotations

import pandas as pd
import plotly.graph_objects as go

from app.charts import palette
from app.i18n import N_, Translate
from app.text.verdicts import VERDICT_WORDS

READ_COLOURS = {"own": palette.GOOD, "fresh": palette.SKY_BLUE, "refused": palette.BAD, "unknown": palette.GREY}
READ_LABELS = {"own": N_("own state"), "fresh": N_("fresh state"), "refused": N_("refused"), "unknown": N_("unknown")}
SYMBOL_LABELS = {True: N_("right letter"), False: N_("wrong letter")}
VERDICT_COLOURS = {"intact": palette.GOOD, "lost": palette.ORANGE, "foreign": palette.REDDISH_PURPLE, "garbage": palette.BLACK,
                   "error": palette.BAD}
SESSION = N_("session {number}")  # the same words as app/i18n/formats.session


def session_name(index: int, _: Translate = str) -> str:
    """A 0-based session index as people count it, in _'s language: 'session 3'."""
    return _(SESSION).format(number=int(index) + 1)


def session_names(frame: pd.DataFrame, _: Translate = str) -> pd.Series:
    """session_name of every row's "session", for a figure's axis or legend."""
    return frame["session"].map(lambda i: session_name(i, _))


def symbol_words(right: pd.Series, _: Translate = str) -> pd.Series:
    """True/False (the chunk's letter was right) as words for a figure's symbol legend."""
    return right.map(lambda r: _(SYMBOL_LABELS[bool(r)]))


def verdict_name(code: str, _: Translate = str) -> str:
    """A verdict code (app/recogniser/engine/judgement/verdicts.py) as a word, for figures."""
    return _(VERDICT_WORDS.get(str(code), str(code)))


def verdict_colours(_: Translate = str) -> dict[str, str]:
    """VERDICT_COLOURS keyed by the verdicts' words in _'s language."""
    return {verdict_name(code, _): colour for code, colour in VERDICT_COLOURS.items()}


def layout(fig: go.Figure, height: int = 320) -> go.Figure:
    fig.update_layout(height=height, margin=dict(l=10, r=10, t=40, b=10), legend_title_text="")
    return palette.finish(fig)
