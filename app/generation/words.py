"""Words of the generation feature: English templates marked with N_() for the codes its engine
returns and for its figures, lab page and exercises' shared parts (gettext gives the learner's language).

CHART_SUMMARIES: each generation chart's message in a sentence beside it (app/generation/figures.py),
numbers read off the chart, as app/text/charts.py does for the recogniser's charts.
"""
from __future__ import annotations

from app.i18n import N_

# How a request is named on a chart or in a table: its tag, as the workload numbered it.
REQUEST = N_("request {tag}")

MODES = {
    "static": N_("static batching"),
    "inflight": N_("in-flight batching"),
    "inflight_by_row": N_("in-flight, state keyed by row"),
}

# The step-by-row timeline's marks (app/generation/figures.timeline).
MARKS = {
    "join": N_("first token (joins)"),
    "step": N_("token"),
    "leave": N_("last token (leaves)"),
    "wrong": N_("wrong token"),
    "empty": N_("empty row"),
}

CHART_SUMMARIES = {
    # figures.timeline
    "timeline": N_("{tokens:count} tokens of {requests:count} requests in {executions:count} executions, "
                   "{ticks:count} model steps of {rows:count} rows each; {empty:count} row places stayed empty."),
    "timeline_joined": N_("Requests that joined a running batch: {n:count}."),
    "timeline_wrong": N_("Wrong tokens: {n:count}, continuing the state of {owners:text}."),
    "timeline_right": N_("Every token was right."),
    # figures.latencies
    "latencies": N_("Time to first token, median: {modes:text}."),
    "latencies_item": N_("{mode:text} {ttft:ms} (end to end {e2e:ms})"),
    # figures.fill
    "fill": N_("Mean step fill: {modes:text}."),
    "fill_item": N_("{mode:text} {fill:percent} over {steps:count} model steps"),
}
