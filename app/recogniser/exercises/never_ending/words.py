"""Words of the never_ending exercise (engine.py beside it)."""
from __future__ import annotations

from app.i18n import N_

TITLE = N_("Never-ending sequences: idle timeout vs slow and dead clients")
SCENARIO = N_(
    "A recogniser on the direct sequence batcher has max_sequence_idle_microseconds = 200000 (0.2 s). "
    "One client is healthy but slow: it thinks 0.4 s between chunks and sends END at the end. Another "
    "client crashes after two chunks and never sends END. The model keeps each session's state in its own memory."
)
QUESTION = N_("What happens to the slow client's second chunk, sent 0.4 s after its first?")
OPTIONS = {
    "served": N_("It is served normally: the session is only slow."),
    "reaped": N_("It is refused: Triton already ended the idle sequence, so the chunk lacks a START."),
    "fresh": N_("It is served, but from a fresh state: Triton told the model to reset."),
    "waits": N_("It waits in the backlog until a slot is free."),
}
NUMBERS = {
    "slow_reaped_at_short_timeout": N_("slow client reaped at the short timeout"),
    "slow_chunks_answered_before_reap": N_("slow client's chunks answered before the reap"),
    "model_requests_for_reaped_session": N_("requests the model ran for the reaped session"),
    "slow_intact_at_long_timeout": N_("slow client intact at the long timeout"),
    "cells_reaped": N_("grid cells where the slow client was reaped"),
    "dead_blocked_ms_long_timeout": N_("dead client: next session blocked at the long timeout (ms)"),
    "dead_blocked_ms_short_timeout": N_("dead client: next session blocked at the short timeout (ms)"),
    "evict_after_pause_state_owner": N_("after the pause: STATE_OWNER read"),
    "evict_after_pause_state_in": N_("after the pause: STATE_IN read"),
    "evict_before_pause_state_owner_is_own": N_("before the pause: the session read its own state"),
    "evict_after_pause_error": N_("after the pause: Triton's error"),
    "evict_verdict": N_("paused session's verdict"),
}
FINDINGS = {
    # findings
    "grid_reaped": N_("timeout {timeout:ms}, think time {think:ms}: reaped after {answered:count} chunk(s)."),
    "grid_verdict": N_("timeout {timeout:ms}, think time {think:ms}: {verdict:verdict}."),
    "refusal": N_("The reaped chunk's refusal: `{message:text}`"),
    "no_refusal": N_("The reaped chunk got no refusal message."),
    "model_requests": N_(
        "The model ran {requests:count} request(s) for the reaped session: one per answered chunk, nothing for the reap itself."
    ),
    "dead_blocked": N_(
        "Dead client, timeout {long:ms}: the next session waited {long_wait:ms} for the dead one's slot; "
        "at {short:ms} it waited {short_wait:ms}."
    ),
    "evict_accepted": N_(
        "After a {pause:ms} pause (model clean-up after {evict:seconds}, Triton's timeout {timeout:seconds}) the next "
        "chunk was accepted without error and read STATE_IN {state_in:text}, STATE_OWNER {owner:text}: verdict {verdict:verdict}."
    ),
    "evict_refused": N_(
        "After a {pause:ms} pause (model clean-up after {evict:seconds}, Triton's timeout {timeout:seconds}) the next "
        "chunk was refused (`{message:text}`) and read STATE_IN {state_in:text}, STATE_OWNER {owner:text}: verdict {verdict:verdict}."
    ),
    "waiter_reaped": N_(
        "The waiting session ({who:session}) was itself reaped right after it got the slot: its idle clock ran while "
        "it sat in the backlog."
    ),
    # explanation
    "reaper": N_(
        "Triton's sequence batcher ends a sequence that has sent nothing for max_sequence_idle_microseconds and frees its slot."
    ),
    "cannot_tell": N_("It cannot tell a slow client from a dead one."),
    "slow_reaped": N_(
        "With the timeout below the slow client's think time, its sequence was reaped between chunks and its next "
        "chunk was refused (\"`{refusal:text}` ...\"): to Triton it is a new sequence without START."
    ),
    "dead_holds": N_(
        "With the timeout above the think time the slow client is safe, but a client that dies without END keeps "
        "its slot for the whole timeout: the session behind it was blocked {long_wait:ms} at {long:ms}, "
        "{short_wait:ms} at {short:ms}."
    ),
    "choose": N_("Choose the timeout just above the slowest healthy client's longest silence."),
    "never_tells": N_(
        "The reaper never tells the model: no request, no END, and for the Python backend no implicit state to "
        "release, so the model ran only the chunks it answered."
    ),
    "model_cleans": N_(
        "A model that keeps state by session or correlation ID must clean up itself; ours drops cells idle for "
        "idle_evict_s ({evict:seconds} here), which is why the chunk after the pause read a fresh cell "
        "(STATE_OWNER {owner:text}) although Triton still considered the sequence alive."
    ),
    "keep_longer": N_("Keep the model's clean-up longer than Triton's timeout, or it drops live sessions."),
}
STEPS = {
    "deploying": N_("Deploying idle timeout {timeout:ms} (1 instance × 1 slot)"),
    "slow": N_("Slow client thinking {think:ms}, timeout {timeout:ms}"),
    "dead": N_("Dead client, timeout {timeout:ms}"),
    "deploying_evict": N_("Deploying the session-keyed model with idle_evict_s = {evict:text}"),
    "pause": N_("A session pauses {pause:ms} while another keeps talking"),
    "measuring": N_("Measuring"),
}

# Each chart's message in words, beside it (figures.py beside it): numbers read off the chart.
CHART_SUMMARIES = {
    "grid": N_("{reaped:count} of {cells:count} pairs of timeout and think time were reaped."),
    "grid_reaped": N_("Reaped: {pairs:text}."),
    "grid_item": N_("think {think:count} ms with timeout {timeout:count} ms"),
    "dead": N_("How long the next session waited: {bars:text}."),
    "dead_item": N_("{blocked:ms} at a timeout of {timeout:count} ms"),
    "evict": N_("{fresh:count} of {chunks:count} chunks read a fresh cell (owner 0); letters that came back wrong: "
                "{wrong:count}."),
}
