"""A check's verdicts and the judgement that holds them: what both paths' judges give (sequences/judge.py
on the sequence and stateless paths, streaming/stream_judge.py on the decoupled one) and every report
reads. Pure: no server, no words.

A verdict is held, broken, skipped or not_exercised: held, but its witness (witness.py) says the
situation it tests never happened (`witnessed` applies this). Its values are codes and numbers, made
JSON by `jsonable` (the report's too).
"""
from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any, TypedDict

import numpy as np
import pandas as pd

from app.checker.engine import compare, witness
from app.checker.engine.aliases import Values

STREAMS_WRAP = "streams_wrap"
NOTE_CODES = (STREAMS_WRAP,)  # CheckJudgement.notes' codes (words: app/checker/words.NOTES)

@dataclass(frozen=True)
class CheckVerdict:
    check: str
    variant: str  # "alone" (the reference runs), "all_instances" or "one_instance"
    verdict: str  # "held", "broken", "skipped" or "not_exercised" (held, but its witness says its situation never happened)
    reason: str = ""  # skipped: why; broken: what the divergence means (a DIAGNOSES code)
    values: Values = field(default_factory=dict)

    @property
    def id(self) -> str:
        return f"{self.check}/{self.variant}"

    def to_json(self) -> dict[str, object]:
        return {"check": self.check, "variant": self.variant, "verdict": self.verdict, "reason": self.reason,
                "values": jsonable(self.values)}


class Diagnosis(TypedDict):
    code: str  # a DIAGNOSES code (diagnosis.py's advice codes too)
    checks: list[str]  # the broken checks that say it, check/variant


@dataclass
class CheckJudgement:
    verdicts: list[CheckVerdict]
    tolerances: list[compare.Tolerance]
    refusals: pd.DataFrame  # one row per refused request: where, Triton's message, cause
    broken_steps: pd.DataFrame  # steps that differ beyond tolerance: check, variant, conversation, session, step, output, difference
    diagnoses: list[Diagnosis]  # what the broken checks say about the model
    # {code, values}: what the reader should know, problem-free. Any, as words' note_lines takes them (app/checker/words).
    notes: list[dict[str, Any]] = field(default_factory=list)

    @property
    def exit_code(self) -> int:
        """0 when every check that ran held, 1 when one broke; 2 (could not check) is raised before.
        A check not exercised is neither: CheckResult.exit_code decides what it costs."""
        return 1 if any(v.verdict == "broken" for v in self.verdicts) else 0

    @property
    def not_exercised(self) -> list[CheckVerdict]:
        """The checks whose situation never happened (witness.NOT_EXERCISED)."""
        return [v for v in self.verdicts if v.verdict == witness.NOT_EXERCISED]

    def verdict(self, check: str, variant: str | None = None) -> CheckVerdict:
        for v in self.verdicts:
            if v.check == check and (variant is None or v.variant == variant):
                return v
        raise KeyError(f"no verdict for {check}/{variant}")


def witnessed(verdict: CheckVerdict, evidence: witness.Witness | None) -> CheckVerdict:
    """The verdict with its witness (witness.py) in its values; a held one whose witness says the
    situation never happened is not_exercised, its reason the witness's why. None: nothing was
    recorded (tables no measurement wrote), so the verdict is left as it is."""
    if evidence is None:
        return verdict
    values = {**verdict.values, "witness": evidence}
    if verdict.verdict == "held" and not evidence["exercised"]:
        return CheckVerdict(verdict.check, verdict.variant, witness.NOT_EXERCISED, evidence["why"] or "", values)
    return CheckVerdict(verdict.check, verdict.variant, verdict.verdict, verdict.reason, values)


def with_replies_witness(verdict: CheckVerdict) -> CheckVerdict:
    """A judged verdict that has no witness of its own gets the replies it compared as one (skipped ones stay as they are)."""
    if verdict.verdict == "skipped" or "witness" in verdict.values:
        return verdict
    return witnessed(verdict, witness.replies(verdict.values))


def jsonable(value: object) -> object:
    """value as JSON holds it: numpy scalars as Python's, NaN as null, infinities as "inf"/"-inf"; the report's too."""
    if isinstance(value, dict):
        return {str(k): jsonable(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [jsonable(v) for v in value]
    if isinstance(value, np.generic):
        value = value.item()
    if isinstance(value, float) and not math.isfinite(value):
        return None if math.isnan(value) else "inf" if value > 0 else "-inf"
    if value is pd.NA:
        return None
    return value
