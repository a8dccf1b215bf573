"""Words of the leaked_state exercise (engine.py beside it).

SCENARIO quotes the exercise's constants (IDLE_TIMEOUT_US 500000, 12 slots, WAVES 4 x PER_WAVE 6,
GAP_S 1.2 s, SENT 3 chunks); its test checks they still match.
"""
from __future__ import annotations

from app.i18n import N_

TITLE = N_("Leaked state: the reaper never tells the model")
SCENARIO = N_(
    "A recogniser on the oldest strategy keeps each session's state in its own memory, keyed by correlation ID; "
    "Triton's max_sequence_idle_microseconds is 500000 (0.5 s), with 12 candidate slots. Mobile clients drop "
    "off: 4 waves of 6 sessions, 1.2 s apart, each send 3 chunks and vanish without END. The model exports a "
    "gauge of the state cells it holds on Triton's metrics endpoint."
)
QUESTION = N_("What happens to the state cells the model keeps for the sessions that vanished?")
OPTIONS = {
    "freed": N_("They are freed: when the reaper ends a sequence, Triton tells the model, and the gauge goes back to zero."),
    "capped": N_("They are reused: the gauge never exceeds the 12 slots, since a new sequence takes over a freed slot's state."),
    "leak": N_(
        "They pile up: the model is never told, so every vanished session leaves its cell behind until the model "
        "evicts it itself."
    ),
}
NUMBERS = {
    "sessions_abandoned": N_("sessions that vanished without END"),
    "reaper_force_ends_logged": N_("reaper force-ends in Triton's log"),
    "cells_added_no_eviction": N_("no eviction: cells added"),
    "cells_left_no_eviction": N_("no eviction: cells left at the end"),
    "peak_cells_no_eviction": N_("no eviction: peak cells"),
    "cells_left_with_eviction": N_("with eviction: cells left at the end"),
    "peak_cells_with_eviction": N_("with eviction: peak cells"),
    "cells_evicted_by_the_model": N_("with eviction: cells the model evicted"),
    "refused_chunks": N_("refused chunks"),
    "model_requests_for_the_reaps": N_("requests the model ran for the reaps"),
}
FINDINGS = {
    "keep_cells": N_(
        "No eviction: {abandoned:count} sessions vanished; the model held {added:count} more cells at the end than "
        "at the start ({start:count} → {left:count}), with only {slots:count} slots."
    ),
    "reaped": N_("Triton's log: the reaper force-ended {reaped:count} of those sequences, freeing their slots."),
    "log_unavailable": N_("Triton's log is not available here (external server)."),
    "evict_cells": N_(
        "idle_evict_s {evict:seconds}: peak {peak:count} cells; the model evicted {evicted:count} and held "
        "{left:count} after the closing session."
    ),
    "refused": N_("Refused chunks across both deployments: {refused:count} (each wave found free slots)."),
    "model_requests": N_(
        "Triton's statistics: the model ran {requests:count} requests beyond the chunks it answered, so the "
        "reaper's force-ends never reached it."
    ),
    # The explanation, sentence by sentence.
    "why_reaper": N_(
        "The sequence batcher tracks a sequence only to give it a slot. When a client goes silent for "
        "max_sequence_idle_microseconds the reaper ends the sequence and frees the slot (its lines in Triton's log "
        "say so at verbosity 1), which is why each new wave found room."
    ),
    "why_model_not_told": N_(
        "The model is not part of that: no request, no END, no callback reaches it, and the Python backend has no "
        "implicit state Triton could reset for it."
    ),
    "why_cells": N_(
        "So a model that keys state by correlation ID keeps a cell for every vanished session: {added:count} new "
        "cells for {abandoned:count} vanished sessions here, against {slots:count} slots, and on a real server that "
        "grows until memory runs out."
    ),
    "why_eviction": N_(
        "The model must clean up by itself: ours drops cells untouched for idle_evict_s ({evict:seconds} here, "
        "longer than Triton's {timeout:seconds} so no live session loses its state), and the gauge fell back to "
        "{left:count}."
    ),
    "why_timer": N_(
        "It evicts while executing, so the clean-up runs when traffic comes; a model that may sit idle needs a "
        "timer too. The same holds for session-keyed state in a dynamic-batcher model, which has no timeout at all."
    ),
}
STEPS = {
    "deploy_keep": N_("Deploying oldest, corrid-keyed, idle timeout {timeout:seconds}, no eviction"),
    "deploy_evict": N_("Deploying oldest, corrid-keyed, idle timeout {timeout:seconds}, idle_evict_s {evict:seconds}"),
    "wave_keep": N_(
        "No eviction: wave {wave:count} of {waves:count}, {sessions:count} sessions vanish after {chunks:count} chunks"
    ),
    "wave_evict": N_(
        "idle_evict_s {evict:seconds}: wave {wave:count} of {waves:count}, {sessions:count} sessions vanish after "
        "{chunks:count} chunks"
    ),
    "measuring": N_("Measuring"),
}

# Each chart's message in words, beside it (figures.py beside it): numbers read off the chart.
CHART_SUMMARIES = {
    "gauge": N_("State cells the model held: {deployments:text}."),
    "gauge_item": N_("{deployment:text}: {first:count} at the first sample, at most {peak:count}, {last:count} at the end"),
    "tally": N_("The tally: {deployments:text}."),
    "tally_item": N_("{deployment:text}: {measures:text}"),
    "measure_item": N_("{measure:text} {n:count}"),
}
