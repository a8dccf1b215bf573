"""A broken stream check's reproducer: the requests as perf_analyzer's --input-data JSON, their
lone streams as validation_data. Pure: a check's result in, a document out.

The requests are every broken stream's, and every request whose state one of them continued
(stream_diagnosis's `source`), in arrival order, one entry each (a flat "data" list: a decoupled
model's request is its whole exchange). Send them staggered as the check did (the report's
streams.gap_s apart) to see the break again. validation_data holds each request's lone stream,
every output's responses one after another as {"content": [...], "shape": [responses, *dims]}:
the golden streams `batching-lab check --input-data` compares with (stream_golden.py); perf_analyzer
itself validates one response per request, so it cannot check a stream against them. A client
fault that left state behind (stream_cancelled) exports its victim and neighbours; perf_analyzer
cannot cancel, so the cancel is replayed from the JSON report (streams.fault: when each was sent;
the verdict's values.witness: after how many responses the victim's client cancelled it).
"""
from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np

from app.checker.engine.aliases import Arrays
from app.checker.engine.facts import TensorSpec
from app.checker.engine.reports import export
from app.checker.engine.reports.export import InputData
from app.checker.engine.streaming.faults import BY_CODE
from app.lab.json_value import JSON, JSONObject

if TYPE_CHECKING:
    from app.checker.engine.run import CheckResult


def failing_requests(result: CheckResult) -> list[int]:
    """Requests of broken streams, and those whose state they continued, in order."""
    found: set[int] = set()
    for v in result.verdicts:
        if v.verdict != "broken":
            continue
        for entry in (v.values.get("stream_diagnosis") or {}).get("streams") or []:
            found.add(int(entry["request"]))
            if entry.get("source"):
                found.add(int(entry["source"]["request"]))
        first = v.values.get("first")
        if first is not None:
            found.add(int(first["session"]))
        for fault in result.streams.faults if result.streams is not None else []:
            if v.check == BY_CODE[fault.fault].check and fault.victim is not None:
                # a leak after the fault: the victim and its neighbours are the traffic that left it (the
                # report's streams.faults and values.witness say when the victim's client cancelled it or went)
                found.update([fault.victim.request, *(n.request for n in fault.neighbours)])
    return sorted(found)


def failing_input_data(result: CheckResult) -> InputData | None:
    """The check's reproducer, whatever the model: a stream check's (input_data below), else the
    failing sessions' (export.input_data)."""
    return input_data(result) if result.streams is not None else export.input_data(result)


def input_data(result: CheckResult) -> InputData | None:
    """perf_analyzer's --input-data document for the failing requests; None when nothing failed."""
    facts, source, measured = result.facts, result.source, result.streams
    assert source is not None and measured is not None  # a stream check's result has both
    requests = failing_requests(result)
    if not requests:
        return None
    data: list[JSON] = [export._step(facts.inputs, source.arrays(r, 0), facts.batched) for r in requests]
    validation: list[JSON] = [_stream(facts.outputs, measured.alone["a"][r].responses) for r in requests]
    return {"data": data, "validation_data": validation}


def _stream(specs: tuple[TensorSpec, ...], responses: list[Arrays]) -> JSONObject:
    out: JSONObject = {}
    for spec in specs:
        arrays = [np.asarray(r[spec.name]) for r in responses if r.get(spec.name) is not None]
        if len(arrays) != len(responses) or not arrays:
            continue
        stacked = np.stack(arrays)
        out[spec.name] = export.tensor(stacked, TensorSpec(spec.name, spec.datatype, (-1, *spec.dims)))
    return out
