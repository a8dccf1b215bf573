"""Words of the state_by_row exercise (engine.py beside it). SCENARIO quotes its set-up (8 requests, 40 ms apart,
3 to 12 tokens, max_batch_size 4)."""
from __future__ import annotations

from app.i18n import N_

TITLE = N_("In flight, state kept by batch row")
SCENARIO = N_(
    "A generator keeps each request's running state (its stand-in for a KV cache) in a table. Served with "
    "in-flight batching (iterative sequences, max_batch_size 4), 8 requests of 3 to 12 tokens arrive about 40 ms "
    "apart. One deployment keys the state by the correlation ID Triton gives each request; the other, by the row "
    "the request has in the current execution."
)
QUESTION = N_("What happens to the deployment that keys state by batch row?")
OPTIONS = {
    "same": N_("Nothing: a request keeps its row from its first step to its last, so both give the right tokens."),
    "crossed": N_("As requests join and leave, rows change hands: its tokens continue other requests' state, while "
                  "the correlation-keyed one stays right."),
    "both_wrong": N_("Both go wrong: in-flight batching mixes requests up whatever the key."),
}
NUMBERS = {
    "wrong_tokens_corrid": N_("keyed by correlation ID: wrong tokens"),
    "wrong_tokens_row": N_("keyed by row: wrong tokens"),
    "wrong_tokens_from_another_request": N_("keyed by row: wrong tokens that continued another request"),
    "intact_requests_corrid": N_("keyed by correlation ID: requests all right"),
    "intact_requests_row": N_("keyed by row: requests all right"),
    "requests": N_("requests per deployment"),
}
FINDINGS = {
    "corrid": N_("Keyed by correlation ID: {wrong:count} wrong tokens; {intact:count} of {requests:count} requests "
                 "entirely right."),
    "row": N_("Keyed by row: {wrong:count} wrong tokens, {foreign:count} of them continuing another request's state; "
              "{intact:count} of {requests:count} requests entirely right."),
    "first_crossing": N_("The first crossing: request {tag:count}'s token {step:count}, in row {row:count}, continued "
                         "request {owner:count}'s state."),
    "why_rows_move": N_(
        "In flight, each execution holds whichever requests are due now: a request that finishes leaves, a new one "
        "joins, and the requests are put in rows afresh, so a request's row can change from one step to the next."
    ),
    "why_corrid": N_(
        "The correlation ID Triton gives each request (the CORRID control) stays the same for all its steps, so state "
        "kept under it follows the request."
    ),
    "why_static_hides": N_(
        "Under static batching a batch keeps its rows from start to end, which is why row-keyed state can look right "
        "there and break only when batching turns in flight."
    ),
}
STEPS = {
    "run_corrid": N_("In flight, state keyed by correlation ID: {requests:count} requests"),
    "run_row": N_("In flight, state keyed by batch row: the same {requests:count} requests"),
    "measuring": N_("Measuring"),
}
CHART_SUMMARIES: dict[str, str] = {}
