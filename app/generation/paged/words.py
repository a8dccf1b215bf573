"""English templates for the paged engine's problem codes and the generation lab's engine mode: its
settings, presets, question, figures and the Presenter's engine demo (gettext N_; Chinese in
app/i18n/locale/zh). The engine (app/generation/paged/engine) returns codes and numbers; this says them."""
from __future__ import annotations

from app.i18n import N_

# Problem codes the paged engine raises (PagedSettings.problems, PagedWorkload.problems), by code.
# Pages pass them to app.text.errors.explain as `wording`.
PROBLEMS = {
    "kv_scheduler_unknown": N_("the engine's scheduler must be one of {choices:text}, not '{value:text}'"),
    "kv_setting_range": N_("the engine's {setting:text} must be {low:count} to {high:count}: got {value:text}"),
    "kv_workload_range": N_("the workload's {setting:text} must be {low:count} to {high:count}: got {value:text}"),
    "kv_workload_order": N_("the workload's shortest prompt and answer must not be longer than its longest"),
    # app/generation/paged/setup.PagedSetup.problems: a request the engine could never run.
    "kv_request_past_cache": N_("with setting {side:text} the longest request (prompt and answer) needs {tokens:count} "
                                "tokens of KV cache, but {blocks:count} blocks of {size:count} tokens hold "
                                "{capacity:count}: it could never run. Give the cache more blocks or bigger ones, or "
                                "shorten the workload."),
    "kv_request_past_positions": N_("the longest request (prompt and answer) is {tokens:count} tokens, but the model "
                                    "has {positions:count} positions: shorten the workload."),
}

LAB_CHOICES = {  # app/generation/paged/setup.LABS: which lab the generation page shows
    "generator": N_("Token generator (Triton's batchers)"),
    "engine": N_("Paged engine (KV cache in blocks)"),
}
ENGINE_INTRO = N_(
    "A small language model runs inside one Triton model, which turns Triton's own batching off "
    "(max_batch_size 0) and hands every request to an engine that batches in flight by itself: transformers' "
    "continuous batching with a paged KV cache. Each response says which engine step made its token and which "
    "cache blocks its request held. Choose the cache and the scheduler, send requests that share a system "
    "prompt, and watch memory decide how many generations run at once."
)
SIDES = {"a": N_("setting A"), "b": N_("setting B")}
COMPARE = N_("Run setting B too, on the same requests")
SETTINGS = {
    "num_blocks": N_("KV cache blocks"),
    "block_size": N_("tokens per block"),
    "max_batch_tokens": N_("tokens per engine step (max_batch_tokens)"),
    "scheduler": N_("scheduler"),
    "prefix_sharing": N_("share prefix blocks"),
    "requests": N_("requests"),
    "mean_gap_ms": N_("mean gap between arrivals (ms)"),
    "system_tokens": N_("system prompt tokens (shared)"),
    "min_user_tokens": N_("fewest own prompt tokens"),
    "max_user_tokens": N_("most own prompt tokens"),
    "min_answer_tokens": N_("fewest answer tokens"),
    "max_answer_tokens": N_("most answer tokens"),
    "long_prompt_tokens": N_("one long prompt, tokens (0: none)"),
    "long_at_ms": N_("the long prompt arrives at (ms)"),
    "seed": N_("workload seed"),
}
HELP = {
    "num_blocks": N_("How many blocks the engine's KV cache has. Each block holds the keys and values of "
                     "'tokens per block' tokens; a request needs blocks for its prompt and its answer so far."),
    "block_size": N_("How many tokens' keys and values one block holds."),
    "max_batch_tokens": N_("The most tokens one engine step computes, all requests together. A prompt longer "
                           "than what is left is computed in chunks over several steps."),
    "scheduler": N_("fifo: each step serves requests already generating first, then prompts still being computed "
                    "and waiting requests. prefill_first: prompts still being computed go before requests already "
                    "generating."),
    "prefix_sharing": N_("When on, a request whose prompt starts with blocks another request already computed "
                         "uses those blocks instead of computing them again."),
    "system_tokens": N_("Every request's prompt starts with these same tokens."),
    "long_prompt_tokens": N_("One more request with a prompt this long, arriving among the others."),
}
SCHEDULERS = {"fifo": N_("fifo"), "prefill_first": N_("prefill_first")}
PRESETS = {  # app/generation/paged/setup.PRESETS: (label, what it shows)
    "plenty_of_blocks": (N_("Plenty of blocks"),
                         N_("64 blocks of 16 tokens: every request fits at once.")),
    "too_few_blocks": (N_("Too few blocks"),
                       N_("64 blocks against 8 on the same requests: with 8, requests wait for memory.")),
    "sharing_off": (N_("Shared prompt, sharing off"),
                    N_("Every prompt starts with the same 32 tokens: prefix sharing on against off.")),
    "long_prompt": (N_("Long prompt"),
                    N_("A 384-token prompt arrives among running generations: a step budget of 512 tokens "
                       "against 64.")),
}
QUESTIONS = {
    "compare": N_("On the same requests, which setting gives the median request its first token sooner?"),
    "single": N_("Will some requests have to wait in the engine's queue?"),
}
ANSWERS = {
    "compare": {"a": N_("Setting A"), "b": N_("Setting B"), "same": N_("About the same")},
    "single": {"yes": N_("Yes, some wait"), "no": N_("No, none waits")},
}
NUMBERS = {  # PagedFigures fields shown in the numbers table, in order
    "requests": N_("requests"),
    "complete": N_("complete"),
    "tokens": N_("tokens"),
    "tokens_per_s": N_("tokens/s"),
    "ttft_p50_ms": N_("time to first token p50 (ms)"),
    "ttft_p95_ms": N_("time to first token p95 (ms)"),
    "tbt_p50_ms": N_("time between tokens p50 (ms)"),
    "tbt_p99_ms": N_("time between tokens p99 (ms)"),
    "steps": N_("engine steps"),
    "peak_running": N_("most requests running in a step"),
    "peak_waiting": N_("most requests waiting in a step"),
    "least_free_blocks": N_("fewest free blocks in a step"),
    "prefix_share": N_("shared-prefix blocks found in the cache"),
}
REQUEST_COLUMNS = {
    "side": N_("setting"),
    "index": N_("request"),
    "prompt_tokens": N_("prompt tokens"),
    "tokens": N_("tokens"),
    "first_step": N_("first engine step"),
    "ttft_ms": N_("time to first token (ms)"),
    "tbt_p50_ms": N_("time between tokens p50 (ms)"),
    "prefix_blocks": N_("prompt blocks from the cache"),
    "peak_blocks": N_("most blocks held"),
    "status": N_("status"),
}
STATUS = {"complete": N_("complete"), "cancelled": N_("cancelled"), "failed": N_("failed: {error:text}")}
REQUEST = N_("request {n}")
SETTING_LINE = N_("{side:text}: {blocks:count} blocks of {size:count} tokens ({capacity:count} tokens), "
                  "{budget:count} tokens per step, {scheduler:text}, prefix sharing {sharing:text}")
ON_OFF = {True: N_("on"), False: N_("off")}

# After a run that waited its turn (app/generation/paged/runs.Waited): why, and for how long.
WAITED = N_("Your run waited about {seconds:seconds} for {ahead:count} run(s) ahead of it on the same deployment: "
            "each run holds its deployment alone, so no one else's requests share its engine steps or its blocks.")
MARKS = {"held": N_("block held"), "shared": N_("shared block"), "free": N_("free block")}
# Each figure's message in a sentence beside it (app/generation/paged/figures.py), numbers read off its table.
CHART_SUMMARIES = {
    "blocks": N_("{side:text}: {requests:count} requests held blocks over {steps:count} engine steps; at most "
                 "{peak:count} of {total:count} blocks were held in one step, {shared:count} block places were "
                 "shared."),
    "queue": N_("Most requests waiting in one step: {items:text}."),
    "queue_item": N_("{side:text} {waiting:count} (at most {running:count} running, fewest free blocks "
                     "{free:count})"),
    "latencies": N_("Time to first token, median: {items:text}."),
    "latencies_item": N_("{side:text} {ttft:ms} (time between tokens, median {tbt:ms})"),
}
CAPTIONS = {
    "blocks": N_("Block table: {side:text}"),
    "queue": N_("Requests running and waiting, free blocks"),
    "latencies": N_("Latency per request"),
}

# The Presenter's engine demo (app/generation/paged/demo.py).
DEMO_TITLES = {"kv_blocks": N_("Memory decides the batch: 64 KV blocks or 8")}
DEMO_WORKLOAD = N_("Both settings get the same {requests:count} requests, each starting with the same "
                   "{system:count}-token system prompt, about {gap:count} ms apart.")
DEMO_SEEN = N_("The engine did this: {seen:text}")
DEMO_DISCUSS = N_("Discuss: in the block tables, when did the later requests get their first blocks?")
