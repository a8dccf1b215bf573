"""The figure kit every feature's charts share (no Streamlit): Chart (caption, figure, summary), render, listed
and sentences for a summary's words, session colours and the empty figure.

Every builder takes `_`, the reader's Words (app/i18n), and passes each title, axis title,
legend entry, category name and hover label through it; the default `str` keeps English.
Each chart's summary says its message in a sentence, for a learner who cannot tell its colours apart
or uses a screen reader; the pages show it under the chart (app/ui/chart.py). Its words are its feature's own
(the recogniser's app/recogniser/words/charts.py, say); how they list things: app/text/lists.py.
The recogniser's run figures are app/recogniser/figures.py; the generator's app/generation/figures.py.
"""
from __future__ import annotations

from collections.abc import Iterable
from typing import NamedTuple

import plotly.graph_objects as go

from app.charts import palette
from app.i18n import Translate, words
from app.text import lists as list_words

WRONG_COLOUR = palette.BAD
# Beyond this many sessions a legend entry per session would outgrow the chart: hover names them.
LEGEND_SESSIONS = 16


def render(_: Translate, template: str, **values: object) -> str:
    """Fill a {name:kind} template in _'s language; with `_=str`, in English."""
    own = getattr(_, "render", None)  # a Words
    if own is not None:
        return str(own(template, **values))
    return words().render(_(template), **values)


class Chart(NamedTuple):
    """A figure with its caption (a heading) and its summary: the chart's message in words."""

    caption: str
    figure: go.Figure
    summary: str


def listed(items: Iterable[object], _: Translate = str, limit: int = 8, clauses: bool = False) -> str:
    """Items in a sentence, in _'s language: 'session 2, session 5' (past `limit`, 'and 3 more');
    `clauses` (items that hold commas of their own) are set apart by semicolons."""
    shown = [str(i) for i in items]
    joined = _(list_words.CLAUSE_SEPARATOR if clauses else list_words.LIST_SEPARATOR).join(shown[:limit])
    return render(_, list_words.MORE, list=joined, n=len(shown) - limit) if len(shown) > limit else joined


def sentences(*parts: str) -> str:
    """Sentences of a summary, one after another: after a full stop of its own (。) a language puts no space."""
    out = ""
    for part in (p for p in parts if p):
        out += part if not out or out.endswith(("。", "！", "？")) else " " + part
    return out



def session_colour(session: int) -> str:
    return palette.session_colour(session)


def empty_figure(title: str, message: str) -> go.Figure:  # both already in the reader's language
    fig = go.Figure()
    fig.update_layout(title=title, height=220, xaxis_visible=False, yaxis_visible=False)
    fig.add_annotation(text=message, showarrow=False, x=0.5, y=0.5, xref="paper", yref="paper")
    return palette.finish(fig)
