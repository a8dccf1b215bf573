"""Presenter-mode pieces: projector-size type, the config diff, the vote histogram, the join link, and the demos of
both families (the recogniser's, app/lab/cases/demos.py; the generator's, app/generation/demo.py) by name, with
their titles, questions and options in the reader's words."""
from __future__ import annotations

import html
from collections.abc import Callable, Sequence
from urllib.parse import urlencode

import plotly.graph_objects as go
import streamlit as st

from app.charts import palette
from app.charts.figures import listed, sentences
from app.generation import demo as gen_demo
from app.generation import words as gen_words
from app.i18n import N_, Words
from app.lab.cases import demos
from app.lab.cases.demos import DiffLine
from app.text import demos as demo_words
from app.text import prediction as prediction_words
from app.text.charts import CHART_SUMMARIES as SUMMARIES

ROOT = "presenter"  # the key of the container whose type is projector-size
RIGHT_COLOUR, WRONG_COLOUR, VOTE_COLOUR = palette.GOOD, palette.GREY, palette.BLUE
FONT = 22  # figure type on a projector

CSS = f"""
<style>
.st-key-{ROOT} p, .st-key-{ROOT} li {{ font-size: 1.6rem; line-height: 1.45; }}
.st-key-{ROOT} h1 {{ font-size: 3.2rem; }}
.st-key-{ROOT} h2 {{ font-size: 2.5rem; }}
.st-key-{ROOT} h3 {{ font-size: 2.0rem; }}
.st-key-{ROOT} [data-testid="stWidgetLabel"] p {{ font-size: 1.35rem; }}
.st-key-{ROOT} [data-testid="stMetricValue"], .st-key-{ROOT} [data-testid="stMetricValue"] * {{ font-size: 3.4rem; }}
.st-key-{ROOT} [data-testid="stMetricLabel"] p {{ font-size: 1.5rem; }}
.st-key-{ROOT} button p {{ font-size: 1.35rem; }}
.st-key-{ROOT} .presenter-code {{ font-family: ui-monospace, monospace; font-size: min(8rem, 10vw); font-weight: 800;
  letter-spacing: 0.12em; line-height: 1.1; white-space: nowrap; }}
.st-key-{ROOT} .presenter-diff {{ font-family: ui-monospace, monospace; font-size: 1.55rem; line-height: 1.35;
  border: 1px solid #ccc; border-radius: 6px; padding: 0.6rem 0; overflow-x: auto; }}
.st-key-{ROOT} .presenter-diff div {{ white-space: pre; padding: 0 0.8rem; }}
.st-key-{ROOT} .presenter-diff .removed {{ background: #ffdcdc; color: #8a0000; }}
.st-key-{ROOT} .presenter-diff .added {{ background: #d8f5dd; color: #0b5d1e; font-weight: 700; }}
.st-key-{ROOT} .presenter-diff .context, .st-key-{ROOT} .presenter-diff .gap {{ color: #666; }}
</style>
"""


RECOGNISER = "recogniser"
DEMO_NAMES = (*demos.DEMOS, *gen_demo.DEMOS)  # the presenter's choice, in order


def family(name: str | None) -> str:
    """Which family a demo name belongs to: the generator's, or the recogniser's (an unknown name falls back to
    the recogniser's default demo, as demos.get does)."""
    return gen_demo.FAMILY if name in gen_demo.DEMOS else RECOGNISER


def known(name: str | None) -> str:
    """The demo a name (from a link or a poll) stands for: itself, or the recogniser's default."""
    return name if name is not None and family(name) == gen_demo.FAMILY else demos.get(name).name


def demo_options(name: str) -> tuple[str, ...]:
    """The option codes the class votes on in that demo."""
    return gen_demo.DEMOS[name].options if family(name) == gen_demo.FAMILY else demos.get(name).options


def demo_title(name: str, words: Words) -> str:
    return words(gen_words.DEMO_TITLES[name]) if family(name) == gen_demo.FAMILY else demo_words.title(name, words)


def demo_question(name: str, words: Words) -> str:
    return words(gen_words.QUESTIONS[gen_demo.KIND]) if family(name) == gen_demo.FAMILY else demo_words.question(name, words)


def option_label(name: str, option: str, words: Words) -> str:
    """A vote option of that demo, in the reader's words."""
    if family(name) == gen_demo.FAMILY:
        return words(gen_words.ANSWERS[gen_demo.KIND][option])
    return prediction_words.choice(option, words)


def projector_type() -> None:
    """The page's large type (scoped to the container keyed ROOT)."""
    st.html(CSS)


def diff_html(lines: list[DiffLine]) -> str:
    marks = {"removed": "−", "added": "+", "context": " ", "gap": " "}
    # Each line's text is config, marked as code for readers (and tools) that tell code from prose.
    rows = "".join(f'<div class="{d.kind}">{marks[d.kind]} <code>{html.escape(d.text)}</code></div>' for d in lines)
    return f'<div class="presenter-diff">{rows}</div>'


def code_html(code: str) -> str:
    return f'<div class="presenter-code">{html.escape(code)}</div>'


def join_link(code: str) -> str:
    """The learner page's address with this code; absolute when the browser's host is known."""
    path = "demo?" + urlencode({"code": code})
    try:
        headers = st.context.headers
        host = headers.get("Host")
        proto = headers.get("X-Forwarded-Proto") or "http"
    except Exception:  # no browser (AppTest)
        host = None
    return f"{proto}://{host}/{path}" if host else "/" + path


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
