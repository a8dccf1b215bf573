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

# The generation lab page (app/views/generation.py).
PAGE_TITLE = N_("Generation lab")
PAGE_INTRO = N_(
    "A tiny token generator runs on the real Triton server, one token per step. Choose static batching (the dynamic "
    "batcher: a batch generates to its end in one execution) or in-flight batching (iterative sequences: one step "
    "per execution, requests join and leave between steps), send a workload, and see which request ran in which "
    "batch row at every step. Compare runs both on the same workload."
)
MODE_CHOICES = {
    "static": N_("Static"),
    "inflight": N_("In flight"),
    "compare": N_("Compare both"),
}
SETTINGS = {
    "mode": N_("Batching"),
    "max_batch_size": N_("max_batch_size"),
    "queue_delay_ms": N_("queue delay (ms)"),
    "max_candidates": N_("max_candidate_sequences (in flight)"),
    "instances": N_("instances"),
    "requests": N_("requests"),
    "mean_gap_ms": N_("mean gap between arrivals (ms)"),
    "min_tokens": N_("fewest tokens per request"),
    "max_tokens": N_("most tokens per request"),
    "prompt_seed": N_("prompt seed"),
    "seed": N_("workload seed"),
}
PRESETS = {  # app/generation/setup.PRESETS: (label, what it shows)
    "side_by_side": (N_("Side by side"), N_("Eight requests of 2 to 12 tokens, both modes on the same arrivals.")),
    "long_and_short": (N_("Long and short"), N_("Lengths from 2 to 24 tokens: short requests stuck behind long ones.")),
    "sparse": (N_("Sparse"), N_("Requests 300 ms apart: little to batch, whichever mode.")),
    "patient_queue": (N_("Patient queue"), N_("Static with a 60 ms queue delay: fuller batches, later first tokens.")),
}
QUESTIONS = {
    "compare": N_("On the same workload, which mode gives the median request its first token sooner?"),
    "single": N_("Will some steps run with rows left empty?"),
}
ANSWERS = {
    "compare": {"static": N_("Static batching"), "inflight": N_("In-flight batching"), "same": N_("About the same")},
    "single": {"yes": N_("Yes, some rows stay empty"), "no": N_("No, every step is full")},
}
NUMBERS = {
    "requests": N_("requests"),
    "tokens": N_("tokens"),
    "tokens_per_s": N_("tokens/s"),
    "ttft_p50_ms": N_("time to first token p50 (ms)"),
    "ttft_p95_ms": N_("time to first token p95 (ms)"),
    "e2e_p50_ms": N_("end to end p50 (ms)"),
    "mean_fill": N_("mean step fill"),
    "wrong_tokens": N_("wrong tokens"),
}
REQUEST_COLUMNS = {
    "mode": N_("batching"),
    "tag": N_("request"),
    "tokens": N_("tokens"),
    "ttft_ms": N_("time to first token (ms)"),
    "e2e_ms": N_("end to end (ms)"),
    "wrong": N_("wrong tokens"),
}
