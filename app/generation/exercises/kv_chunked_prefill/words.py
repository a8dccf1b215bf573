"""Words of the kv_chunked_prefill exercise (engine.py beside it). SCENARIO quotes its constants
(4 running requests, a 448-token prompt 200 ms in, budgets of 1024 and 16 tokens, 2 ms per token)."""
from __future__ import annotations

from app.i18n import N_

TITLE = N_("A long prompt among running generations: does chunked prefill help?")
SCENARIO = N_(
    "4 requests are generating answers of 60 to 80 tokens when a 448-token prompt arrives, 200 ms in. The engine's "
    "step token budget (max_batch_tokens) is 1024 on one deployment and 16 on the other. Each engine step takes "
    "2 ms longer per token it computes, as a larger model's would."
)
QUESTION = N_("What happens to the running requests' time between tokens (p99) when the long prompt arrives?")
OPTIONS = {
    "chunking_smooths": N_("With 1024 it jumps: one step computes the whole prompt and every running request waits "
                           "for it; with 16 the prompt is cut into chunks and their tokens keep coming."),
    "no_difference": N_("The same either way: the running requests decode in their own steps, apart from the "
                        "prompt."),
    "chunking_stalls": N_("With 16 it is worse: cutting the prompt into chunks takes more steps, and every step "
                          "delays the running requests."),
}
NUMBERS = {
    "tbt_p99_ms_whole": N_("budget 1024: running requests' time between tokens, p99 (ms)"),
    "tbt_p50_ms_whole": N_("budget 1024: running requests' time between tokens, p50 (ms)"),
    "largest_step_tokens_whole": N_("budget 1024: most tokens one request computed in one step"),
    "long_prefill_steps_whole": N_("budget 1024: engine steps the long prompt took"),
    "long_ttft_ms_whole": N_("budget 1024: the long prompt's time to first token (ms)"),
    "tbt_p99_ms_chunked": N_("budget 16: running requests' time between tokens, p99 (ms)"),
    "tbt_p50_ms_chunked": N_("budget 16: running requests' time between tokens, p50 (ms)"),
    "largest_step_tokens_chunked": N_("budget 16: most tokens one request computed in one step"),
    "long_prefill_steps_chunked": N_("budget 16: engine steps the long prompt took"),
    "long_ttft_ms_chunked": N_("budget 16: the long prompt's time to first token (ms)"),
}
FINDINGS = {
    "whole": N_("Budget {budget:count}: the long prompt took {steps:count} engine steps, at most {largest:count} tokens "
                "of one request in one step; the running requests' time between tokens p50 {p50:ms}, p99 {p99:ms}; "
                "the long prompt's first token after {ttft:ms}."),
    "chunked": N_("Budget {budget:count}: the long prompt took {steps:count} engine steps, at most {largest:count} "
                  "tokens of one request in one step; the running requests' time between tokens p50 {p50:ms}, p99 "
                  "{p99:ms}; the long prompt's first token after {ttft:ms}."),
    "why_step": N_(
        "Every running request gets its next token from a step, and one step computes every request in it: with a "
        "budget of 1024 the long prompt goes into one step whole, and the running requests wait the whole of that "
        "step for their next token."
    ),
    "why_chunks": N_(
        "The budget caps the tokens of one step: a prompt longer than what is left of it is split, one chunk per "
        "step, beside the running requests' tokens, so no step grows long; the price is a later first token for "
        "the long prompt itself."
    ),
    "why_cost": N_(
        "The toy model computes a prompt almost for free, so the lab adds 2 ms per token to each step; on a real "
        "model a step's time grows with the tokens it computes, which is why the stall is real there."
    ),
}
STEPS = {
    "run_whole": N_("Budget {budget:count}: a {long:count}-token prompt among 4 running requests"),
    "run_chunked": N_("Budget {budget:count}: the same traffic"),
    "measuring": N_("Measuring"),
}
CHART_SUMMARIES = {
    "gaps": N_("Time between tokens of the running requests, p99: {whole:ms} with budget 1024, {chunked:ms} with "
               "budget 16."),
    "steps": N_("Engine steps the long prompt took: {whole:count} with budget 1024, {chunked:count} with budget 16."),
}
