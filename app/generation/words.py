"""English templates for the generation engine's codes, the CLI's run summary, and the generation lab's page,
figures and exercises' shared words (gettext N_; Chinese in app/i18n/locale/zh). The engine returns codes and
numbers; this says them."""
from __future__ import annotations

from typing import Any

from app.generation.engine import GenerationRun, RunFigures, analysis
from app.i18n import N_, Words

# Problem codes the engine raises (workload.Workload, deployments.GeneratorSettings, the driver's
# RunUnfinished), by code. Pages and the CLI pass them to app.text.errors.explain as `wording`.
PROBLEMS = {
    "gen_requests_range": N_("requests must be {low:count} to {high:count}: got {value:text}"),
    "gen_gap_range": N_("the mean gap between arrivals must be {low:count} to {high:count} ms: got {value:text}"),
    "gen_tokens_range": N_("token lengths must satisfy {low:count} ≤ shortest ≤ longest ≤ {high:count}: got {min:text} to "
                           "{max:text}"),
    "gen_batching_unknown": N_("batching must be one of {choices:text}, not '{value:text}'"),
    "gen_state_key_unknown": N_("state key must be one of {choices:text}, not '{value:text}'"),
    "gen_strategy_unknown": N_("strategy must be one of {choices:text}, not '{value:text}'"),
    "gen_setting_range": N_("{setting:text} must be {low:text} to {high:text}: got {value:text}"),
    "gen_run_unfinished": N_("{model:text} still had requests open {seconds:count} s after the last one was sent "
                             "(requests {requests:text}): the server answers, but those streams never ended"),
}


def _continued(row: Any, _: Words) -> str:  # a row of the requests table: pandas rows are untyped
    if row.continued_owner == 0:
        return _("it continued an empty state cell")
    if row.continued_index < 0:
        return _("it continued the state of a request outside this run")
    return _.render(N_("it continued the state of request {other:count}"), other=row.continued_index)


def summary_lines(run: GenerationRun, _: Words) -> list[str]:
    """What `batching-lab run --model gen_*` prints: the run's figures, then each wrong stream."""
    requests = analysis.requests_table(run.trace, run.plans)
    f: RunFigures = analysis.run_figures(requests, run.trace, run.max_batch_size)
    lines = [
        _.render(N_("run {run:text} on {model:text}: {requests:count} requests, {tokens:count} tokens in {wall:seconds}, "
                    "{rate:number} tokens/s"),
                 run=run.run_id, model=run.model, requests=f.requests, tokens=f.tokens, wall=f.wall_s, rate=f.tokens_per_s),
        _.render(N_("time to first token: median {p50:ms}, 95th percentile {p95:ms}; whole request: median {e50:ms}, "
                    "95th percentile {e95:ms}"),
                 p50=f.ttft_p50_ms, p95=f.ttft_p95_ms, e50=f.e2e_p50_ms, e95=f.e2e_p95_ms),
        _.render(N_("{executions:count} executions, {passes:count} model steps, rows used per step: {fill:percent} on average"),
                 executions=f.executions, passes=f.passes, fill=f.mean_fill),
        _.render(N_("streams as expected: {correct:count} of {requests:count}"), correct=f.correct, requests=f.requests),
    ]
    for row in requests.itertuples():
        if row.status == analysis.CANCELLED:
            lines.append(_.render(N_("request {index:count}: cancelled after {tokens:count} tokens"),
                                  index=row.index, tokens=row.tokens))
        elif not row.correct:
            lines.append(_.render(N_("request {index:count}: wrong from token {step:count}; {why:text}"),
                                  index=row.index, step=row.first_wrong_step, why=_continued(row, _)))
    return lines


# -- The lab page, its figures and its exercises' shared words ------------------------------------------------
# CHART_SUMMARIES: each generation chart's message in a sentence beside it (app/generation/figures.py), numbers read
# off the chart, as app/recogniser/words/charts.py does for the recogniser's charts.

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
# In flight, the sequence batcher's strategy (app/generation/setup.STRATEGIES; lesson 8, "direct or oldest").
STRATEGY_CHOICES = {
    "oldest": N_("oldest: steps packed with the requests that are ready"),
    "direct": N_("direct: each generation keeps its slot's row, idle slots as padding rows"),
}
SETTINGS = {
    "mode": N_("Batching"),
    "max_batch_size": N_("max_batch_size"),
    "queue_delay_ms": N_("queue delay (ms)"),
    "strategy": N_("Sequence batcher strategy (in flight)"),
    "max_candidates": N_("max_candidate_sequences (in flight, oldest)"),
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

# The presenter's generation demo (app/generation/demo.py): its title, the workload both modes get, and the reveal.
# Its question and options are the lab page's compare question: QUESTIONS["compare"] and ANSWERS["compare"].
DEMO_TITLES = {"static_inflight": N_("Static or in-flight batching")}
DEMO_WORKLOAD = N_("Both modes get the same {requests:count} requests, {low:count} to {high:count} tokens each, about "
                   "{gap:count} ms apart, with max_batch_size {batch:count}.")
DEMO_SEEN = N_("The server did this: {seen:text}")
DEMO_DISCUSS = N_("Discuss: in the timelines, when did the later, shorter requests get their first token?")
