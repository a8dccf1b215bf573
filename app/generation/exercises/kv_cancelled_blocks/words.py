"""Words of the kv_cancelled_blocks exercise (engine.py beside it). SCENARIO quotes its constants
(4 requests of 40 to 48 tokens, the first cancelled after 4)."""
from __future__ import annotations

from app.i18n import N_

TITLE = N_("A cancelled generation: what happens to its KV blocks?")
SCENARIO = N_(
    "4 requests generate answers of 40 to 48 tokens side by side on a paged engine. The client of the first one "
    "cancels it after 4 tokens. The engine model reports its blocks in use on Triton's metrics endpoint "
    "(kv_blocks_used)."
)
QUESTION = N_("What happens to the cancelled request's blocks?")
OPTIONS = {
    "freed": N_("They go back to the pool within a few steps, while the other three still run; kv_blocks_used is 0 "
                "after the run, and the other three answer exactly as alone."),
    "held": N_("They stay held until the request would have finished its answer, then go back to the pool."),
    "leaked": N_("They stay held after the run: only reloading the model gives them back."),
    "hurt": N_("Freeing them mid-step upsets the requests that shared those steps: their answers change."),
}
NUMBERS = {
    "cancelled_tokens": N_("tokens the cancelled request received"),
    "cancelled_status": N_("the cancelled request's end"),
    "cancelled_peak_blocks": N_("blocks the cancelled request held"),
    "held_while_neighbours_ran": N_("its blocks still held at the last step all three others ran in"),
    "blocks_used_after": N_("kv_blocks_used after the run"),
    "neighbours_equal_alone": N_("other requests equal to their alone run"),
}
FINDINGS = {
    "cancelled": N_("The cancelled request received {tokens:count} tokens and held {blocks:count} blocks."),
    "during": N_("At the last of {steps:count} steps after its last token in which all three others ran, the blocks "
                 "in use that none of them held: {held:count}."),
    "after": N_("kv_blocks_used once the run had settled: {used:count}."),
    "neighbours": N_("Other requests equal to their alone run: {equal:count} of {all:count}."),
    "why_cancel": N_(
        "Cancelling the gRPC call marks the request cancelled in Triton; Triton cannot free the engine's memory, so "
        "the engine model asks each of its requests whether it was cancelled and cancels it in the engine."
    ),
    "why_free": N_(
        "The engine's scheduler removes a cancelled request before its next step and frees its blocks, so they are "
        "free for the requests still running or waiting, long before its answer would have ended."
    ),
    "why_neighbours": N_(
        "Each request reads only its own blocks, so removing one request changes nothing another computes: the "
        "others' tokens equal their alone runs."
    ),
}
STEPS = {
    "run": N_("4 requests, the first cancelled after {tokens:count} tokens"),
    "alone": N_("Each of the other {requests:count} requests alone"),
    "measuring": N_("Measuring"),
}
CHART_SUMMARIES = {
    "blocks": N_("After the cancelled request's last token: {steps:count} engine steps, blocks in use that no other "
                 "request held at the last of them: {held:count}."),
    "gauge": N_("kv_blocks_used after the run: {used:count}."),
}
