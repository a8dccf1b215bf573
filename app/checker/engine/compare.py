"""How far one reply is from its reference, and how far is too far. Pure: arrays in, numbers out.

Integer, boolean and string (BYTES) outputs compare exactly. A float output (FP16, BF16, FP32,
FP64) compares within a tolerance: |got - ref| <= tolerance x max(1, |ref|), absolute for small
values and relative for large ones, so one number serves any scale. The user may set it;
otherwise it is derived from the model's own nondeterminism, measured by running every session
(or request) alone twice: NOISE_FACTOR times the largest difference between the two runs, but
never below the datatype's FLOOR (a few units in the last place). A model whose two lone runs
differ by more than the datatype's CEILING (or the user's tolerance) is not reproducible, and
nothing can be checked against its references.

The lab's own recogniser reports where it ran (INSTANCE, SLOT, BATCH): those outputs change
with the batch by design and are left out without asking, as are the token generator's and the
paged engine's (paged_engine.PLACEMENT: the engine step, its blocks, its cache and queue).
STATE_IN and STATE_OWNER stay in: under a sound deployment they follow from the session's own history (the state it read, and
which session wrote it), so a session that reads another's state shows there too.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from app.checker.engine import paged_engine
from app.checker.engine.aliases import Array
from app.checker.engine.facts import ModelFacts
from app.lab.deployment import deployments
from app.lab.json_value import JSONObject

FLOAT_TYPES = ("FP16", "BF16", "FP32", "FP64")
FLOOR = {"FP16": 1e-3, "BF16": 1e-2, "FP32": 1e-6, "FP64": 1e-12}
CEILING = {"FP16": 1e-2, "BF16": 5e-2, "FP32": 1e-3, "FP64": 1e-9}
NOISE_FACTOR = 4.0
RECOGNISER_PLACEMENT = ("INSTANCE", "SLOT", "BATCH")
# model_repository/gen_inflight/1/model.py: one response per token; STEP and STATE_OWNER (the TAG of the
# request whose state made the token) are answers, the rest say where and when the token was made.
GENERATOR_OUTPUTS = ("TOKEN", "STEP", "ROW", "BATCH", "EXECUTION", "INSTANCE", "STATE_OWNER")
GENERATOR_PLACEMENT = ("ROW", "BATCH", "EXECUTION", "INSTANCE")
MISSING = float("inf")  # no reply, or a reply of another shape: as far from the reference as it gets


def is_float(datatype: str) -> bool:
    return datatype in FLOAT_TYPES


def lab_model(facts: ModelFacts) -> str | None:
    """Which of the lab's own models this is, by its inputs and outputs: "recogniser", "generator",
    "paged_engine" (app/checker/engine/paged_engine.py) or None."""
    inputs = {t.name for t in facts.inputs}
    outputs = {t.name for t in facts.outputs}
    if inputs == deployments.RECOGNISER_INPUTS and outputs <= deployments.RECOGNISER_OUTPUTS and "SYMBOL" in outputs:
        return "recogniser"
    if inputs == deployments.GENERATOR_INPUTS and outputs <= set(GENERATOR_OUTPUTS) and "TOKEN" in outputs:
        return "generator"
    if paged_engine.is_paged(facts):
        return "paged_engine"
    return None


def default_ignored(facts: ModelFacts) -> tuple[str, ...]:
    """Outputs the lab knows report placement rather than an answer: the recogniser's (instance,
    slot, batch) and the token generator's (row, batch size, execution counter, instance)."""
    placement = {"recogniser": RECOGNISER_PLACEMENT, "generator": GENERATOR_PLACEMENT,
                 "paged_engine": paged_engine.PLACEMENT}.get(lab_model(facts) or "", ())
    outputs = {t.name for t in facts.outputs}
    return tuple(name for name in placement if name in outputs)


def difference(ref: Array | None, got: Array | None, datatype: str) -> float:
    """0 when equal. Integers: the largest absolute difference; BOOL and BYTES: how many elements
    differ; floats: the largest |got - ref| / max(1, |ref|). inf when either is missing, the shapes
    differ, or a float element is NaN on either side: NaN equals nothing, itself included (IEEE
    754), so a model that answers NaN never matches (the finite check says why)."""
    if ref is None or got is None or np.shape(ref) != np.shape(got):
        return MISSING
    if np.array_equal(ref, got):  # the common case, and the cheapest test there is (NaN is never array_equal)
        return 0.0
    if datatype in ("BOOL", "BYTES"):
        return float(np.count_nonzero(np.asarray(ref).reshape(-1) != np.asarray(got).reshape(-1)))
    if is_float(datatype):
        a = np.asarray(ref, dtype=np.float64)
        b = np.asarray(got, dtype=np.float64)
        if np.isnan(a).any() or np.isnan(b).any():
            return MISSING
        with np.errstate(invalid="ignore"):
            scaled = np.where(a == b, 0.0, np.abs(b - a) / np.maximum(1.0, np.abs(a)))
        # inf against a number: inf / inf is NaN, which must not read as "within tolerance"
        scaled = np.where(np.isnan(scaled), MISSING, scaled)
        return float(scaled.max()) if scaled.size else 0.0
    if ref.size == 0:
        return 0.0
    # Python ints: UINT64 and INT64 differences do not overflow.
    return float(max(abs(int(x) - int(y)) for x, y in zip(ref.reshape(-1).tolist(), got.reshape(-1).tolist(), strict=True)))


@dataclass(frozen=True)
class Tolerance:
    output: str
    datatype: str
    value: float  # 0 for exact outputs
    source: str  # "exact", "user" or "derived"
    noise: float  # the largest difference between the two lone runs
    reproducible: bool

    def holds(self, diff: float) -> bool:
        return diff <= self.value

    def to_json(self) -> JSONObject:
        return {"output": self.output, "datatype": self.datatype, "value": self.value, "source": self.source,
                "noise": _finite(self.noise), "reproducible": self.reproducible}


def tolerance(output: str, datatype: str, noise: float, user: float | None = None) -> Tolerance:
    """The tolerance for one output, given the measured noise between two lone runs."""
    if not is_float(datatype):
        return Tolerance(output, datatype, 0.0, "exact", noise, noise == 0.0)
    if user is not None:
        return Tolerance(output, datatype, float(user), "user", noise, noise <= user)
    derived = max(FLOOR[datatype], NOISE_FACTOR * noise) if np.isfinite(noise) else FLOOR[datatype]
    return Tolerance(output, datatype, min(derived, CEILING[datatype]), "derived", noise, noise <= CEILING[datatype])


def non_finite(array: Array | None, datatype: str) -> bool:
    """Whether a float reply holds a NaN or an Inf anywhere (other datatypes cannot)."""
    if array is None or not is_float(datatype):
        return False
    return not bool(np.isfinite(np.asarray(array, dtype=np.float64)).all())


def _finite(value: float) -> float | None:
    return value if np.isfinite(value) else None
