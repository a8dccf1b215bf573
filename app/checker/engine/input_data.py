"""perf_analyzer's --input-data JSON, read into tensors for the model the checker checks.

The format (perf_analyzer's docs/input_data.md at r24.10): {"data": [...]}, where each entry maps
every input name to its tensor for one batch-1 request, and `data` may instead hold several
lists of entries: one stream per sequence, played back to one correlation ID. A tensor is a
row-major list of values, {"b64": "..."} (little-endian bytes; a BYTES element is a 4-byte
length and its bytes), or {"content": <list or b64>, "shape": [...]} for variable dimensions.
Without "shape" the size comes from --shape or the model's fixed dims; where exactly one
dimension is variable and nothing gives it, the element count does.

`validation_data` holds the golden outputs (perf_analyzer's docs/input_data.md, "Output Validation"): the same
format as "data" and aligned with it one to one (perf_analyzer's data_loader.cc refuses a file
whose validation_data has another count of streams, or a stream another count of steps): each
entry maps output names to tensors in the same forms, checked against the model's outputs. An
output an entry leaves out is not compared at that step (perf_analyzer's loader wants every output
in every entry; the checker lets a file leave out, say, an output that reports placement). A
golden NaN is refused: NaN equals nothing, so no reply could ever match it.

Every mismatch with the model is a Problem naming the stream, the step and the input or output.
"""
from __future__ import annotations

import base64
import binascii
import json
import math
import struct
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
from tritonclient.utils import triton_to_np_dtype

from app.checker.engine import inputs
from app.checker.engine.aliases import Array, Arrays
from app.checker.engine.facts import ModelFacts, TensorSpec
from app.lab.problems import LabError, Problem


class _Bad(Exception):
    """One tensor's problem; sequences() adds where it is (sequence, step, input) before it becomes a Problem."""

    def __init__(self, code: str, **values: object):
        super().__init__(code)
        self.code, self.values = code, values


# The document stays Any: what it holds is what this module checks, key by key, before it becomes arrays.
def load(path: Path) -> dict[str, Any]:
    try:
        document: dict[str, Any] = json.loads(Path(path).read_text())
        return document
    except OSError as err:
        raise LabError("check_data_unreadable", source=str(path), error=err.strerror or str(err)) from None
    except ValueError as err:
        raise LabError("check_data_unreadable", source=str(path), error=str(err)) from None


def sequences(document: dict[str, Any], facts: ModelFacts, dims: dict[str, tuple[int, ...] | None],
            source: str = "input data") -> list[list[Arrays]]:
    """The file's sequences of steps (perf_analyzer's streams) as arrays (no batch dimension); LabError with every problem found."""
    data = document.get("data") if isinstance(document, dict) else None
    if not isinstance(data, list) or not data:
        raise LabError("check_data_no_data", source=source)
    if all(isinstance(entry, list) for entry in data):
        raw = data
    elif all(isinstance(entry, dict) for entry in data):
        raw = [data]  # one sequence (a sequence model plays it to one ID; a stateless one sends each entry)
    else:
        raise LabError("check_data_mixed_streams", source=source)
    return _read(raw, _INPUTS, {s.name: s for s in facts.inputs}, dims, source)


def golden(document: dict[str, Any], facts: ModelFacts, source: str = "input data") -> list[list[Arrays]] | None:
    """The golden outputs of `validation_data`, aligned with the streams of "data" (read first,
    with sequences()); None when the file has none. LabError with every problem found."""
    if not isinstance(document, dict) or "validation_data" not in document:
        return None
    data, validation = document["data"], document["validation_data"]
    flat = all(isinstance(entry, dict) for entry in data)
    if not isinstance(validation, list) or any(isinstance(e, list) == flat for e in validation):
        # perf_analyzer reads the golden entries the way "data" is laid out: entries, or streams of entries
        raise LabError("check_golden_not_entries" if flat else "check_golden_not_streams", source=source)
    raw, expected = ([validation], [data]) if flat else (validation, data)
    if len(raw) != len(expected):
        raise LabError("check_golden_stream_count", source=source, expected=len(expected), got=len(raw))
    wrong = [Problem("check_golden_step_count", {"source": source, "stream": s + 1, "expected": len(d), "got": len(g)})
             for s, (g, d) in enumerate(zip(raw, expected, strict=True)) if len(g) != len(d)]
    if wrong:
        raise LabError(wrong[:MAX_PROBLEMS])
    specs = {s.name: s for s in facts.outputs}
    return _read(raw, _OUTPUTS, specs, {name: None if spec.variable else spec.dims for name, spec in specs.items()}, source)


MAX_PROBLEMS = 20  # a wholly wrong file: the first ones say enough


@dataclass(frozen=True)
class _Side:
    """What differs between reading inputs ("data") and golden outputs ("validation_data")."""

    prefix: str  # of its Problem codes: check_data_bad_value is check_golden_bad_value for an output
    unknown: str  # the code for a name the model lacks
    names: str  # the value that lists the model's names
    required: bool  # a name the entry leaves out is a problem
    refuse_nan: bool  # a NaN is a problem (no reply can match a golden NaN)


_INPUTS = _Side("check_data", "check_data_unknown_input", "inputs", required=True, refuse_nan=False)
_OUTPUTS = _Side("check_golden", "check_golden_unknown_output", "outputs", required=False, refuse_nan=True)


def _read(raw: list[Any], side: _Side, specs: dict[str, TensorSpec], dims: Mapping[str, tuple[int, ...] | None], source: str) -> list[list[Arrays]]:
    problems: list[Problem] = []
    out = []
    for s, sequence in enumerate(raw):
        if not sequence:
            problems.append(Problem("check_data_empty_stream", {"source": source, "stream": s + 1}))
            continue
        steps = []
        for k, entry in enumerate(sequence):
            where = {"source": source, "stream": s + 1, "step": k + 1}
            if not isinstance(entry, dict):
                problems.append(Problem(f"{side.prefix}_not_an_entry", where))
                continue
            unknown = sorted(set(entry) - set(specs))
            if unknown:
                problems.append(Problem(side.unknown, {**where, "name": ", ".join(unknown), side.names: ", ".join(specs)}))
            tensors = {}
            for name, spec in specs.items():
                if name not in entry:
                    if side.required and not spec.optional:
                        problems.append(Problem("check_data_missing_input", {**where, "name": name}))
                    continue
                try:
                    tensors[name] = tensor(entry[name], spec, dims.get(name))
                    if side.refuse_nan and _has_nan(tensors[name]):
                        raise _Bad("check_golden_nan")
                except _Bad as bad:
                    problems.append(Problem(bad.code.replace("check_data", side.prefix, 1), {**where, "name": name, **bad.values}))
            steps.append(tensors)
        out.append(steps)
        if len(problems) > MAX_PROBLEMS:
            break
    if problems:
        raise LabError(problems[:MAX_PROBLEMS])
    return out


def _has_nan(array: Array) -> bool:
    if array.dtype.kind != "f" and array.dtype.name != "bfloat16":  # BF16 (ml_dtypes) is a kind of its own
        return False
    return bool(np.isnan(array.astype(np.float64)).any())


def tensor(value: Any, spec: TensorSpec, dims: tuple[int, ...] | None) -> Array:
    """One tensor in any of the format's forms, checked against the model's dims."""
    shape = None
    if isinstance(value, dict) and "content" in value:
        shape = value.get("shape")
        if not isinstance(shape, list) or not all(isinstance(d, int) and d >= 0 for d in shape):
            raise _Bad("check_data_bad_shape", given=str(shape))
        shape = tuple(shape)
        value = value["content"]
    flat = _flat(value, spec)
    if shape is None:
        shape = dims if dims is not None else _inferred(spec, flat.size)
    if len(shape) != len(spec.dims) or any(d >= 0 and d != g for d, g in zip(spec.dims, shape, strict=True)):
        raise _Bad("check_data_shape_mismatch", dims=inputs.dims_text(spec.dims), given=inputs.dims_text(shape))
    if math.prod(shape) != flat.size:
        raise _Bad("check_data_size_mismatch", expected=math.prod(shape), got=int(flat.size), given=inputs.dims_text(shape))
    return flat.reshape(shape)


def _inferred(spec: TensorSpec, size: int) -> tuple[int, ...]:
    variable = [i for i, d in enumerate(spec.dims) if d < 0]
    if not variable:
        return spec.dims
    fixed = math.prod(d for d in spec.dims if d >= 0)
    if len(variable) == 1 and fixed and size % fixed == 0:
        dims = list(spec.dims)
        dims[variable[0]] = size // fixed
        return tuple(dims)
    raise _Bad("check_data_shape_needed", dims=inputs.dims_text(spec.dims))


def _flat(value: object, spec: TensorSpec) -> Array:
    if isinstance(value, dict):
        if set(value) != {"b64"} or not isinstance(value["b64"], str):
            raise _Bad("check_data_bad_value", kind=spec.datatype)
        try:
            raw = base64.b64decode(value["b64"], validate=True)
        except (binascii.Error, ValueError):
            raise _Bad("check_data_bad_base64") from None
        return _from_bytes(raw, spec)
    values = np.asarray(value, dtype=object).reshape(-1) if isinstance(value, list) else np.asarray([value], dtype=object)
    if spec.datatype == "BYTES":
        if not all(isinstance(v, (str, int, float)) and not isinstance(v, bool) for v in values):
            raise _Bad("check_data_bad_value", kind=spec.datatype)
        out = np.empty(values.size, dtype=object)
        for i, v in enumerate(values):
            out[i] = str(v).encode()
        return out
    dtype = triton_to_np_dtype(spec.datatype)
    allowed = (bool, int) if spec.datatype == "BOOL" else (int,) if spec.datatype.startswith(("INT", "UINT")) else (int, float)
    if not all(isinstance(v, allowed) for v in values):
        raise _Bad("check_data_bad_value", kind=spec.datatype)
    try:
        return np.array(values.tolist(), dtype=dtype).reshape(-1)
    except (OverflowError, ValueError, TypeError):
        raise _Bad("check_data_bad_value", kind=spec.datatype) from None


def _from_bytes(raw: bytes, spec: TensorSpec) -> Array:
    if spec.datatype != "BYTES":
        dtype = np.dtype(triton_to_np_dtype(spec.datatype)).newbyteorder("<")
        if len(raw) % dtype.itemsize:
            raise _Bad("check_data_bad_base64")
        return np.frombuffer(raw, dtype=dtype).astype(dtype.newbyteorder("="))
    items, offset = [], 0
    while offset < len(raw):
        if offset + 4 > len(raw):
            raise _Bad("check_data_bad_base64")
        (length,) = struct.unpack_from("<I", raw, offset)
        offset += 4
        if offset + length > len(raw):
            raise _Bad("check_data_bad_base64")
        items.append(raw[offset : offset + length])
        offset += length
    out = np.empty(len(items), dtype=object)
    out[:] = items
    return out
