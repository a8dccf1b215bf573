"""Words of the kv_shared_prefix exercise (engine.py beside it). SCENARIO quotes its constants
(8 requests, a 64-token system prompt in 4 blocks of 16 tokens, about 40 ms apart, 1 ms per token)."""
from __future__ import annotations

from app.i18n import N_

TITLE = N_("A shared system prompt: computed again, or found in the cache?")
SCENARIO = N_(
    "8 requests start with the same 64-token system prompt (4 blocks of 16 tokens) followed by a question of "
    "their own, and arrive about 40 ms apart. Two engines differ only in prefix sharing, off and on. Each engine "
    "step takes 1 ms longer per token it computes, as a larger model's prompt processing would."
)
QUESTION = N_("With prefix sharing on, what happens to the system prompt's blocks for the requests after the first?")
OPTIONS = {
    "shared": N_("They are found in the cache: each later request takes the 4 blocks the first one computed and "
                 "computes only its own question; with sharing off every request computes all of its prompt."),
    "recomputed": N_("Each request still computes the system prompt again: a cache only keeps a request's blocks "
                     "while that request runs."),
    "always": N_("They are found in the cache either way: prefix sharing only decides whether blocks may be shared "
                 "by requests running at the same moment."),
}
NUMBERS = {
    "prefix_blocks_possible": N_("system prompt blocks the later requests could find"),
    "blocks_found_off": N_("sharing off: prompt blocks found in the cache"),
    "prompt_tokens_computed_off": N_("sharing off: prompt tokens computed"),
    "ttft_p50_ms_off": N_("sharing off: time to first token, p50 (ms)"),
    "blocks_found_on": N_("sharing on: prompt blocks found in the cache"),
    "prompt_tokens_computed_on": N_("sharing on: prompt tokens computed"),
    "ttft_p50_ms_on": N_("sharing on: time to first token, p50 (ms)"),
}
FINDINGS = {
    "off": N_("Sharing off: {found:count} prompt blocks found in the cache; {computed:count} of {prompt:count} prompt "
              "tokens computed; time to first token p50 {p50:ms}."),
    "on": N_("Sharing on: {found:count} prompt blocks found in the cache ({possible:count} of the system prompt's "
             "could be); {computed:count} of {prompt:count} prompt tokens computed; time to first token p50 {p50:ms}."),
    "why_blocks": N_(
        "A prompt's keys and values depend only on the tokens before them, so two prompts that start alike fill "
        "their first blocks with the same values."
    ),
    "why_sharing": N_(
        "With prefix sharing on, the engine remembers the content of every complete block; when a new request "
        "starts, it looks up its prompt's leading blocks, takes the ones the cache holds (one cache block then "
        "serves several requests) and computes only the rest. With sharing off it looks nothing up."
    ),
    "why_first": N_(
        "The first request computes the system prompt, since nobody has yet; a block another request finished "
        "with stays findable until its space is needed, so even a later run may find it."
    ),
}
STEPS = {
    "run_off": N_("Prefix sharing off: {requests:count} requests with one system prompt"),
    "run_on": N_("Prefix sharing on: the same {requests:count} requests"),
    "measuring": N_("Measuring"),
}
CHART_SUMMARIES = {
    "blocks": N_("Prompt blocks found in the cache: {off:count} with sharing off, {on:count} with it on."),
    "ttft": N_("Time to first token, p50: {off:ms} with sharing off, {on:ms} with it on."),
}
