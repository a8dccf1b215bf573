"""Words of the pipelined_client exercise (engine.py beside it).

SCENARIO quotes the exercise's constants (SESSIONS 8, IN_FLIGHT 4); its test checks they still match.
"""
from __future__ import annotations

from app.i18n import N_

TITLE = N_("Pipelined clients: chunks that overtake each other")
SCENARIO = N_(
    "8 streaming sessions on the direct sequence batcher (one slot each). To cut latency, every client sends "
    "its chunks without waiting for answers: HTTP async_infer with up to 4 chunks of its session in flight, "
    "and no think time between chunks. Each chunk carries the session's correlation ID; only the first has START."
)
QUESTION = N_("In what order do each session's chunks reach the sequence batcher, and what does that do to the transcripts?")
OPTIONS = {
    "in_order": N_("In the order each client sent them, so every transcript is intact."),
    "reordered": N_(
        "Sometimes a chunk overtakes an earlier one of its session; the batcher runs them as they arrive, so those "
        "sessions come out wrong or are refused."
    ),
    "fixed_by_batcher": N_("Sometimes out of order, but the sequence batcher puts each session's chunks back in order."),
    "all_refused": N_("Triton refuses a second request for a sequence while the first is unanswered."),
}
NUMBERS = {
    "traced": N_("arrival order read from the server's trace"),
    "http_async_rounds_reordered": N_("pipelined HTTP: rounds with a chunk overtaken"),
    "http_async_rounds": N_("pipelined HTTP: rounds"),
    "http_async_sessions_reordered": N_("pipelined HTTP: sessions reordered"),
    "http_async_sessions_broken": N_("pipelined HTTP: sessions not intact"),
    "http_async_reordered_sessions_broken": N_("pipelined HTTP: reordered sessions not intact"),
    "grpc_async_sessions_reordered": N_("pipelined gRPC: sessions reordered"),
    "grpc_stream_sessions_reordered": N_("gRPC stream: sessions reordered"),
    "grpc_stream_sessions_broken": N_("gRPC stream: sessions not intact"),
    "serial_sessions_reordered": N_("one at a time: sessions reordered"),
    "serial_sessions_broken": N_("one at a time: sessions not intact"),
}
FINDINGS = {
    # One per way of sending.
    "run_http_async": N_(
        "HTTP async_infer, {in_flight:count} in flight: {rounds_reordered:count} of {rounds:count} rounds had a chunk "
        "overtaken; {sessions_reordered:count} sessions reordered, {broken:count} not intact, {reordered_broken:count} "
        "of them among the reordered."
    ),
    "run_grpc_async": N_(
        "gRPC async_infer, {in_flight:count} in flight: {rounds_reordered:count} of {rounds:count} rounds had a chunk "
        "overtaken; {sessions_reordered:count} sessions reordered, {broken:count} not intact, {reordered_broken:count} "
        "of them among the reordered."
    ),
    "run_grpc_stream": N_(
        "gRPC stream, {in_flight:count} in flight: {rounds_reordered:count} of {rounds:count} rounds had a chunk "
        "overtaken; {sessions_reordered:count} sessions reordered, {broken:count} not intact, {reordered_broken:count} "
        "of them among the reordered."
    ),
    "run_serial": N_(
        "HTTP, one at a time: {rounds_reordered:count} of {rounds:count} rounds had a chunk overtaken; "
        "{sessions_reordered:count} sessions reordered, {broken:count} not intact, {reordered_broken:count} of them "
        "among the reordered."
    ),
    "refusal": N_("A refusal seen with pipelined HTTP: `{message:text}`"),
    "untraced": N_("The server was not traced, so arrival order fell back to send time and says nothing."),
    # The explanation, sentence by sentence.
    "why_no_numbers": N_(
        "The sequence batcher keeps a sequence's requests in the order they reach it; it has no sequence numbers, "
        "so it cannot restore an order the network lost."
    ),
    "why_unary": N_(
        "Unary requests sent without waiting travel independently: over HTTP async_infer each chunk in flight takes "
        "its own pooled connection, and Triton's HTTP threads and gRPC completion queues hand them to the scheduler "
        "in whatever order they finish reading them."
    ),
    "why_overtake": N_(
        "A chunk that overtakes the one before it is run first: the recogniser folds the deltas in the wrong order "
        "(wrong symbols), and if it overtakes the START the sequence does not exist yet, so it is refused."
    ),
    "why_stream": N_(
        "One gRPC bidirectional stream per session delivers requests in the order written and Triton answers a "
        "non-decoupled model's stream in order, so it can pipeline safely; sending one chunk at a time (waiting for "
        "each answer) is safe on any transport but pays a round trip per chunk."
    ),
}
STEPS = {
    "http_async": N_("HTTP async_infer, {in_flight:count} in flight: round {round:count} of {rounds:count}"),
    "grpc_async": N_("gRPC async_infer, {in_flight:count} in flight: round {round:count} of {rounds:count}"),
    "grpc_stream": N_("gRPC stream, {in_flight:count} in flight: round {round:count} of {rounds:count}"),
    "serial": N_("HTTP, one at a time: round {round:count} of {rounds:count}"),
    "measuring": N_("Measuring"),
}

# Each chart's message in words, beside it (figures.py beside it): numbers read off the chart.
CHART_SUMMARIES = {
    "rounds": N_("Sessions with a chunk overtaken: {runs:text}."),
    "rounds_item": N_("{transport:text}: {sessions:count} in all, in {reordered:count} of {rounds:count} rounds"),
    "order": N_("Chunks that reached the scheduler out of the order they were sent: {runs:text}."),
    "order_item": N_("{transport:text}: {out:count} of {chunks:count} (round {round:count})"),
    "verdicts": N_("Transcripts over all rounds: {runs:text}."),
    "verdicts_item": N_("{transport:text}: {intact:count} intact, {wrong:count} wrong, {refused:count} refused"),
}
