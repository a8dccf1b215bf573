"""Live elements of lessons 1 and 2: the stateless sentiment model, singles vs concurrency."""
from __future__ import annotations

from typing import TYPE_CHECKING

import pandas as pd
import streamlit as st

from app.i18n import N_
from app.live.common.view import explained_failures, store, stored
from app.live.sentiment import engine as sentiment
from app.live.sentiment import figures
from app.live.sentiment import words as sentiment_words
from app.ui import chart
from app.ui.language import _, t
from app.ui.progress import run_with_progress

if TYPE_CHECKING:
    from app.lab.deployment import Deployer
    from app.lab.server import LabServer


def batch_vs_single(server: LabServer, deployer: Deployer) -> None:
    st.markdown(_("Send the same reviews to `sentiment` **one at a time**, then **all at once**, and compare."))
    cols = st.columns(2)
    count = cols[0].slider(_("Reviews"), 16, 128, 64, step=16, key="bvs-count")
    concurrency = cols[1].slider(_("Callers at once (second run)"), 2, 32, 16, key="bvs-concurrency")
    if st.button(_("Run both"), key="bvs-run", type="primary"):
        texts = sentiment.reviews(count, seed=1)
        with explained_failures():
            single = run_with_progress(lambda p: sentiment.send(server, texts, 1, progress=p), _("One at a time"))
            many = run_with_progress(lambda p: sentiment.send(server, texts, concurrency, progress=p),
                                     t().render(N_("{concurrency:count} at once"), concurrency=concurrency))
            store("batch_vs_single", [single, many])
    runs = stored("batch_vs_single")
    if not runs:
        return
    words = t()
    run_cols = st.columns(len(runs))
    for col, run in zip(run_cols, runs, strict=True):
        srv = run.server
        col.metric(sentiment_words.mode(run, words), words.render(N_("{rate:count} reviews/s"), rate=round(run.throughput)),
                   help=words.render(N_("{n:count} reviews in {wall:ms}"), n=len(run.scores), wall=run.wall_s * 1000))
        col.caption(words.render(
            N_("{executions:count} model executions for {requests:count} requests (mean batch {batch:number})"),
            executions=srv.get("execution_count", 0), requests=srv.get("inference_count", 0),
            batch=srv.get("mean_executed_batch", 0)))
    left, right = st.columns(2)
    chart.show(figures.throughput(runs, _=words), figures.throughput_summary(runs, _=words), key="bvs-throughput",
               where=left, width="stretch")
    chart.show(figures.server_batches(runs, _=words), figures.server_batches_summary(runs, _=words), key="bvs-batches",
               where=right, width="stretch")
    agreement = sentiment.agreement(runs)
    if agreement.identical:
        st.success(_("Every review got the same label both ways: grouping changed the speed, not the answers."))
    else:
        st.error(words.render(N_("The answers differed between the runs (largest score difference {diff:text})."),
                              diff=f"{agreement.max_score_diff:.1e}"))


def dynamic_batching_demo(server: LabServer, deployer: Deployer) -> None:
    st.markdown(_(
        "Fire reviews at `sentiment` from many callers at once, twice, in **two different arrival orders**. "
        "The dynamic batcher groups whatever is waiting; each caller must still get its own answer."
    ))
    cols = st.columns(3)
    count = cols[0].slider(_("Reviews"), 16, 128, 64, step=16, key="dbd-count")
    concurrency = cols[1].slider(_("Callers at once"), 1, 32, 16, key="dbd-concurrency")
    seed = cols[2].number_input(_("Shuffle seed"), 0, 9999, 3, key="dbd-seed")
    if st.button(_("Run twice"), key="dbd-run", type="primary"):
        texts = sentiment.reviews(count, seed=2)
        with explained_failures():
            first = run_with_progress(
                lambda p: sentiment.send(server, texts, concurrency, mode=sentiment.IN_ORDER, progress=p), _("In order"))
            second = run_with_progress(
                lambda p: sentiment.send(server, texts, concurrency, order=sentiment.shuffled(count, int(seed)),
                                          mode=sentiment.SHUFFLED, progress=p), _("Shuffled"))
            store("dynamic_batching_demo", (texts, [first, second]))
    saved = stored("dynamic_batching_demo")
    if not saved:
        return
    texts, runs = saved
    words = t()
    chart.show(figures.server_batches(runs, _=words), figures.server_batches_summary(runs, _=words), key="dbd-batches",
               width="stretch")
    run_cols = st.columns(len(runs))
    for col, run in zip(run_cols, runs, strict=True):
        col.metric(words.render(N_("{mode:text}: mean queue wait"), mode=sentiment_words.mode(run, words)),
                   words.render("{wait:ms}", wait=run.server.get("mean_queue_us", 0) / 1000),
                   help=_("Server statistics: the mean time from a request's entry into the scheduler to the start of its "
                           "execution, waiting for its batch to form and for a free instance included"))
    agreement = sentiment.agreement(runs)
    if agreement.identical:
        st.success(words.render(
            N_("Identical results in both arrival orders: every label the same, {scores:text}. "
               "Batches formed differently; answers did not."),
            scores=sentiment_words.diff(agreement.max_score_diff, words)))
    else:
        st.error(words.render(N_("Results differ between arrival orders (largest score difference {diff:text})."),
                              diff=f"{agreement.max_score_diff:.1e}"))
    table = pd.DataFrame(
        {
            _("review"): texts,
            **{words.render(N_("label ({mode:text})"), mode=sentiment_words.mode(r, words)):
               [sentiment_words.label(x, words) for x in r.labels] for r in runs},
            **{words.render(N_("score ({mode:text})"), mode=sentiment_words.mode(r, words)): r.scores.round(4) for r in runs},
        }
    )
    st.dataframe(table.head(12), hide_index=True, width="stretch")
