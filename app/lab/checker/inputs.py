"""The tensors each session sends, step by step: generated from the model's metadata, or a data file's.

A generated input is drawn from a generator seeded with (seed, session, step, input), so every
session has its own input history, the same in every run with the same seed, and nothing is
stored: memory does not grow with the number of sessions. Variable dimensions take their sizes
from `--shape NAME:d1,d2` (as perf_analyzer's option); an input whose size nobody gave is a
Problem naming it. A data file (perf_analyzer's --input-data JSON, app/lab/checker/input_data.py)
gives each session a stream of its own.

Every Triton datatype is generated: BOOL, UINT8..UINT64, INT8..INT64, FP16, BF16 (numpy via
ml_dtypes, as tritonclient wants), FP32, FP64 and BYTES (short ASCII strings).
"""
from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
from tritonclient.utils import triton_to_np_dtype

from app.lab.checker.facts import ModelFacts, TensorSpec
from app.lab.problems import LabError, Problem

INT_RANGE = (-50, 50)  # small values: a model that sums or accumulates them stays far from overflow
UINT_RANGE = (0, 100)
TEXT_LETTERS = np.frombuffer(b"abcdefghijklmnopqrstuvwxyz", dtype=np.uint8)
MAX_ELEMENTS = 1 << 20  # per tensor: a shape that asks for more is surely a typo


def parse_shape(text: str) -> tuple[str, tuple[int, ...]]:
    """'NAME:d1,d2' -> ('NAME', (d1, d2)), as perf_analyzer's --shape; LabError shape_syntax otherwise."""
    name, sep, dims = text.rpartition(":")
    try:
        parsed = tuple(int(d) for d in dims.split(","))
    except ValueError:
        parsed = ()
    if not sep or not name or not parsed or any(d < 1 for d in parsed):
        raise LabError("check_shape_syntax", value=text)
    return name, parsed


def concrete_shapes(facts: ModelFacts, given: dict[str, tuple[int, ...]], data_supplied: bool = False) -> dict[str, tuple[int, ...] | None]:
    """Each input's dims with variable ones filled from `given`; None where a data file must say.

    Problems: a shape for an input the model lacks, of the wrong rank or contradicting a fixed
    dimension, and (without a data file) a variable input nobody sized."""
    specs = {s.name: s for s in facts.inputs}
    problems = []
    for name in given:
        if name not in specs:
            problems.append(Problem("check_shape_unknown_input", {"name": name, "inputs": ", ".join(specs) or "-"}))
    out: dict[str, tuple[int, ...] | None] = {}
    for spec in facts.inputs:
        dims = given.get(spec.name)
        if dims is None:
            if spec.variable and not data_supplied:
                problems.append(Problem("check_input_shape_needed", {"name": spec.name, "dims": dims_text(spec.dims)}))
            out[spec.name] = None if spec.variable else spec.dims
            continue
        if len(dims) != len(spec.dims) or any(d >= 0 and d != g for d, g in zip(spec.dims, dims, strict=True)):
            problems.append(Problem("check_shape_mismatch", {"name": spec.name, "dims": dims_text(spec.dims), "given": dims_text(dims)}))
            continue
        if math.prod(dims) > MAX_ELEMENTS:
            problems.append(Problem("check_shape_too_large", {"name": spec.name, "given": dims_text(dims), "high": MAX_ELEMENTS}))
            continue
        out[spec.name] = dims
    if problems:
        raise LabError(problems)
    return out


def dims_text(dims) -> str:
    """Dimensions as the messages write them: [1, -1]."""
    return "[" + ", ".join(str(d) for d in dims) + "]"


def generate(spec: TensorSpec, dims: tuple[int, ...], rng: np.random.Generator) -> np.ndarray:
    """One tensor of `spec`'s datatype and `dims`, drawn from rng."""
    kind = spec.datatype
    if kind == "BYTES":
        count = math.prod(dims)
        lengths = rng.integers(1, 9, size=count)
        letters = rng.choice(TEXT_LETTERS, size=int(lengths.sum()))
        out = np.empty(count, dtype=object)
        start = 0
        for i, n in enumerate(lengths):
            out[i] = letters[start : start + n].tobytes()
            start += n
        return out.reshape(dims)
    dtype = triton_to_np_dtype(kind)
    if kind == "BOOL":
        return rng.integers(0, 2, size=dims).astype(bool)
    if kind.startswith("UINT"):
        return rng.integers(*UINT_RANGE, size=dims).astype(dtype)
    if kind.startswith("INT"):
        return rng.integers(*INT_RANGE, size=dims).astype(dtype)
    if kind in ("FP16", "BF16", "FP32", "FP64"):
        return rng.standard_normal(size=dims).astype(dtype)
    raise LabError("check_datatype_unsupported", name=spec.name, datatype=kind)


@dataclass
class Generated:
    """Inputs drawn from the model's metadata; `lengths[i]` steps for session i."""

    facts: ModelFacts
    dims: dict[str, tuple[int, ...]]
    lengths: list[int]
    seed: int = 0

    source = "generated"
    golden = None  # no golden outputs: nothing says what the model should answer

    @property
    def sessions(self) -> int:
        return len(self.lengths)

    def expected(self, session: int, step: int) -> dict[str, np.ndarray] | None:
        return None

    def arrays(self, session: int, step: int) -> dict[str, np.ndarray]:
        out = {}
        for index, spec in enumerate(self.facts.inputs):
            rng = np.random.default_rng([self.seed, session, step, index])
            out[spec.name] = with_batch(self.facts, generate(spec, self.dims[spec.name], rng))
        return out


@dataclass
class FromData:
    """Inputs from a data file: session i plays stream i % len(streams), `lengths[i]` steps,
    round robin when it is asked for more steps than the stream has (as perf_analyzer does).
    `golden` (the file's validation_data, aligned with `streams`) says what each step should
    answer. A sequence model's wrapped steps have none: they replay earlier inputs onto a state
    that has moved on, so the file's answers for those inputs no longer apply; a stateless
    model's answer depends on its inputs alone, so step k compares with golden step k % length."""

    facts: ModelFacts
    streams: list[list[dict[str, np.ndarray]]]
    lengths: list[int]
    golden: list[list[dict[str, np.ndarray]]] | None = None

    source = "data_file"

    @property
    def sessions(self) -> int:
        return len(self.lengths)

    def stream(self, session: int) -> int:
        return session % len(self.streams)

    def arrays(self, session: int, step: int) -> dict[str, np.ndarray]:
        stream = self.streams[self.stream(session)]
        return {name: with_batch(self.facts, value) for name, value in stream[step % len(stream)].items()}

    def expected(self, session: int, step: int) -> dict[str, np.ndarray] | None:
        """The golden outputs of the session's step (with the batch dimension, as replies have
        it), or None where there are none to compare with."""
        if self.golden is None:
            return None
        stream = self.golden[self.stream(session)]
        if step >= len(stream) and self.facts.sequence:
            return None
        return {name: with_batch(self.facts, value) for name, value in stream[step % len(stream)].items()}

    def wrapped(self) -> list[int]:
        """Streams (from 0) that some session plays for more steps than they have."""
        return sorted({self.stream(i) for i, n in enumerate(self.lengths) if n > len(self.streams[self.stream(i)])})


def with_batch(facts: ModelFacts, array: np.ndarray) -> np.ndarray:
    """A batch-1 request's tensor: the batch dimension in front when the model batches."""
    return array[np.newaxis, ...] if facts.batched else array


def session_lengths(count: int, steps: int, seed: int, mixed: bool) -> list[int]:
    """Steps per session. Mixed (the sequence path): short and long sessions, the first one
    `steps` long, the second a third of that, the rest drawn in between."""
    if not mixed or steps < 3:
        return [steps] * count
    rng = np.random.default_rng([seed, 7])
    short = max(1, steps // 3)
    lengths = [int(n) for n in rng.integers(short, steps + 1, size=count)]
    lengths[0] = steps
    if count > 1:
        lengths[1] = short
    return lengths
