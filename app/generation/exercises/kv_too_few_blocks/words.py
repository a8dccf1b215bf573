"""Words of the kv_too_few_blocks exercise (engine.py beside it). SCENARIO quotes its constants
(8 requests, a 32-token system prompt, 20 ms apart, 64 and 8 blocks of 16 tokens)."""
from __future__ import annotations

from app.i18n import N_

TITLE = N_("Too few KV blocks: what happens to the requests that do not fit?")
SCENARIO = N_(
    "A paged engine keeps every running request's keys and values in a cache cut into blocks of 16 tokens. "
    "8 requests that share a 32-token system prompt arrive about 20 ms apart. The same requests go to an engine "
    "with 64 blocks and to one with 8 blocks, and each request also runs alone, so every stream can be compared "
    "with its alone run."
)
QUESTION = N_("With 8 blocks, what happens to the requests the cache cannot hold?")
OPTIONS = {
    "wait": N_("They wait for memory: they start later, as running requests finish and free their blocks, so the "
               "first tokens come later; every stream still equals its alone run."),
    "refused": N_("The engine answers them with an out-of-memory error."),
    "changed": N_("They all start at once and share blocks, so some answers change."),
    "no_effect": N_("Nothing visible: the engine makes room and the first tokens come as soon as with 64 blocks."),
}
NUMBERS = {
    "peak_waiting_plenty": N_("64 blocks: most requests waiting at one step"),
    "ttft_p50_ms_plenty": N_("64 blocks: time to first token, p50 (ms)"),
    "ttft_p95_ms_plenty": N_("64 blocks: time to first token, p95 (ms)"),
    "equal_alone_plenty": N_("64 blocks: streams equal to their alone run"),
    "failed_plenty": N_("64 blocks: requests that failed"),
    "peak_waiting_few": N_("8 blocks: most requests waiting at one step"),
    "ttft_p50_ms_few": N_("8 blocks: time to first token, p50 (ms)"),
    "ttft_p95_ms_few": N_("8 blocks: time to first token, p95 (ms)"),
    "equal_alone_few": N_("8 blocks: streams equal to their alone run"),
    "failed_few": N_("8 blocks: requests that failed"),
}
FINDINGS = {
    "plenty": N_("{blocks:count} blocks: at most {waiting:count} requests waiting at one step; time to first token "
                 "p50 {p50:ms}, p95 {p95:ms}."),
    "few": N_("{blocks:count} blocks: up to {waiting:count} requests waiting at one step, the last starting at engine "
              "step {step:count}; time to first token p50 {p50:ms}, p95 {p95:ms}."),
    "equal": N_("Streams equal to their alone run: {plenty:count} of {all:count} with plenty of blocks, {few:count} "
                "of {all:count} with few; {failed:count} requests failed."),
    "why_blocks": N_(
        "Every token a request holds keeps its keys and values in the cache, so a request needs blocks for its prompt "
        "and for each token it generates; 8 blocks of 16 tokens hold 128 tokens, a few of these requests at a time."
    ),
    "why_wait": N_(
        "Before each step the engine's scheduler takes only the requests whose next tokens fit in free blocks; the "
        "others stay waiting and start as running ones finish and give their blocks back (a running request whose "
        "next token no longer fits can be sent back to wait too). Memory, not compute, "
        "decides how many generate at once, and the wait shows up as a later first token."
    ),
    "why_equal": N_(
        "Waiting changes when a request runs, not what it computes: each request attends only to its own blocks, so "
        "its tokens equal its alone run's."
    ),
}
STEPS = {
    "run_plenty": N_("{blocks:count} blocks: 8 requests sharing a system prompt"),
    "run_few": N_("{blocks:count} blocks: the same 8 requests"),
    "alone": N_("Each of the {requests:count} requests alone"),
    "measuring": N_("Measuring"),
}
CHART_SUMMARIES = {
    "ttft": N_("Time to first token per request: {runs:text}."),
    "ttft_item": N_("{run:text}: p95 {p95:ms}"),
    "waiting": N_("Requests waiting at each engine step: at most {plenty:count} with plenty of blocks, "
                  "{few:count} with few."),
}
