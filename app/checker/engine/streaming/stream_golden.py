"""A data file for a streaming (decoupled) model: its requests, and the golden stream of each.

The requests are perf_analyzer's --input-data entries (perf_analyzer's docs/input_data.md at r24.10; read by
input_data.py): each entry is one request, in order; a file of sequences gives every step of every
stream as a request of its own, since a decoupled model's request is the whole exchange.

Golden streams: validation_data aligned with "data" entry for entry (as perf_analyzer requires),
where each output holds the tensors of every response of that request's stream, one after another:
{"content": [...], "shape": [responses, *the output's dims]} (what `batching-lab check
--export-failures` writes for a stream), or a flat list whose length the output's fixed dims
divide. A stream is then compared response by response with it, and a stream with another count of
responses differs from it. perf_analyzer itself validates one response per request, so such a file
is for this checker's golden check, not for perf_analyzer's own validation.
"""
from __future__ import annotations

from dataclasses import replace
from pathlib import Path

from app.checker.engine import input_data, inputs
from app.checker.engine.aliases import Arrays
from app.checker.engine.facts import ModelFacts, TensorSpec
from app.checker.engine.options import CheckOptions


def stream_specs(facts: ModelFacts) -> ModelFacts:
    """The model's facts with each output one dimension longer in front: the responses of a stream."""
    return replace(facts, outputs=tuple(TensorSpec(o.name, o.datatype, (-1, *o.dims), o.optional) for o in facts.outputs))


def from_data(facts: ModelFacts, options: CheckOptions, dims: dict[str, tuple[int, ...] | None]) -> inputs.FromData:
    """The file's entries as requests (session i plays entry i % entries), with golden streams
    when the file has validation_data."""
    document = options.input_data if isinstance(options.input_data, dict) else input_data.load(Path(str(options.input_data)))
    label = "input data" if isinstance(options.input_data, dict) else str(options.input_data)
    entries = [entry for sequence in input_data.sequences(document, facts, dims, source=label) for entry in sequence]
    golden = input_data.golden(document, stream_specs(facts), source=label)
    flat = [[entry] for sequence in golden for entry in sequence] if golden is not None else None
    count = options.sessions or len(entries)
    return inputs.FromData(facts, [[entry] for entry in entries], [1] * count, flat, dict(options.shapes))


def golden_stream(source: inputs.InputSource, request: int) -> Arrays | None:
    """The golden responses of a request, per output [responses, *dims]; None where the file gives none."""
    golden = getattr(source, "golden", None)
    if not golden or not isinstance(source, inputs.FromData):
        return None
    stream: Arrays = golden[source.sequence_of(request)][0]
    return stream
