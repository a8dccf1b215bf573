"""The tensors each session sends, step by step: generated from the model's metadata, or a data file's.

A generated input is drawn from a generator seeded with (seed, session, step, input), so every
session has its own input history, the same in every run with the same seed, and nothing is
stored: memory does not grow with the number of sessions. A data file (perf_analyzer's
--input-data JSON, app/checker/engine/input_data.py) gives each session a stream of its own.

Variable dimensions (-1) take their sizes from `--shape NAME:d1,d2` (as perf_analyzer's option).
Where no --shape sizes an input, the checker draws the sizes itself (perf_analyzer would refuse):
one whole number from DEFAULT_SIZES per request, which every unsized variable dimension of that
request takes, so inputs whose lengths must agree (tokens and their mask) agree. The sizes are
drawn from the check's seed, anew for each session and step (DrawnSizes.per "request"), except
where the dynamic batcher must stack the requests: Triton puts requests into one batch only when
each variable input not marked allow_ragged_batch has the same shape in all of them (core
backend_model.cc and dynamic_batch_scheduler.cc at r24.10; server docs/user_guide/ragged_batching.md),
and the stateless checks send every request concurrently with any other, so there one size is
drawn for the whole check (per "run"). The sequence batcher applies the same rule (under direct,
a slot whose next request differs in shape gets a padding row in that batch and waits for a
later one), which changes when a request runs, not what a sound model answers; varied sizes there give
each session its own history of lengths.

Every Triton datatype is generated: BOOL, UINT8..UINT64, INT8..INT64, FP16, BF16 (numpy via
ml_dtypes, as tritonclient wants), FP32, FP64 and BYTES (short ASCII strings).
"""
from __future__ import annotations

import math
from collections.abc import Iterable
from dataclasses import dataclass, field
from functools import lru_cache
from typing import TypeAlias

import numpy as np
from tritonclient.utils import triton_to_np_dtype

from app.checker.engine.aliases import Array, Arrays
from app.checker.engine.facts import ModelFacts, TensorSpec
from app.lab.json_value import JSONObject
from app.lab.problems import LabError, Problem

INT_RANGE = (-50, 50)  # small values: a model that sums or accumulates them stays far from overflow
UINT_RANGE = (0, 100)
TEXT_LETTERS = np.frombuffer(b"abcdefghijklmnopqrstuvwxyz", dtype=np.uint8)
MAX_ELEMENTS = 1 << 20  # per tensor: a shape that asks for more is surely a typo
# Elements per variable dimension that no --shape sizes (both ends included): short enough that a
# check stays quick, varied enough that a model which assumes one length shows it.
DEFAULT_SIZES = (1, 16)
_SIZES_STREAM = 0x5A  # the sizes' own generator stream, apart from the tensors' (see _drawn)
_SIZES_PER_SESSION = 256  # one drawn size per step; steps beyond wrap (the options allow 200)


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


def concrete_shapes(facts: ModelFacts, given: dict[str, tuple[int, ...]]) -> dict[str, tuple[int, ...] | None]:
    """Each input's dims with variable ones filled from `given`; None for a variable input that
    `given` does not size (the data file's shapes or the drawn sizes fill it).

    Problems: a shape for an input the model lacks, of the wrong rank, contradicting a fixed
    dimension, or holding more than MAX_ELEMENTS."""
    specs = {s.name: s for s in facts.inputs}
    problems = []
    for name in given:
        if name not in specs:
            problems.append(Problem("check_shape_unknown_input", {"name": name, "inputs": ", ".join(specs) or "-"}))
    out: dict[str, tuple[int, ...] | None] = {}
    for spec in facts.inputs:
        dims = given.get(spec.name)
        if dims is None:
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


def dims_text(dims: Iterable[int]) -> str:
    """Dimensions as the messages write them: [1, -1]."""
    return "[" + ", ".join(str(d) for d in dims) + "]"


def generate(spec: TensorSpec, dims: tuple[int, ...], rng: np.random.Generator) -> Array:
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


@dataclass(frozen=True)
class DrawnSizes:
    """The sizes drawn for the variable dimensions no --shape sizes: whole numbers from low to high
    (both included), one per request ("request": anew for each session and step) or one for the
    whole check ("run"), from the check's seed."""

    low: int
    high: int
    per: str  # "request" or "run"
    seed: int = 0

    def size(self, session: int, step: int) -> int:
        """The size every unsized variable dimension of this request takes."""
        if self.per == "run":
            session, step = 0, 0
        return int(_drawn(self.seed, self.low, self.high, session)[step % _SIZES_PER_SESSION])

    def sizes(self, lengths: list[int]) -> Array:
        """Every size the requests of sessions of these lengths take (one per session and step)."""
        if self.per == "run":
            return np.array([self.size(0, 0)])
        drawn = [np.resize(_drawn(self.seed, self.low, self.high, s), n) for s, n in enumerate(lengths) if n > 0]
        return np.concatenate(drawn) if drawn else np.array([self.size(0, 0)])

    def to_json(self) -> JSONObject:
        return {"low": self.low, "high": self.high, "per": self.per}


@lru_cache(maxsize=1024)
def _drawn(seed: int, low: int, high: int, session: int) -> Array:
    """One session's sizes, step by step: a generator of its own (a spawn key the tensors' seeds
    never take), so the sizes do not change the values and the same seed draws the same sizes."""
    rng = np.random.default_rng(np.random.SeedSequence(seed, spawn_key=(_SIZES_STREAM, session)))
    sizes = rng.integers(low, high + 1, size=_SIZES_PER_SESSION)
    sizes.setflags(write=False)  # shared by every caller through the cache
    return sizes


def drawn_sizes(facts: ModelFacts, dims: dict[str, tuple[int, ...] | None], seed: int) -> DrawnSizes | None:
    """How the inputs `dims` leaves unsized get their sizes; None when every input is sized.

    One size per run where the dynamic batcher must stack the requests (a variable input without
    allow_ragged_batch), else one per request. The top of DEFAULT_SIZES comes down where an input
    with several variable dimensions would hold more than MAX_ELEMENTS."""
    unsized = [spec for spec in facts.inputs if dims.get(spec.name) is None and spec.variable]
    if not unsized:
        return None
    low, high = DEFAULT_SIZES
    for spec in unsized:
        fixed = math.prod(d for d in spec.dims if d >= 0)
        variable = sum(1 for d in spec.dims if d < 0)
        while high > low and fixed * high**variable > MAX_ELEMENTS:
            high -= 1
    ragged = {str(i.get("name")): bool(i.get("allow_ragged_batch", False)) for i in facts.config.get("input", [])}
    stacked = facts.scheduler == "dynamic" and any(not ragged.get(spec.name, False) for spec in unsized)
    return DrawnSizes(low, high, "run" if stacked else "request", seed)


def sized(spec: TensorSpec, size: int) -> tuple[int, ...]:
    """spec's dims with every variable dimension `size` long."""
    return tuple(size if d < 0 else d for d in spec.dims)


@dataclass(frozen=True)
class ShapeUsed:
    """The shapes one input had in the requests sent (without the batch dimension): the smallest
    and the largest (element-wise), and what sized its variable dimensions: "model" (none are
    variable), "shape" (--shape), "data_file" or "drawn" (DrawnSizes)."""

    name: str
    dims: tuple[int, ...]  # the model's, -1 variable
    sized_by: str
    smallest: tuple[int, ...]
    largest: tuple[int, ...]

    def to_json(self) -> JSONObject:
        return {"name": self.name, "dims": list(self.dims), "sized_by": self.sized_by, "smallest": list(self.smallest),
                "largest": list(self.largest)}


@dataclass(frozen=True)
class InputsUsed:
    """What the report says about the inputs beyond their source: the drawn sizes (None when
    nothing was drawn) and each input's shapes."""

    sizes: DrawnSizes | None = None
    shapes: tuple[ShapeUsed, ...] = ()

    def to_json(self) -> JSONObject:
        return {"sizes": self.sizes.to_json() if self.sizes else None, "shapes": [s.to_json() for s in self.shapes]}


@dataclass
class Generated:
    """Inputs drawn from the model's metadata; `lengths[i]` steps for session i. `dims[name]` is
    None for a variable input that `sizes` sizes."""

    facts: ModelFacts
    dims: dict[str, tuple[int, ...] | None]
    lengths: list[int]
    seed: int = 0
    sizes: DrawnSizes | None = None

    source = "generated"
    golden = None  # no golden outputs: nothing says what the model should answer

    def __post_init__(self) -> None:
        unsized = [name for name, dims in self.dims.items() if dims is None]
        if unsized and self.sizes is None:
            raise ValueError(f"no sizes for the variable inputs {', '.join(unsized)}: give DrawnSizes")

    @property
    def sessions(self) -> int:
        return len(self.lengths)

    def expected(self, session: int, step: int) -> Arrays | None:
        return None

    def shape(self, spec: TensorSpec, session: int, step: int) -> tuple[int, ...]:
        dims = self.dims[spec.name]
        if dims is not None:
            return dims
        assert self.sizes is not None  # __post_init__ refuses a variable input without sizes
        return sized(spec, self.sizes.size(session, step))

    def arrays(self, session: int, step: int) -> Arrays:
        out = {}
        for index, spec in enumerate(self.facts.inputs):
            rng = np.random.default_rng([self.seed, session, step, index])
            out[spec.name] = with_batch(self.facts, generate(spec, self.shape(spec, session, step), rng))
        return out

    def used(self) -> InputsUsed:
        drawn = self.sizes.sizes(self.lengths) if self.sizes else None
        shapes = []
        for spec in self.facts.inputs:
            dims = self.dims[spec.name]
            if dims is not None:
                shapes.append(ShapeUsed(spec.name, spec.dims, "shape" if spec.variable else "model", dims, dims))
            else:
                assert drawn is not None  # __post_init__ refuses a variable input without sizes
                shapes.append(ShapeUsed(spec.name, spec.dims, "drawn", sized(spec, int(drawn.min())), sized(spec, int(drawn.max()))))
        return InputsUsed(self.sizes, tuple(shapes))


@dataclass
class FromData:
    """Inputs from a data file: session i plays the file's sequence i % len(sequences) (perf_analyzer
    calls each a stream), `lengths[i]` steps, round robin when it is asked for more steps than the
    sequence has (as perf_analyzer does). `golden` (the file's validation_data, aligned with `sequences`) says what each step should
    answer. A sequence model's wrapped steps have none: they replay earlier inputs onto a state
    that has moved on, so the file's answers for those inputs no longer apply; a stateless
    model's answer depends on its inputs alone, so step k compares with golden step k % length.
    `given` holds the --shape sizes (the file's entries without a "shape" of their own take them)."""

    facts: ModelFacts
    sequences: list[list[Arrays]]
    lengths: list[int]
    golden: list[list[Arrays]] | None = None
    given: dict[str, tuple[int, ...]] = field(default_factory=dict)

    source = "data_file"

    @property
    def sessions(self) -> int:
        return len(self.lengths)

    def sequence_of(self, session: int) -> int:
        """Which of the file's sequences `session` plays."""
        return session % len(self.sequences)

    def entry(self, session: int, step: int) -> Arrays:
        sequence = self.sequences[self.sequence_of(session)]
        return sequence[step % len(sequence)]

    def arrays(self, session: int, step: int) -> Arrays:
        return {name: with_batch(self.facts, value) for name, value in self.entry(session, step).items()}

    def used(self) -> InputsUsed:
        """The shapes of the entries the sessions play (an optional input no entry gives is left out)."""
        found: dict[str, set[tuple[int, ...]]] = {}
        for session, length in enumerate(self.lengths):
            sequence = self.sequences[self.sequence_of(session)]
            for entry in sequence[: min(length, len(sequence))]:  # round robin plays no entry the first pass did not
                for name, value in entry.items():
                    found.setdefault(name, set()).add(tuple(value.shape))
        shapes = []
        for spec in self.facts.inputs:
            if spec.name not in found:
                continue
            smallest = tuple(min(d) for d in zip(*found[spec.name], strict=True))
            largest = tuple(max(d) for d in zip(*found[spec.name], strict=True))
            if not spec.variable:
                sized_by = "model"
            elif smallest == largest == self.given.get(spec.name):
                sized_by = "shape"
            else:
                sized_by = "data_file"
            shapes.append(ShapeUsed(spec.name, spec.dims, sized_by, smallest, largest))
        return InputsUsed(None, tuple(shapes))

    def expected(self, session: int, step: int) -> Arrays | None:
        """The golden outputs of the session's step (with the batch dimension, as replies have
        it), or None where there are none to compare with."""
        if self.golden is None:
            return None
        golden = self.golden[self.sequence_of(session)]
        if step >= len(golden) and self.facts.sequence:
            return None
        return {name: with_batch(self.facts, value) for name, value in golden[step % len(golden)].items()}

    def wrapped(self) -> list[int]:
        """The file's sequences (from 0) that some session plays for more steps than they have."""
        return wrapped_sequences([len(s) for s in self.sequences], self.lengths)


# What the measurement plays: generated inputs or a data file's.
InputSource: TypeAlias = "Generated | FromData"


def wrapped_sequences(sequence_lengths: list[int], lengths: list[int]) -> list[int]:
    """The data file's sequences (from 0) that some session (session i plays sequence i % len(sequence_lengths))
    plays for more steps than they have; none without a data file."""
    n = len(sequence_lengths)
    return sorted({i % n for i, length in enumerate(lengths) if length > sequence_lengths[i % n]}) if n else []


def with_batch(facts: ModelFacts, array: Array) -> Array:
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
