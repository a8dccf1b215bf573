"""Charts and tables of one recogniser run, shared by the live lab and the lessons."""
from __future__ import annotations

import streamlit as st

from app.lab import analysis, figures


ROWS_MEANING = {
    "direct": "Under direct a session keeps its slot for life, so in a healthy run each row keeps one colour.",
    "oldest": "Under oldest a row is only a position in that batch: colours mix from one execution to the next, "
              "which is harmless only when the model keys state by correlation ID.",
    "dynamic": "Under the dynamic batcher any chunk may land in any row of any instance: colours mix, and a model "
               "that keeps state per row hands sessions each other's state.",
}


def timeline(result, settings=None, key: str = "slot-timeline", explain: bool = True) -> None:
    if settings is None:
        fig = figures.slot_timeline(result.requests)
    else:
        fig = figures.slot_timeline(result.requests, settings.scheduler, settings.instances, settings.slots)
    st.plotly_chart(fig, key=key, width="stretch")
    if explain:
        explain_timeline(settings.scheduler if settings else "direct")


def explain_timeline(*schedulers: str) -> None:
    meaning = " ".join(ROWS_MEANING.get(s, "") for s in schedulers)
    st.caption(
        "Each bar is one chunk while the model computed it, coloured by session. "
        f"{meaning} A red ▼ marks a letter that came back wrong. Grey hatched bars are "
        "rows with no request of this run (padding). The thin line under a row is the time that chunk waited in "
        "the queue. Hover a bar for its chunk, queue time, and whose state it read."
    )


def server_side(result, key_prefix: str = "lab") -> None:
    """Batch sizes, queue vs compute, and latency percentiles, from trace and server statistics."""
    left, right = st.columns(2)
    left.plotly_chart(figures.batch_sizes(result.server, result.requests), key=f"{key_prefix}-batches", width="stretch")
    right.plotly_chart(figures.queue_vs_compute(result.requests, result.server), key=f"{key_prefix}-queue", width="stretch")
    srv = result.server
    st.caption(
        f"Server statistics for this run: {srv.get('inference_count', 0)} requests in "
        f"{sum(srv.get('batch_sizes', {}).values())} model executions "
        f"(mean executed batch {srv.get('mean_executed_batch', 0):.2f}, padding rows included). "
        "Other learners' requests on the same deployment during the run are counted too."
    )
    st.plotly_chart(figures.latency_percentiles(result.requests, result.sessions), key=f"{key_prefix}-latency", width="stretch")
    table = analysis.latency_percentiles(result.requests, result.sessions)
    if not table.empty:
        st.dataframe(table.round(1), hide_index=True, width="stretch")
    st.caption(
        "Triton's statistics API and Prometheus metrics keep sums and counts, so they give the means shown "
        "above but no percentiles; the trace times every request, so its tail (p95, p99) shows the waits "
        "that a mean hides."
    )


def instance_work(result, key: str = "instance-work") -> None:
    st.plotly_chart(figures.instance_work(result.requests), key=key, width="stretch")
    table = analysis.instance_work(result.requests)
    if not table.empty:
        st.dataframe(table.round(2), hide_index=True, width="stretch")
