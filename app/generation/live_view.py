"""Live element of lesson 8: the same workload under static and in-flight batching, predicted first.

The runs, the answer key and the words are app/generation/live.py's; the figure is the generation lab's
(app/generation/figures.latencies); this draws them."""
from __future__ import annotations

from typing import TYPE_CHECKING

import streamlit as st

from app.generation import figures, runs
from app.generation import live as gen_live
from app.generation import words as gen_words
from app.i18n import formats
from app.live.common.view import explained_failures, store, stored
from app.ui import chart, language
from app.ui.language import _, t
from app.ui.progress import run_with_progress

if TYPE_CHECKING:
    from app.lab.deployment import Deployer
    from app.lab.server import LabServer

P = "gif-"  # widget keys


def generation_in_flight(server: LabServer, deployer: Deployer) -> None:
    del deployer  # the generator's shipped deployments load through app/generation/runs.py
    words = t()
    st.markdown(_(gen_live.INTRO))
    predicted = {
        question: language.choice(st.radio, "**" + _("Predict:") + "** " + _(text), list(gen_live.ANSWERS), index=None,
                                  format_func=lambda k: words(gen_live.ANSWERS[k]), key=f"{P}predict-{question}")
        for question, text in gen_live.QUESTIONS.items()
    }
    ready = all(v is not None for v in predicted.values())
    if st.button(_("Run both"), key=f"{P}run", type="primary", disabled=not ready):
        with explained_failures(wording=gen_words.PROBLEMS):
            store("generation_in_flight", (predicted, run_with_progress(
                lambda p: gen_live.run_both(server), _("Generating"))))
    if not ready:
        st.caption(_("Make a prediction first."))
    saved = stored("generation_in_flight")
    if not saved:
        return
    said, done = saved
    _show(said, done)


def _show(said: dict[str, str], done: list[runs.GenRun]) -> None:
    words = t()
    for question, answer in gen_live.seen(done).items():
        values = dict(said=words(gen_live.ANSWERS[said[question]]), seen=words(gen_live.ANSWERS[answer]))
        if said[question] == answer:
            st.success(words.render(gen_live.HELD, **values))
        else:
            st.warning(words.render(gen_live.NOT_HELD, **values))
    for column, run in zip(st.columns(len(done)), done, strict=True):
        with column:
            st.markdown(f"**{figures.mode_name(run.mode, words)}** (`{run.model}`)")
            numbers = run.numbers
            help_text = words.render(gen_live.METRICS_HELP, executions=numbers["executions"], passes=numbers["passes"])
            inner = st.columns(2)
            inner[0].metric(words(gen_live.METRICS["ttft_p50_ms"]), formats.ms(numbers["ttft_p50_ms"], words))
            inner[1].metric(words(gen_live.METRICS["e2e_p50_ms"]), formats.ms(numbers["e2e_p50_ms"], words))
            inner[0].metric(words(gen_live.METRICS["tokens_per_s"]), formats.number(numbers["tokens_per_s"], words))
            inner[1].metric(words(gen_live.METRICS["mean_fill"]), formats.percent(numbers["mean_fill"], words),
                            help=help_text)
    requests = runs.joined(done)["requests"]
    chart.show(figures.latencies(requests, words), figures.latencies_summary(requests, words), key=f"{P}latencies",
               width="stretch")
    st.dataframe(gen_live.streams(done, words), hide_index=True, width="stretch", key=f"{P}streams")
    st.caption(_(gen_live.STREAMS_CAPTION))
