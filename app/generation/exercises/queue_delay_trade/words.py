"""Words of the queue_delay_trade exercise (engine.py beside it). SCENARIO quotes its constants
(DELAY_MS 100, REQUESTS 8, GAP_MS 25, TOKENS 1)."""
from __future__ import annotations

from app.i18n import N_

TITLE = N_("The queue delay's trade: fuller steps, later first tokens")
SCENARIO = N_(
    "Static batching on one instance with max_batch_size 4, 20 ms per step: 8 short requests (1 token each) arrive "
    "25 ms apart. The same traffic runs twice: with max_queue_delay_microseconds 0, and with 100 ms."
)
QUESTION = N_("What does the 100 ms queue delay change?")
OPTIONS = {
    "trade": N_("Steps run fuller, but the first tokens come later: the batcher holds early requests back to gather more."),
    "free": N_("Steps run fuller and the first tokens come no later: batching only helps."),
    "nothing": N_("Nothing much: the batcher sends what is queued either way."),
}
NUMBERS = {
    "fill_no_delay": N_("no delay: mean step fill"),
    "fill_delay": N_("with the delay: mean step fill"),
    "ttft_no_delay_ms": N_("no delay: time to first token (median)"),
    "ttft_delay_ms": N_("with the delay: time to first token (median)"),
    "delay_ms": N_("queue delay (ms)"),
}
FINDINGS = {
    "fill": N_("Mean step fill: {f0:percent} with no delay, {f1:percent} with a {delay:seconds} delay."),
    "ttft": N_("Time to first token (median): {t0:ms} with no delay, {t1:ms} with the delay."),
    "why_wait": N_(
        "With no delay the dynamic batcher sends whatever waits in the queue as soon as the instance is free, so a "
        "request that arrives alone runs alone."
    ),
    "why_full": N_(
        "With a delay it holds the oldest request back until max_batch_size requests are queued or the delay has "
        "passed, so batches fill up, and each early request waits for the ones after it."
    ),
    "why_choose": N_(
        "A delay of {delay:seconds} buys fuller steps (more tokens per second from the same instance) with time to "
        "first token: choose it from the latency you may spend, not from the batch size you want."
    ),
}
STEPS = {
    "run": N_("Static, queue delay {delay:seconds}: {requests:count} requests {gap:seconds} apart"),
    "measuring": N_("Measuring"),
}
CHART_SUMMARIES = {
    "trade": N_("{delays:text}."),
    "trade_item": N_("{delay:text}: mean step fill {fill:percent}, median time to first token {ttft:ms}"),
}
