"""Words of the slot_exhaustion exercise (engine.py beside it)."""
from __future__ import annotations

from app.i18n import N_

TITLE = N_("Slot exhaustion: five talkers, two slots")
SCENARIO = N_(
    "A recogniser runs with the sequence batcher, direct strategy, on 1 instance with 2 batch slots. "
    "5 clients open a stream at the same moment and send a 20 ms chunk every 40 ms, waiting for each "
    "reply. Computing a chunk takes about a millisecond, so the server spends most of its time doing nothing."
)
QUESTION = N_("What happens to the clients beyond the first two?")
OPTIONS = {
    "interleave": N_("They are served at once: the idle server interleaves all five streams."),
    "wait": N_("They wait, without any error, until an earlier stream ends and frees its slot."),
    "refused": N_("Triton refuses them with an error: no slot is free."),
    "corrupt": N_("They share the two slots and read each other's state."),
}
NUMBERS = {
    "capacity_sequences": N_("capacity (sequences)"),
    "sessions": N_("sessions"),
    "direct_sessions_waited": N_("direct: sessions that waited for a slot"),
    "direct_max_wait_ms": N_("direct: longest backlog wait (ms)"),
    "direct_mean_wait_ms": N_("direct: mean backlog wait (ms)"),
    "oldest_sessions_waited": N_("oldest: sessions that waited for a slot"),
    "oldest_max_wait_ms": N_("oldest: longest backlog wait (ms)"),
    "oldest_mean_wait_ms": N_("oldest: mean backlog wait (ms)"),
    "direct_slots_held_pct": N_("direct: slots held (% of the time)"),
    "direct_instance_busy_pct": N_("direct: instance computing (% of the time)"),
    "errors": N_("sessions with an error"),
}
FINDINGS = {
    # findings
    "direct_waited": N_(
        "direct: {waited:count} of {sessions:count} sessions waited over {threshold:ms} for a slot "
        "(longest {longest:ms}); none got an error."
    ),
    "errors": N_("{errors:count} sessions got an error."),
    "direct_held": N_("direct: slots were held {held:percent} of the time while the instance computed only {busy:percent} of it."),
    "oldest_waited": N_("oldest (same capacity): {waited:count} sessions waited, longest {longest:ms}."),
    "sweep": N_("sweep: with {sessions:count} sessions on {strategy:text}, the longest wait was {longest:ms}."),
    # explanation
    "slot_until_end": N_("A sequence owns a slot from its START to its END, whether or not it is sending."),
    "capacity": N_(
        "Capacity is instances × slots = {capacity:count} sequences (for oldest, instances × max_candidate_sequences)."
    ),
    "backlog": N_(
        "A new sequence that finds no free slot waits in the backlog, without limit and without an error, and "
        "Triton counts that wait as queue time of its first request: here the longest was {longest:ms}, about one "
        "whole earlier stream, while the instance was busy only {busy:percent} of the time."
    ),
    "slots_not_server": N_("The server is not overloaded; its slots are."),
    "oldest_same": N_(
        "At the same slot count oldest adds no capacity: it batches differently, but a sequence still needs one of "
        "its candidate places until END. Its capacity is max_candidate_sequences, which may exceed max_batch_size, "
        "so oldest holds more only when that is set higher."
    ),
    "cure": N_(
        "The cure is more slots (max_batch_size / max_candidate_sequences) or instances, clients that send END "
        "promptly, and an idle timeout for the ones that never do; the sweep shows the wait growing once sessions "
        "exceed capacity."
    ),
}
STEPS = {
    "deploying": N_("Deploying {strategy:text}: {instances:count} instance × {slots:count} slots"),
    "sessions": N_("{sessions:count} sessions on {strategy:text}"),
    "sweep": N_("Sweep: {sessions:count} sessions on {strategy:text}"),
    "measuring": N_("Measuring"),
}

# Each chart's message in words, beside it (figures.py beside it): numbers read off the chart.
CHART_SUMMARIES = {
    "waits": N_("Sessions whose first chunk waited for a slot: {strategies:text}."),
    "waits_item": N_("{strategy:text}: {waited:count} of {sessions:count}, the longest {longest:ms}"),
    "holding": N_("Sessions that held a slot until END: {strategies:text}."),
    "holding_item": N_("{strategy:text}: {sessions:count}, the longest for {longest:seconds}"),
    "sweep": N_("The longest wait as sessions were opened (capacity {capacity:count}): {strategies:text}."),
    "sweep_item": N_("{strategy:text}: {low:ms} with {few:count} open, {high:ms} with {many:count}"),
}
