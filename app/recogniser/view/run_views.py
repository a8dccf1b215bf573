"""Charts and tables of one recogniser run, shared by the live lab and the lessons.

Each takes the run's analysis (analysed(result, settings)), so a page that shows several of them computes the
run's tables once for all its charts, their sentences and tables."""
from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

import pandas as pd
import streamlit as st

from app.i18n import N_
from app.recogniser import figures
from app.recogniser.engine.judgement import analysis
from app.recogniser.engine.judgement.analysis import RunAnalysis
from app.ui import chart
from app.ui.language import _, t

if TYPE_CHECKING:
    from app.lab.deployment import LabSettings
    from app.lab.records import RunResult

ROWS_MEANING = {
    "direct": N_("Under direct a session keeps its slot for life, so in a healthy run each row keeps one colour."),
    "oldest": N_("Under oldest a row is only a position in that batch: colours mix from one execution to the next, "
                 "which is harmless only when the model keys state by correlation ID."),
    "dynamic": N_("Under the dynamic batcher any chunk may land in any row of any instance: colours mix, and a model "
                  "that keeps state per row hands sessions each other's state."),
}
LATENCY_COLUMNS = {"length": N_("session length"), "source": N_("source"), "sessions": N_("sessions"),
                   "requests": N_("requests")}
QUANTILE_ROWS = {"request": N_("request"), "queue": N_("queue"), "compute": N_("compute")}
QUANTILE_COLUMNS = {"0.5": "p50", "0.9": "p90", "0.95": "p95", "0.99": "p99", "0.999": "p99.9"}
INSTANCE_COLUMNS = {"instance": N_("instance"), "requests": N_("requests"), "executions": N_("executions"),
                    "busy_ms": N_("busy (ms)"), "mean_batch": N_("mean batch"), "sessions": N_("sessions")}


def analysed(result: RunResult, settings: LabSettings | None = None) -> RunAnalysis:
    """The run's analysis on its deployment's instances x slots; without settings, on the rows the run used."""
    return analysis.of_run(result) if settings is None else analysis.of_run(result, settings.instances, settings.slots)


def timeline(run: RunAnalysis, scheduler: str = "direct", key: str = "slot-timeline", explain: bool = True) -> None:
    chart.show(figures.slot_timeline(run, scheduler, _=t()), figures.slot_timeline_summary(run, scheduler, _=t()),
               key=key, width="stretch")
    if explain:
        explain_timeline(scheduler)


def explain_timeline(*schedulers: str) -> None:
    meaning = " ".join(_(ROWS_MEANING[s]) for s in schedulers if s in ROWS_MEANING)
    st.caption(t().render(N_(
        "Each bar is one chunk while the model computed it, coloured by session. "
        "{meaning:text} A red ▼ marks a letter that came back wrong. Grey hatched bars are "
        "rows with no request of this run (padding). The thin line under a row is the time that chunk waited in "
        "the queue. Hover a bar for its chunk, queue time, and whose state it read."
    ), meaning=meaning))


def server_side(run: RunAnalysis, key_prefix: str = "lab") -> None:
    """Batch sizes, queue vs compute, and latency percentiles, from trace and server statistics."""
    left, right = st.columns(2)
    chart.show(figures.batch_sizes(run, _=t()), figures.batch_sizes_summary(run, _=t()), key=f"{key_prefix}-batches",
               where=left, width="stretch")
    chart.show(figures.queue_vs_compute(run, _=t()), figures.queue_vs_compute_summary(run, _=t()), key=f"{key_prefix}-queue",
               where=right, width="stretch")
    srv = run.server
    st.caption(t().render(N_(
        "Server statistics for this run: {requests:count} requests in {executions:count} model executions "
        "(mean executed batch {batch:number}, padding rows included). "
        "A run holds its deployment alone, so these are this run's requests only."
    ), requests=srv.get("inference_count", 0), executions=sum(srv.get("batch_sizes", {}).values()),
        batch=srv.get("mean_executed_batch", 0)))
    chart.show(figures.latency_percentiles(run, _=t()), figures.latency_percentiles_summary(run, _=t()),
               key=f"{key_prefix}-latency", width="stretch")
    table = latency_table(run)
    if not table.empty:
        st.dataframe(table, hide_index=True, width="stretch")
    st.caption(_(
        "The trace times every request of this run, so its tail (p95, p99) shows the waits that a mean hides. "
        "Triton's statistics API and its default Prometheus counters hold only sums and counts, hence means."
    ))
    triton_quantiles(run.server)


def triton_quantiles(server: dict[str, Any]) -> None:
    """Triton's own latency quantiles, read from its Prometheus summaries when the run ended (the run's server deltas)."""
    found = server.get("triton_quantiles") or {}
    if not found:
        st.caption(_(
            "This server exports no latency quantiles of its own: Triton adds them only when started with "
            "--metrics-config=summary_latencies=true."
        ))
        return
    st.dataframe(quantile_table(found), hide_index=True, width="stretch")
    st.caption(_(
        "Triton's own quantiles, in ms, from its Prometheus summaries (the lab's server starts with "
        "--metrics-config=summary_latencies=true). Triton computes them per model over the successful "
        "requests that finished in the last 60 seconds, a window that slides in steps of 12 seconds: they can "
        "include requests from just before this run, and leave out failed ones. Queue time runs from a "
        "request's entry into the scheduler to the start of its execution; compute is the model's execution; "
        "request time is Triton's whole handling of the request. The count is every successful request since "
        "the model loaded."
    ))


def quantile_table(found: Mapping[str, Mapping[str, float]]) -> pd.DataFrame:
    """One row per summary (request, queue, compute): p50 to p99.9 in ms and Triton's count."""
    words = t()
    rows = []
    for kind, label in QUANTILE_ROWS.items():
        values = found.get(kind)
        if not values:
            continue
        row: dict[str, object] = {words(N_("Triton's time")): words(label)}
        for quantile, column in QUANTILE_COLUMNS.items():
            value = values.get(quantile)
            row[column] = None if value is None or value != value else round(value / 1000, 2)  # NaN: none in the window
        row[words(N_("requests counted"))] = int(values.get("count", 0))
        rows.append(row)
    return pd.DataFrame(rows)


def latency_table(run: RunAnalysis) -> pd.DataFrame:
    """The latency percentiles as the learner reads them: lengths and sources in words."""
    table = run.latency_percentiles.round(1)
    if table.empty:
        return table
    words = t()
    table.insert(0, "length", [figures.length_words(lo, hi, words) for lo, hi in zip(table["length_low"], table["length_high"], strict=True)])
    table["source"] = [words(figures.SOURCE_LATENCY_WORDS[s]) for s in table["source"]]
    table = table.drop(columns=["length_low", "length_high"])
    return table.rename(columns={k: words(v) for k, v in LATENCY_COLUMNS.items()})


def instance_work(run: RunAnalysis, key: str = "instance-work") -> None:
    chart.show(figures.instance_work(run, _=t()), figures.instance_work_summary(run, _=t()), key=key, width="stretch")
    table = run.instance_work
    if not table.empty:
        st.dataframe(table.round(2).rename(columns={k: _(v) for k, v in INSTANCE_COLUMNS.items()}),
                     hide_index=True, width="stretch")
