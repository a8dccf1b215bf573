"""The class's choices on one quiz item, as a bar per option (no Streamlit).

Takes plain lists (the page puts each option's words together, app/quiz/item_analysis.py counts
the choices), so the chart knows nothing of the bank. Right options are drawn in the green that
marks intact transcripts, wrong ones in the red of a wrong letter: a long red bar is the
misconception to talk about. option_counts_summary says it in words.
"""
from __future__ import annotations

from collections.abc import Sequence

import plotly.graph_objects as go

from app.charts import palette
from app.charts.figures import WRONG_COLOUR, render, sentences
from app.charts.plots import VERDICT_COLOURS
from app.i18n import N_, Translate

RIGHT_COLOUR = VERDICT_COLOURS["intact"]
# The chart's message in a sentence beside it, read off the chart. Here, beside the chart, as the quiz has no
# words module this layer may import (app.quiz and app.charts are independent of each other).
SUMMARIES = {
    "options": N_("Answered by {n:count}; choices of a right option: {right:count}, of a wrong one: {wrong:count}."),
    "options_wrong": N_("The wrong option chosen most: “{option:text}” ({n:count})."),
}


def option_counts(labels: Sequence[str], counts: Sequence[int], correct: Sequence[bool], answered: int,
                  _: Translate = str, font_size: int | None = None) -> go.Figure:
    """One horizontal bar per option, in the bank's order (every option, chosen or not).

    labels: the options as the reader reads them; counts: how many chose each; correct: which are
    right; answered: how many answered the item (a multiple-choice answer may choose several).
    """
    if not len(labels) == len(counts) == len(correct):
        raise ValueError("labels, counts and correct must be equally long")
    counts = [int(n) for n in counts]
    right, wrong = _("right answer"), _("wrong answer")
    fig = go.Figure(go.Bar(
        x=counts, y=list(labels), orientation="h", text=counts, textposition="auto",
        marker_color=[RIGHT_COLOUR if c else WRONG_COLOUR for c in correct],
        marker_pattern_shape=["" if c else "/" for c in correct],  # wrong ones hatched: not by colour alone
        customdata=[right if c else wrong for c in correct],
        hovertemplate="%{y}: %{x} (%{customdata})<extra></extra>",
    ))
    layout = dict(
        title=render(_, N_("Answered by {n:count}; bars: how many chose each option"), n=answered),
        height=120 + 70 * len(labels), margin={"l": 10, "r": 20, "t": 60, "b": 40},
        yaxis={"autorange": "reversed", "automargin": True},
        xaxis={"rangemode": "tozero", "dtick": 1 if max(counts, default=0) <= 10 else None,
               "title": _("learners who chose it")},
    )
    if font_size:
        layout["font"] = {"size": font_size}
    fig.update_layout(**layout)
    return palette.finish(fig)


def option_counts_summary(labels: Sequence[str], counts: Sequence[int], correct: Sequence[bool], answered: int,
                          _: Translate = str) -> str:
    """What option_counts shows, in words: how often right and wrong options were chosen, and the wrong
    option chosen most (the misconception to talk about). Labels as the chart gets them (<br> breaks read as spaces)."""
    counts = [int(n) for n in counts]
    right = sum(n for n, c in zip(counts, correct, strict=True) if c)
    wrong = [(n, label) for n, label, c in zip(counts, labels, correct, strict=True) if not c and n > 0]
    told = render(_, SUMMARIES["options"], n=answered, right=right, wrong=sum(n for n, _label in wrong))
    if not wrong:
        return told
    n, label = max(wrong, key=lambda pair: pair[0])
    return sentences(told, render(_, SUMMARIES["options_wrong"], option=" ".join(label.split("<br>")), n=n))
