"""Words of the cancelled_request exercise (engine.py beside it).

SCENARIO and QUESTION quote the exercise's constants (QUEUE_WAIT_S 0.6 s, SHORT_TIMEOUT_S 0.3 s,
GIVE_UP_AT chunk 3); its test checks they still match.
"""
from __future__ import annotations

from app.i18n import N_

TITLE = N_("Cancelled and timed-out requests: a client that gives up on one chunk")
SCENARIO = N_(
    "A streaming client talks to a recogniser on the direct sequence batcher over gRPC. Each of its chunks "
    "waits about 0.6 s in the queue before it runs. The client sets client_timeout = 0.3 s, so its call for "
    "chunk 3 times out while that chunk is still queued. The client ignores the error and sends the next chunk."
)
QUESTION = N_("What does Triton do with chunk 4, the one sent after the timeout?")
OPTIONS = {
    "served": N_("It serves it normally: only the answer to the timed-out chunk was lost."),
    "refused": N_(
        "It refuses it: the timeout cancelled the queued chunk, Triton released the sequence and its slot, so the "
        "next chunk is a request without START for a sequence that no longer exists."
    ),
    "skipped": N_("It serves it, but from state that never saw the timed-out chunk, so the symbol is wrong."),
    "waits": N_("It holds it until the idle timeout ends the sequence."),
}
NUMBERS = {
    "grpc_timeout_error": N_("gRPC: error of the timed-out call"),
    "grpc_timeout_after_s": N_("gRPC: the call failed after (s)"),
    "next_chunk_outcome": N_("the next chunk on the same ID"),
    "next_chunk_error": N_("the next chunk's error"),
    "retry_outcome": N_("a retry of the same chunk on the same ID"),
    "http_timeout_error": N_("HTTP: error of the timed-out call"),
    "http_retry_state_in": N_("HTTP retry: STATE_IN read"),
    "http_retry_should_read": N_("HTTP retry: STATE_IN due"),
    "http_timed_out_chunk_was_applied": N_("HTTP: the timed-out chunk ran anyway"),
    "http_wrong_symbols_after_retry": N_("HTTP: wrong symbols after the retry"),
    "restart_slot": N_("new sequence: slot"),
    "cancelled_sequence_slot": N_("cancelled sequence: slot"),
    "restart_took_the_freed_slot": N_("the new sequence took the freed slot"),
    "restart_symbols_right": N_("new sequence: symbols right"),
    "restart_chunks": N_("new sequence: chunks"),
    "long_timeout_symbols_right": N_("long timeout: symbols right"),
    "long_timeout_chunks": N_("long timeout: chunks"),
    "log_cancelled_sequences_released": N_("server log: cancelled sequences released"),
    "log_release_for_grpc_give_ups": N_("server log: a release for every gRPC give-up"),
    "log_release_for_http_give_up": N_("server log: a release for the HTTP give-up"),
}
FINDINGS = {
    "grpc_timeout": N_(
        "gRPC client_timeout {timeout:seconds} on chunk {chunk:count}: the call failed after {after:seconds} with "
        "`{error:text}`."
    ),
    # The chunk after the timed-out one, on the same correlation ID, by what came back.
    "next_right": N_(
        "Chunk {chunk:count}, sent {later:seconds} later on the same correlation ID: served, with the right symbol."
    ),
    "next_wrong": N_(
        "Chunk {chunk:count}, sent {later:seconds} later on the same correlation ID: served, with a wrong symbol."
    ),
    "next_gave_up": N_(
        "Chunk {chunk:count}, sent {later:seconds} later on the same correlation ID: the client gave up on it too "
        "(`{error:text}`)."
    ),
    "next_refused_no_start": N_(
        "Chunk {chunk:count}, sent {later:seconds} later on the same correlation ID: refused for lacking START "
        "(`{error:text}`)."
    ),
    "next_cancelled": N_(
        "Chunk {chunk:count}, sent {later:seconds} later on the same correlation ID: cancelled (`{error:text}`)."
    ),
    "next_error": N_(
        "Chunk {chunk:count}, sent {later:seconds} later on the same correlation ID: an error (`{error:text}`)."
    ),
    # Retrying the timed-out chunk on the same ID instead, by what came back.
    "retry_right": N_("Retrying chunk {chunk:count} on the same ID instead: served, with the right symbol."),
    "retry_wrong": N_("Retrying chunk {chunk:count} on the same ID instead: served, with a wrong symbol."),
    "retry_gave_up": N_("Retrying chunk {chunk:count} on the same ID instead: the client gave up on it too."),
    "retry_refused_no_start": N_("Retrying chunk {chunk:count} on the same ID instead: refused for lacking START."),
    "retry_cancelled": N_("Retrying chunk {chunk:count} on the same ID instead: cancelled."),
    "retry_error": N_("Retrying chunk {chunk:count} on the same ID instead: an error."),
    "http_applied_twice": N_(
        "HTTP with a {timeout:seconds} network timeout: the client saw `{error:text}`, but the retried chunk "
        "{chunk:count} read STATE_IN {state_in:count} where {should_read:count} was due: the chunk the client gave "
        "up on had run anyway, so the retry applied it a second time ({wrong:count} wrong symbols from there on)."
    ),
    "http_retry": N_(
        "HTTP with a {timeout:seconds} network timeout: the retried chunk {chunk:count} read STATE_IN "
        "{state_in:count} ({should_read:count} was due)."
    ),
    "restart": N_(
        "New ID with START, context resent: slot {slot:count} (the cancelled sequence had slot {old_slot:count}), "
        "{right:count} of {chunks:count} symbols right."
    ),
    "long_timeout": N_(
        "client_timeout {timeout:seconds} (above the {wait:seconds} queue wait): {right:count} of {chunks:count} "
        "symbols right."
    ),
    "log_releases": N_(
        "Server log (verbosity raised to 1 for this run): \"Releasing canceled sequence\" for {released:count} "
        "sequences; one for each gRPC client that gave up: {grpc:yes_no}; one for the HTTP client: {http:yes_no}."
    ),
    "log_unavailable": N_("Server log: not available (external server), so the release lines cannot be shown."),
    # The explanation, sentence by sentence.
    "why_deadline": N_(
        "A gRPC client_timeout is a deadline: when it passes, gRPC cancels the call and Triton's gRPC endpoint "
        "cancels the inference request."
    ),
    "why_release": N_(
        "The sequence batcher checks for cancelled requests when it looks at a slot's queue (here at the end of "
        "the queue wait, not at the instant of the timeout); finding one, it releases the whole sequence: it frees "
        "the slot, forgets the correlation ID and cancels the sequence's other queued requests. From then on the "
        "ID is unknown, so any later chunk on it, including a retry of the same chunk, is refused "
        "(\"`{refusal:text}` ...\")."
    ),
    "why_http": N_(
        "HTTP is different. Triton's documentation names only the gRPC endpoint and the C API as ways to cancel, "
        "although the 2.51 HTTP endpoint asks Triton to cancel a request whose HTTP request is torn down. What the "
        "lab measured: the HTTP client whose call timed out left its request running; the chunk was applied, and "
        "the retry applied it twice."
    ),
    "why_running": N_(
        "A request that has already reached the model is not stopped by cancellation either, unless the model "
        "checks for it itself (not shown here: our model is fast)."
    ),
    "why_correct_client": N_(
        "A correct client either waits longer than the worst queue wait (a timeout well above it), or, after a "
        "gRPC timeout, treats the sequence as gone: it starts a new sequence with a new ID and START and resends "
        "the context the model needs (here every chunk so far), which also takes the freed slot."
    ),
}
STEPS = {
    "deploy": N_("Deploying {model:text}: every chunk of a lone session queues {wait:seconds}"),
    "grpc_carry_on": N_("gRPC: give up on a chunk, then carry on"),
    "grpc_retry": N_("gRPC: give up on a chunk, then retry it"),
    "http_retry": N_("HTTP: give up on a chunk (network timeout), then retry it"),
    "grpc_restart": N_("gRPC, done right: a new sequence with a new ID that resends the context"),
    "grpc_long_timeout": N_("gRPC, done right: a timeout ({timeout:seconds}) above the worst queue wait"),
    "measuring": N_("Measuring"),
}

# Each chart's message in words, beside it (figures.py beside it): numbers read off the chart.
CHART_SUMMARIES = {
    "steps": N_("What came back to each client: {clients:text}."),
    "client_item": N_("{client:text}: {outcomes:text}"),
    "outcome_item": N_("{n:count} × {outcome:text}"),
    "log": N_("The server logged {lines:count} lines at verbosity 1: {codes:text}."),
    "log_item": N_("{n:count} × {code:text}"),
}
