"""Lesson 9's live element on its page: pick the blocks and prefix sharing, predict how many requests
run at once, run the seeded workload on the paged engine, and see what the engine reported.

The runs are engine.py's, the words words.py's, the figure figures.py's; this only draws them."""
from __future__ import annotations

from typing import TYPE_CHECKING

import pandas as pd
import streamlit as st

from app.generation import words as gen_words
from app.generation.paged.lesson import engine, figures, words
from app.i18n import formats
from app.live.common.view import explained_failures, store, stored
from app.ui import chart, language
from app.ui.language import _, t
from app.ui.progress import run_with_progress

if TYPE_CHECKING:
    from app.lab.deployment import Deployer
    from app.lab.server import LabServer

P = "kvm-"  # widget keys
KEY = "kv_memory"  # its name in app/registry/live.py, and where its result is kept


def kv_memory(server: LabServer, deployer: Deployer) -> None:
    del deployer  # the paged engine's deployments load through app/generation/paged/engine
    said = t()
    st.markdown(_(words.INTRO))
    left, right = st.columns(2)
    blocks = int(left.select_slider(_(words.BLOCKS), options=list(engine.BLOCK_CHOICES),
                                    value=engine.BLOCK_CHOICES[0], key=f"{P}blocks"))
    left.caption(said.render(words.BLOCKS_HELP, blocks=blocks, tokens=blocks * engine.BLOCK_SIZE,
                             bytes=blocks * engine.BLOCK_SIZE * 512))
    sharing = bool(right.toggle(_(words.SHARING), value=True, key=f"{P}sharing"))
    predicted = language.choice(st.radio, "**" + _("Predict:") + "** " + _(words.QUESTION), list(engine.BANDS),
                                index=None, format_func=lambda k: said(words.BANDS[k]), key=f"{P}predict")
    if st.button(_(words.RUN), key=f"{P}run", type="primary", disabled=predicted is None):
        with explained_failures(wording=gen_words.PROBLEMS):
            store(KEY, (predicted, run_with_progress(
                lambda p: engine.run_lesson(server, blocks, sharing, progress=p, on_wait=p.wait), _(words.RUNNING))))
    if predicted is None:
        st.caption(_("Make a prediction first."))
    saved = stored(KEY)
    if saved:
        _show(*saved)


def _show(predicted: str, done: engine.LessonRun) -> None:
    said = t()
    numbers = done.figures
    values = dict(said=said(words.BANDS[predicted]), seen=said(words.BANDS[done.seen]), peak=numbers.peak_running)
    if predicted == done.seen:
        st.success(said.render(words.HELD, **values))
    else:
        st.warning(said.render(words.NOT_HELD, **values))
    st.markdown("**" + said.render(words.SETUP, blocks=done.blocks, sharing=done.sharing) + "**")
    cells = st.columns(5)
    cells[0].metric(said(words.METRICS["peak_running"]), formats.count(numbers.peak_running, said))
    cells[1].metric(said(words.METRICS["peak_waiting"]), formats.count(numbers.peak_waiting, said))
    cells[2].metric(said(words.METRICS["ttft_p50_ms"]), formats.ms(numbers.ttft_p50_ms, said))
    cells[3].metric(said(words.METRICS["ttft_p95_ms"]), formats.ms(numbers.ttft_p95_ms, said))
    cells[4].metric(said(words.METRICS["prefix"]), said.render(words.PREFIX_VALUE, reused=numbers.prefix_blocks_reused,
                                                                 possible=numbers.prefix_blocks_possible))
    chart.show(figures.steps(done.steps, done.blocks, said), figures.steps_summary(done.steps, done.blocks, said),
               key=f"{P}steps", width="stretch")
    st.caption(_(words.STEPS_CAPTION))
    if numbers.complete == numbers.requests:
        st.info(said.render(words.COMPLETE, n=numbers.requests))
    else:
        st.error(said.render(words.INCOMPLETE, done=numbers.complete, n=numbers.requests))
    st.dataframe(_request_table(done.requests), hide_index=True, width="stretch", key=f"{P}requests")


def _request_table(requests: pd.DataFrame) -> pd.DataFrame:
    """One row per request, in the learner's language: arrival, prompt, answer, first step and first token."""
    table = pd.DataFrame({
        _("request"): requests["index"].astype(int) + 1,
        _("arrives (ms)"): (requests["arrival_s"] * 1000).round().astype(int),
        _("prompt tokens"): requests["prompt_tokens"].astype(int),
        _("tokens"): requests["tokens"].astype(int),
        _("first engine step"): requests["first_step"].astype(int),
        _("first token (ms)"): requests["ttft_ms"].round().astype("Int64"),
        _("prefix blocks from the cache"): requests["prefix_blocks"].astype(int),
    })
    return table
