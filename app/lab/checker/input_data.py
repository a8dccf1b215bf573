"""perf_analyzer's --input-data JSON, read into tensors for the model the checker checks.

The format (perf_analyzer docs/input_data.md at r24.10): {"data": [...]}, where each entry maps
every input name to its tensor for one batch-1 request, and `data` may instead hold several
lists of entries: one stream per sequence, played back to one correlation ID. A tensor is a
row-major list of values, {"b64": "..."} (little-endian bytes; a BYTES element is a 4-byte
length and its bytes), or {"content": <list or b64>, "shape": [...]} for variable dimensions.
Without "shape" the size comes from --shape or the model's fixed dims; where exactly one
dimension is variable and nothing gives it, the element count does. `validation_data` is
perf_analyzer's golden outputs; the checker measures its own references, so it is not read.

Every mismatch with the model is a Problem naming the stream, the step and the input.
"""
from __future__ import annotations

import base64
import binascii
import json
import math
import struct
from pathlib import Path

import numpy as np
from tritonclient.utils import triton_to_np_dtype

from app.lab.checker import inputs
from app.lab.checker.facts import ModelFacts, TensorSpec
from app.lab.problems import LabError, Problem


class _Bad(Exception):
    """One tensor's problem; streams() adds where it is (stream, step, input) before it becomes a Problem."""

    def __init__(self, code: str, **values):
        super().__init__(code)
        self.code, self.values = code, values


def load(path: Path) -> dict:
    try:
        return json.loads(Path(path).read_text())
    except OSError as err:
        raise LabError("check_data_unreadable", source=str(path), error=err.strerror or str(err)) from None
    except ValueError as err:
        raise LabError("check_data_unreadable", source=str(path), error=str(err)) from None


def streams(document: dict, facts: ModelFacts, dims: dict[str, tuple[int, ...] | None], source: str = "input data") -> list[list[dict[str, np.ndarray]]]:
    """The file's streams of steps as arrays (no batch dimension); LabError with every problem found."""
    data = document.get("data") if isinstance(document, dict) else None
    if not isinstance(data, list) or not data:
        raise LabError("check_data_no_data", source=source)
    if all(isinstance(entry, list) for entry in data):
        raw = data
    elif all(isinstance(entry, dict) for entry in data):
        raw = [data]  # one stream (a sequence model plays it to one ID; a stateless one sends each entry)
    else:
        raise LabError("check_data_mixed_streams", source=source)
    specs = {s.name: s for s in facts.inputs}
    problems: list[Problem] = []
    out = []
    for s, stream in enumerate(raw):
        if not stream:
            problems.append(Problem("check_data_empty_stream", {"source": source, "stream": s + 1}))
            continue
        steps = []
        for k, entry in enumerate(stream):
            where = {"source": source, "stream": s + 1, "step": k + 1}
            if not isinstance(entry, dict):
                problems.append(Problem("check_data_not_an_entry", where))
                continue
            unknown = sorted(set(entry) - set(specs))
            if unknown:
                problems.append(Problem("check_data_unknown_input", {**where, "name": ", ".join(unknown), "inputs": ", ".join(specs)}))
            tensors = {}
            for name, spec in specs.items():
                if name not in entry:
                    if not spec.optional:
                        problems.append(Problem("check_data_missing_input", {**where, "name": name}))
                    continue
                try:
                    tensors[name] = tensor(entry[name], spec, dims.get(name))
                except _Bad as bad:
                    problems.append(Problem(bad.code, {**where, "name": name, **bad.values}))
            steps.append(tensors)
        out.append(steps)
        if len(problems) > 20:  # a wholly wrong file: the first ones say enough
            break
    if problems:
        raise LabError(problems[:20])
    return out


def tensor(value, spec: TensorSpec, dims: tuple[int, ...] | None) -> np.ndarray:
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


def _flat(value, spec: TensorSpec) -> np.ndarray:
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


def _from_bytes(raw: bytes, spec: TensorSpec) -> np.ndarray:
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
