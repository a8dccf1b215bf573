"""Words of the cancelled_generation exercise (engine.py beside it). SCENARIO quotes its constants
(LONG_TOKENS 40, CANCEL_AFTER 3, SHORT_TOKENS 4)."""
from __future__ import annotations

from app.i18n import N_

TITLE = N_("A request cancelled mid-generation: who frees its state?")
SCENARIO = N_(
    "A generator served in flight keeps a state cell per request (its stand-in for a KV cache) and reports how many "
    "it holds (the gauge gen_state_cells). A client asks for 40 tokens and cancels its request after 3, while two "
    "requests of 4 tokens run beside it. One deployment's model asks request.is_cancelled() and frees the cell "
    "(honour_cancel true); the other's never asks (honour_cancel false)."
)
QUESTION = N_("After the run, what is left of the cancelled request's state cell?")
OPTIONS = {
    "triton_frees": N_("Nothing in either deployment: Triton ends the cancelled request and clears the model's state with it."),
    "model_must": N_("The deployment that checks is_cancelled() freed it; the one that never asks still holds it, and "
                     "nothing will ever free it."),
    "neither": N_("Both still hold it: a cancelled request's state is only freed when the model is reloaded."),
}
NUMBERS = {
    "cells_left_honour": N_("honour_cancel true: cells left after the run"),
    "cells_left_ignore": N_("honour_cancel false: cells left after the run"),
    "cancelled_after_tokens_honour": N_("honour_cancel true: tokens the cancelled request received"),
    "cancelled_after_tokens_ignore": N_("honour_cancel false: tokens the cancelled request received"),
    "short_requests_complete": N_("short requests complete (both deployments)"),
    "honour_back_after_s": N_("honour_cancel true: seconds until the gauge was back (s)"),
}
FINDINGS = {
    "honour": N_("honour_cancel true: the cancelled request received {tokens:count} tokens; the model held {left:count} "
                 "more cells after the run than before."),
    "ignore": N_("honour_cancel false: the cancelled request received {tokens:count} tokens; the model held {left:count} "
                 "more cells after the run than before."),
    "shorts": N_("The short requests beside it: {complete:count} of {all:count} complete."),
    "why_triton": N_(
        "Cancelling the gRPC call marks the request cancelled in Triton. If the model ignores that and reschedules the "
        "request, the sequence batcher drops it when it comes back to the queue and frees its place at once. If the model "
        "honours the cancel, or the batcher answers it while the request waits between steps, Triton adds no END marker, "
        "so the place stays taken until the idle timeout ends the sequence (5 s in gen_inflight). Either way Triton keeps "
        "no state for the Python backend's model."
    ),
    "why_model": N_(
        "The cell is the model's own memory, so only the model can free it: the Python backend lets it ask "
        "request.is_cancelled() at each step, answer with a final response and drop the cell. A model that never "
        "asks keeps the cell of every cancelled request, a leak that grows with every user who closes a tab."
    ),
    "why_sweep": N_(
        "Asking is not quite enough: a cancel that lands while the request waits in the queue is handled by Triton "
        "alone, and the model never sees that request again, so ours also sweeps cells no step has touched for a while."
    ),
}
STEPS = {
    "run_honour": N_("honour_cancel true: a {long:count}-token request cancelled after {tokens:count} tokens"),
    "run_ignore": N_("honour_cancel false: the same request cancelled after {tokens:count} tokens"),
    "measuring": N_("Measuring"),
}
CHART_SUMMARIES = {
    "cells": N_("State cells before and after the run: {deployments:text}."),
    "cells_item": N_("{deployment:text} {before:count} before, {after:count} after"),
}
