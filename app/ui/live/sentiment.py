"""Live elements of lessons 1 and 2: the stateless sentiment model, singles vs concurrency."""
from __future__ import annotations

import pandas as pd
import streamlit as st

from app.lab import figures, sentiment
from app.ui.live.common import explained_failures, store, stored
from app.ui.progress import run_with_progress


def batch_vs_single(server, deployer) -> None:
    st.markdown("Send the same reviews to `sentiment` **one at a time**, then **all at once**, and compare.")
    cols = st.columns(2)
    count = cols[0].slider("Reviews", 16, 128, 64, step=16, key="bvs-count")
    concurrency = cols[1].slider("Callers at once (second run)", 2, 32, 16, key="bvs-concurrency")
    if st.button("Run both", key="bvs-run", type="primary"):
        texts = sentiment.reviews(count, seed=1)
        with explained_failures():
            single = run_with_progress(lambda p: sentiment.send(server, texts, 1, progress=p), "One at a time")
            many = run_with_progress(lambda p: sentiment.send(server, texts, concurrency, progress=p), f"{concurrency} at once")
            store("batch_vs_single", [single, many])
    runs = stored("batch_vs_single")
    if not runs:
        return
    cols = st.columns(len(runs))
    for col, run in zip(cols, runs):
        srv = run.server
        col.metric(run.mode, f"{run.throughput:.0f} reviews/s", help=f"{len(run.scores)} reviews in {run.wall_s * 1000:.0f} ms")
        col.caption(
            f"{srv.get('execution_count', 0)} model executions for {srv.get('inference_count', 0)} requests "
            f"(mean batch {srv.get('mean_executed_batch', 0):.1f})"
        )
    left, right = st.columns(2)
    left.plotly_chart(figures.throughput(runs), key="bvs-throughput", width="stretch")
    right.plotly_chart(figures.server_batches(runs), key="bvs-batches", width="stretch")
    agreement = sentiment.agreement(runs)
    if agreement.identical:
        st.success("Every review got the same label both ways: grouping changed the speed, not the answers.")
    else:
        st.error(f"The answers differed between the runs (largest score difference {agreement.max_score_diff:.1e}).")


def dynamic_batching_demo(server, deployer) -> None:
    st.markdown(
        "Fire reviews at `sentiment` from many callers at once, twice, in **two different arrival orders**. "
        "The dynamic batcher groups whatever is waiting; each caller must still get its own answer."
    )
    cols = st.columns(3)
    count = cols[0].slider("Reviews", 16, 128, 64, step=16, key="dbd-count")
    concurrency = cols[1].slider("Callers at once", 1, 32, 16, key="dbd-concurrency")
    seed = cols[2].number_input("Shuffle seed", 0, 9999, 3, key="dbd-seed")
    if st.button("Run twice", key="dbd-run", type="primary"):
        texts = sentiment.reviews(count, seed=2)
        with explained_failures():
            first = run_with_progress(
                lambda p: sentiment.send(server, texts, concurrency, mode="in order", progress=p), "In order")
            second = run_with_progress(
                lambda p: sentiment.send(server, texts, concurrency, order=sentiment.shuffled(count, int(seed)),
                                          mode="shuffled", progress=p), "Shuffled")
            store("dynamic_batching_demo", (texts, [first, second]))
    saved = stored("dynamic_batching_demo")
    if not saved:
        return
    texts, runs = saved
    st.plotly_chart(figures.server_batches(runs), key="dbd-batches", width="stretch")
    cols = st.columns(len(runs))
    for col, run in zip(cols, runs):
        col.metric(f"{run.mode}: mean queue wait", f"{run.server.get('mean_queue_us', 0) / 1000:.2f} ms",
                   help="Server statistics: time each request waited for its batch to form")
    agreement = sentiment.agreement(runs)
    if agreement.identical:
        scores = sentiment.describe_diff(agreement.max_score_diff)
        st.success(
            f"Identical results in both arrival orders: every label the same, {scores}. "
            "Batches formed differently; answers did not."
        )
    else:
        st.error(f"Results differ between arrival orders (largest score difference {agreement.max_score_diff:.1e}).")
    table = pd.DataFrame(
        {
            "review": texts,
            **{f"label ({r.mode})": ["positive" if x else "negative" for x in r.labels] for r in runs},
            **{f"score ({r.mode})": r.scores.round(4) for r in runs},
        }
    )
    st.dataframe(table.head(12), hide_index=True, width="stretch")
