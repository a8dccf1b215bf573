"""The words of lesson 9's live element (English templates, marked for gettext; the Chinese is in the
catalog). The engine returns codes and numbers; these say them."""
from __future__ import annotations

from app.i18n import N_

INTRO = N_(
    "Eight requests, planned once with a fixed seed, start with the same 32-token system prompt and arrive about "
    "20 ms apart. Pick how many KV blocks of 16 tokens the engine `kv_engine` gets and whether it shares the prefix, "
    "predict how many requests it runs at once, then run it. Each run holds the engine alone."
)
BLOCKS = N_("KV blocks of 16 tokens")
BLOCKS_HELP = N_("{blocks:count} blocks hold {tokens:count} tokens of keys and values, {bytes:count} bytes in this "
                 "toy model (512 bytes a token).")
SHARING = N_("Share the system prompt's blocks (prefix sharing)")
QUESTION = N_("At the busiest engine step, how many of the eight requests will be running at once?")
BANDS = {
    "all": N_("All eight"),
    "some": N_("Three to seven"),
    "few": N_("One or two"),
}
RUN = N_("Run on the engine")
RUNNING = N_("Generating on the paged engine")
HELD = N_("You predicted {said:text}, and the engine agreed: at most {peak:count} requests ran in one step.")
NOT_HELD = N_("You predicted {said:text}; the engine ran at most {peak:count} requests in one step ({seen:text}).")
SETUP = N_("{blocks:count} blocks, prefix sharing {sharing:yes_no}")
METRICS = {
    "peak_running": N_("running at once, peak"),
    "peak_waiting": N_("waiting, peak"),
    "ttft_p50_ms": N_("first token, median"),
    "ttft_p95_ms": N_("first token, p95"),
    "prefix": N_("prefix blocks from the cache"),
}
PREFIX_VALUE = N_("{reused:count} of {possible:count}")
COMPLETE = N_("All {n:count} requests finished; every one got the tokens it asked for.")
INCOMPLETE = N_("{done:count} of {n:count} requests finished.")
STEPS_CAPTION = N_(
    "Read off the engine's own report with every token: the step that made it, the requests running and waiting "
    "then, and the blocks free. Waiting also counts requests that arrived since the last step and requests whose "
    "prompt did not fit the step's token budget."
)
# figures.py
CHART_TITLE = N_("Blocks in use and requests at each engine step")
AXIS_STEP = N_("engine step")
AXIS_BLOCKS = N_("blocks in use")
AXIS_REQUESTS = N_("requests")
TRACES = {
    "used_blocks": N_("blocks in use"),
    "running": N_("running"),
    "waiting": N_("waiting"),
    "capacity": N_("blocks in the cache"),
}
NO_STEPS = N_("The engine reported no steps.")
CHART_SUMMARY = N_("{steps:count} engine steps; at most {used:count} of {blocks:count} blocks in use, at most "
                   "{running:count} requests running and {waiting:count} waiting in one step.")
