"""Words of the head_of_line exercise (engine.py beside it). SCENARIO quotes its constants
(LONG_TOKENS 40, SHORT 3 of SHORT_TOKENS 2, SHORT_GAP_MS 30, STEP_MS 20)."""
from __future__ import annotations

from app.i18n import N_

TITLE = N_("Head of line: a short request behind a long one")
SCENARIO = N_(
    "A chat service generates on one instance with max_batch_size 4, 20 ms per step. A long request (40 tokens) "
    "arrives first; 3 short ones (2 tokens each) follow, 30 ms apart. The same traffic goes to a static deployment "
    "(the dynamic batcher: a batch generates to its end in one execution) and to an in-flight one (iterative "
    "sequences: one step per execution, rescheduled)."
)
QUESTION = N_("When do the short requests get their first token under static batching?")
OPTIONS = {
    "hostage": N_("Only after the long request's 40 tokens: the instance is busy with that batch until it ends, while in "
                  "flight they join at the next step."),
    "same": N_("About as soon as in flight: the dynamic batcher slips them into the running batch."),
    "static_faster": N_("Sooner than in flight: a static batch has less scheduling to do."),
}
NUMBERS = {
    "short_ttft_static_ms": N_("static: short requests' time to first token (median)"),
    "short_ttft_inflight_ms": N_("in flight: short requests' time to first token (median)"),
    "long_e2e_static_ms": N_("static: the long request end to end"),
    "long_e2e_inflight_ms": N_("in flight: the long request end to end"),
    "short_e2e_static_ms": N_("static: short requests end to end (median)"),
    "short_e2e_inflight_ms": N_("in flight: short requests end to end (median)"),
}
FINDINGS = {
    "static_waited": N_("Static: the {short:count} short requests waited {ttft:ms} for their first token (median); the "
                        "long request took {long:ms}."),
    "inflight_joined": N_("In flight: the short requests' first token came after {ttft:ms} (median): they joined the "
                          "running long request at its next step."),
    "why_instance_busy": N_(
        "Under the dynamic batcher an instance takes its next batch only when its execute returns, and a static batch "
        "returns after its last token, so everything that arrived meanwhile waits in the queue."
    ),
    "why_reschedule": N_(
        "With iterative sequences the model runs one step and asks Triton to reschedule the request; the next "
        "execution takes the rescheduled request together with new arrivals, so a short request starts at once and "
        "leaves after its own few steps."
    ),
    "why_field": N_(
        "That is the gap seen here ({ratio:ratio}), and why servers for text generation batch in flight: one long "
        "answer should not hold every short one behind it."
    ),
}
STEPS = {
    "run_static": N_("Static: a {long:count}-token request, then {short:count} requests of {tokens:count} tokens"),
    "run_inflight": N_("In flight: a {long:count}-token request, then {short:count} requests of {tokens:count} tokens"),
    "measuring": N_("Measuring"),
}
CHART_SUMMARIES = {
    "ttft": N_("Short requests' first token, median: static {static:ms}, in flight {inflight:ms}."),
}
