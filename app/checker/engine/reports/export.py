"""The failing sessions as perf_analyzer's --input-data JSON, with their lone references as its
validation_data (`batching-lab check --export-failures PATH`). Pure: a check's result in, a document out.

The format is perf_analyzer's docs/input_data.md and its reader (src/data_loader.cc,
src/perf_utils.cc SerializeExplicitTensor) at r24.10: {"data": [stream, ...], "validation_data":
[stream, ...]}, one stream per failing session (a list of steps; perf_analyzer plays each stream
to one correlation ID), each step an object naming every input (in "data") or every output (in
"validation_data") with its batch-1 tensor, without the batch dimension, flattened row-major.
validation_data aligns with data stream for stream and step for step, as perf_analyzer requires.
A tensor is a list of JSON values: numbers for the integer types, true/false for BOOL (the reader
takes only JSON booleans), numbers with a fraction or exponent for FP32 and FP64 (it takes only
doubles; Python writes every float so), strings for BYTES. perf_analyzer cannot read FP16 or
BF16 from lists, nor NaN or infinity, nor a string that is not UTF-8 or holds a NUL (it reads
strings as C strings): those tensors are {"b64": ...}, the little-endian bytes (a BYTES element
as its 4-byte length and its bytes). A tensor with variable dimensions is {"content": ...,
"shape": [...]}.

The sessions are those with a step beyond tolerance in any broken check (the session's inputs
are the same in every phase); each stream holds the session's steps that have a reference, from
the first. validation_data holds every output of the reference, the ignored ones too: perf_analyzer
compares every output it is given byte for byte, so a float output with noise, or one the check
ignored (placement), may fail its validation though the check held it within tolerance.
"""
from __future__ import annotations

import base64
import sys
from typing import TYPE_CHECKING, TypedDict

import numpy as np
from tritonclient.utils import serialize_byte_tensor

from app.checker.engine import compare
from app.checker.engine.aliases import Array, Arrays
from app.checker.engine.facts import TensorSpec
from app.lab.json_value import JSON, JSONObject

if TYPE_CHECKING:
    from app.checker.engine.run import CheckResult
    from app.checker.engine.sequences.measure import Tables


def failing_sessions(result: CheckResult) -> list[int]:
    """Sessions with a step beyond tolerance in a broken check, in order."""
    wrong = result.judgement.broken_steps
    if wrong.empty:
        return []
    return sorted({int(s) for s in wrong[wrong["difference"] > wrong["tolerance"]]["session"]})


class InputData(TypedDict):
    """perf_analyzer's --input-data document: the inputs and their golden outputs (a stream of entries each, or an entry each)."""

    data: list[JSON]
    validation_data: list[JSON]


def input_data(result: CheckResult) -> InputData | None:
    """perf_analyzer's --input-data document for the failing sessions; None when nothing failed."""
    facts, tables, source = result.facts, result.tables, result.source
    assert source is not None  # run_check's results have theirs
    data: list[JSON] = []
    validation: list[JSON] = []
    for session in failing_sessions(result):
        steps = _referenced_steps(tables, session)
        if not steps:
            continue
        data.append([_step(facts.inputs, source.arrays(session, k), facts.batched) for k in steps])
        validation.append([_step(facts.outputs, tables.references[(session, k)], facts.batched) for k in steps])
    if not data:
        return None
    return {"data": data, "validation_data": validation}


def _referenced_steps(tables: Tables, session: int) -> list[int]:
    length = tables.lengths[session] if session < len(tables.lengths) else 0
    steps = []
    for k in range(length):
        if (session, k) not in tables.references:
            break
        steps.append(k)
    return steps


def _step(specs: tuple[TensorSpec, ...], arrays: Arrays, batched: bool) -> JSONObject:
    return {spec.name: tensor(arrays[spec.name][0] if batched else arrays[spec.name], spec)
            for spec in specs if arrays.get(spec.name) is not None}


def tensor(array: Array, spec: TensorSpec) -> JSON:
    """One batch-1 tensor (no batch dimension) in the form perf_analyzer reads for its datatype."""
    array = np.asarray(array)
    content = _content(array.reshape(-1), spec.datatype)
    return {"content": content, "shape": [int(d) for d in array.shape]} if spec.variable else content


def _content(flat: Array, datatype: str) -> list[JSON] | JSONObject:
    if datatype == "BYTES":
        items = [v if isinstance(v, bytes) else str(v).encode() for v in flat.tolist()]
        try:
            if not any(b"\x00" in v for v in items):
                return [v.decode("utf-8") for v in items]
        except UnicodeDecodeError:
            pass
        serialized = serialize_byte_tensor(np.array(items, dtype=object))  # each element: its 4-byte length, its bytes
        return _b64(serialized.item() if serialized.size else b"")
    if datatype == "BOOL":
        return [bool(v) for v in flat.tolist()]
    if compare.is_float(datatype):
        if datatype in ("FP16", "BF16") or not np.all(np.isfinite(flat.astype(np.float64))):
            return _b64(flat.tobytes() if sys.byteorder == "little" else flat.byteswap().tobytes())
        return [float(v) for v in flat.astype(np.float64).tolist()]
    return [int(v) for v in flat.tolist()]


def _b64(raw: bytes) -> JSONObject:
    return {"b64": base64.b64encode(raw).decode("ascii")}
