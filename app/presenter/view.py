"""Presenter-mode pieces the Presenter's page and the learners' vote page share: projector-size type, the config
diff, the join link, and the demos of every family (the recogniser's, app/recogniser/demo.py; the generator's,
app/generation/demo.py; the paged engine's, app/generation/paged/demo.py) by name, with their titles, questions and options in the reader's words. The vote
histogram is in app/presenter/figures.py."""
from __future__ import annotations

import html
from urllib.parse import urlencode

import streamlit as st

from app.generation import demo as gen_demo
from app.generation import words as gen_words
from app.generation.paged import demo as kv_demo
from app.generation.paged import words as kv_words
from app.i18n import Words
from app.lab.deployment import DiffLine
from app.recogniser import demo as demos
from app.recogniser.words import demo as rec_demo_words
from app.recogniser.words import prediction as prediction_words

ROOT = "presenter"  # the key of the container whose type is projector-size

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
DEMO_NAMES = (*demos.DEMOS, *gen_demo.DEMOS, *kv_demo.DEMOS)  # the presenter's choice, in order


def family(name: str | None) -> str:
    """Which family a demo name belongs to: the generator's, the paged engine's, or the recogniser's (an unknown
    name falls back to the recogniser's default demo, as demos.get does)."""
    if name in gen_demo.DEMOS:
        return gen_demo.FAMILY
    return kv_demo.FAMILY if name in kv_demo.DEMOS else RECOGNISER


def known(name: str | None) -> str:
    """The demo a name (from a link or a poll) stands for: itself, or the recogniser's default."""
    return name if name is not None and family(name) != RECOGNISER else demos.get(name).name


def demo_options(name: str) -> tuple[str, ...]:
    """The option codes the class votes on in that demo."""
    if family(name) == gen_demo.FAMILY:
        return gen_demo.DEMOS[name].options
    return kv_demo.DEMOS[name].options if family(name) == kv_demo.FAMILY else demos.get(name).options


def demo_title(name: str, words: Words) -> str:
    if family(name) == gen_demo.FAMILY:
        return words(gen_words.DEMO_TITLES[name])
    return words(kv_words.DEMO_TITLES[name]) if family(name) == kv_demo.FAMILY else rec_demo_words.title(name, words)


def demo_question(name: str, words: Words) -> str:
    if family(name) == gen_demo.FAMILY:
        return words(gen_words.QUESTIONS[gen_demo.KIND])
    return words(kv_words.QUESTIONS[kv_demo.KIND]) if family(name) == kv_demo.FAMILY else rec_demo_words.question(name, words)


def option_label(name: str, option: str, words: Words) -> str:
    """A vote option of that demo, in the reader's words."""
    if family(name) == gen_demo.FAMILY:
        return words(gen_words.ANSWERS[gen_demo.KIND][option])
    if family(name) == kv_demo.FAMILY:
        return words(kv_words.ANSWERS[kv_demo.KIND][option])
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
