"""The Presenter's figures: the class vote's histogram and its words, in projector-size type."""
from __future__ import annotations

from collections.abc import Callable, Sequence

import plotly.graph_objects as go

from app.charts import palette
from app.charts.figures import listed, sentences
from app.i18n import N_, Words
from app.presenter.words import CHART_SUMMARIES as SUMMARIES
from app.recogniser.words import prediction as prediction_words

RIGHT_COLOUR, WRONG_COLOUR, VOTE_COLOUR = palette.GOOD, palette.GREY, palette.BLUE
FONT = 22  # figure type on a projector


def wrap(text: str, width: int = 24) -> str:
    """Break a long label onto lines (plotly's <br>) so it fits beside the bars in projector type.
    Chinese (no word spaces) is cut every `width` // 2 characters, as each character is twice as wide."""
    if any("\u4e00" <= c <= "\u9fff" for c in text):
        step = max(1, width // 2)
        return "<br>".join(text[i:i + step].strip() for i in range(0, len(text), step))
    lines, line = [], ""
    for word in text.split(" "):
        if line and len(line) + 1 + len(word) > width:
            lines.append(line)
            line = word
        else:
            line = f"{line} {word}" if line else word
    lines.append(line)
    return "<br>".join(lines)


Label = Callable[[str, Words], str]  # an option code in the reader's words


def votes_figure(options: Sequence[str], tally: dict[str, int], words: Words, right: tuple[str, ...] | None = None,
                 label: Label = prediction_words.choice) -> go.Figure:
    """One bar per option (every option, even unchosen ones); after the reveal the right ones are green."""
    labels = [wrap(label(o, words)) for o in options]
    counts = [int(tally.get(o, 0)) for o in options]
    colours = [VOTE_COLOUR if right is None else RIGHT_COLOUR if o in right else WRONG_COLOUR for o in options]
    hatched = ["/" if right is not None and o not in right else "" for o in options]  # wrong ones: not by colour alone
    fig = go.Figure(go.Bar(x=counts, y=labels, orientation="h", marker_color=colours, marker_pattern_shape=hatched, text=counts,
                           textposition="auto", textfont={"size": FONT + 6},
                           hovertemplate="%{y}: %{x}<extra></extra>"))
    total = sum(counts)
    fig.update_layout(
        title=words.render(N_("Votes: {n:count}"), n=total), font={"size": FONT},
        height=120 + 95 * len(options), margin={"l": 10, "r": 20, "t": 70, "b": 40},
        yaxis={"autorange": "reversed", "automargin": True}, xaxis={"rangemode": "tozero", "dtick": 1 if total <= 10 else None},
    )
    return palette.finish(fig)


def votes_summary(options: Sequence[str], tally: dict[str, int], words: Words, right: tuple[str, ...] | None = None,
                  label: Label = prediction_words.choice) -> str:
    """What votes_figure shows, in words: the votes for each option and, after the reveal, the right ones."""
    counts = [(label(o, words), int(tally.get(o, 0))) for o in options]
    told = words.render(SUMMARIES["votes"], n=sum(n for _o, n in counts),
                        options=listed([words.render(SUMMARIES["votes_item"], option=o, n=n) for o, n in counts], words))
    if right is None:
        return told
    named = [label(o, words) for o in options if o in right]
    return sentences(told, words.render(SUMMARIES["votes_right"], options=listed(named, words))) if named else told
