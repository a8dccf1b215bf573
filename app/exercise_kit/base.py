"""What an exercise is (a name, option keys, the keyed answer) and what running it returns, as codes.

An exercise measures, then judges. `measure()` talks to the server and returns `Measured`: the
tables its judge reads, plus the raw runs for the JSON report and the log. `judge(tables)` is
pure: from those tables alone it decides the `ExerciseJudgement` (the outcome, the headline numbers,
the findings and the explanation, and the tables the figures draw), so every outcome can be
tested on small hand-made tables. The registry (app/exercise_kit/registry.py) joins the two
into an `ExerciseResult`.

An exercise's `outcome` is the option key that matches what the server did on this run,
worked out from the measurements, so "did my prediction hold?" is answered by the server,
not by the answer key. `correct` is what the lesson says usually happens.
"""
from __future__ import annotations

import json
import math
from collections.abc import Mapping
from dataclasses import dataclass, field

import pandas as pd

from app.checker.engine import CheckResult, check_report_json
from app.lab.observation import RunLog
from app.lab.progress import Progress, Stage
from app.lab.records import RunResult
from app.lab.traffic import run_report_json


@dataclass(frozen=True)
class Finding:
    """One thing an exercise measured or concluded, as a code plus the values it rests on.

    `code` names a template in its exercise's words.py (FINDINGS); `values` fill its
    {name:kind} fields. Pages and the CLI render it in the learner's language; JSON keeps both.
    """

    code: str
    values: Mapping[str, object] = field(default_factory=dict)

    def to_json(self) -> dict[str, object]:
        return {"code": self.code, "values": {k: _plain(v) for k, v in self.values.items()}}


@dataclass(frozen=True)
class Exercise:
    """An exercise as codes: its words (title, scenario, question, option texts) live in
    its words.py beside its engine (app/recogniser/exercises/<name>/words.py), keyed by the same name and option keys."""

    name: str
    options: tuple[str, ...]  # option keys, in the order the page offers them
    correct: str  # key of the option the mechanism predicts
    # Triton's --log-verbose during the run: 1 for exercises whose evidence (backlog, reaper,
    # START-flag refusals) Triton 2.51 logs only at verbosity 1 (see app/lab/observation/server_log.py).
    log_verbose: int = 0

    def __post_init__(self) -> None:
        if self.correct not in self.options:
            raise ValueError(f"exercise {self.name!r}: correct option {self.correct!r} is not one of {self.options}")


Tables = dict[str, pd.DataFrame]
# A headline measurement: a number, a yes/no, a code or a text, {verdict: count}, or None where nothing was measured.
Number = int | float | str | dict[str, int] | None


@dataclass(frozen=True, kw_only=True)
class Measured:
    """What measure() took from the server. judge() reads `tables` only; `runs` and `log` are
    kept for the JSON report, the log panel and the tests that look at raw requests."""

    tables: Tables
    runs: dict[str, RunResult] = field(default_factory=dict)  # by label
    log: RunLog | None = None  # set by an exercise that talks to Triton without the driver
    # The models an exercise deployed outside `runs` (the generator's runs): their server log lines are its too.
    models: tuple[str, ...] = ()
    checks: dict[str, CheckResult] = field(default_factory=dict)  # by label: the deployment checker's, for its report


@dataclass(frozen=True, kw_only=True)
class ExerciseJudgement:
    """What judge(tables) decided: pure, from the measured tables alone."""

    outcome: str  # option key that describes what the server did this run
    numbers: Mapping[str, Number]  # headline measurements; labels in the exercise's words (NUMBERS)
    findings: list[Finding]  # one per measurement
    explanation: list[Finding]  # what was seen, tied to the mechanism: sentences in order
    tables: Tables  # data the figures draw


@dataclass(kw_only=True)
class ExerciseResult:
    exercise: Exercise
    outcome: str  # option key that describes what the server did this run
    numbers: Mapping[str, Number]  # headline measurements; labels in the exercise's words (NUMBERS)
    tables: Tables  # data the figures draw
    explanation: list[Finding]  # what was seen, tied to the mechanism: sentences in order
    findings: list[Finding] = field(default_factory=list)  # one per measurement
    runs: dict[str, RunResult] = field(default_factory=dict)  # by label: raw per-request data
    log: RunLog | None = None  # the server log lines of the whole exercise (set by Registry.run)
    checks: dict[str, CheckResult] = field(default_factory=dict)  # by label, of an exercise that runs the checker

    @classmethod
    def of(cls, exercise: Exercise, measured: Measured, judged: ExerciseJudgement) -> ExerciseResult:
        if judged.outcome not in exercise.options:
            raise ValueError(f"exercise {exercise.name!r}: judge returned {judged.outcome!r}, not one of {exercise.options}")
        return cls(exercise=exercise, outcome=judged.outcome, numbers=judged.numbers, tables=judged.tables,
                   explanation=judged.explanation, findings=judged.findings, runs=measured.runs, log=measured.log,
                   checks=measured.checks)

    @property
    def name(self) -> str:
        return self.exercise.name

    @property
    def as_taught(self) -> bool:
        """The server did what the lesson says it does."""
        return self.outcome == self.exercise.correct

    def held(self, prediction: str) -> bool:
        return prediction == self.outcome

    def to_json(self) -> dict[str, object]:
        """Schema 2: codes and values only, words for them in the exercise's words.py:
        {schema, exercise, options[key], correct, outcome, as_taught, numbers, findings[{code, values}],
        explanation[{code, values}], tables{name: [records]}, runs{label: run_report_json(run)},
        log (run_log.RunLog.to_json() or null), checks{label: the checker's report (app/checker/engine/reports/report.py)}}."""
        ex = self.exercise
        return {
            "schema": 2,
            "exercise": ex.name,
            "options": list(ex.options),
            "correct": ex.correct,
            "outcome": self.outcome,
            "as_taught": self.as_taught,
            "numbers": {k: _plain(v) for k, v in self.numbers.items()},
            "findings": [f.to_json() for f in self.findings],
            "explanation": [f.to_json() for f in self.explanation],
            "tables": {name: json.loads(frame.to_json(orient="records")) for name, frame in self.tables.items()},
            "runs": {label: run_report_json(run) for label, run in self.runs.items()},
            "log": self.log.to_json() if self.log is not None else None,
            "checks": {label: check_report_json(check) for label, check in self.checks.items()},
        }


class Steps:
    """Progress in whole steps, so each exercise only says what it is doing now, as a Stage:
    a code (STEPS in its words module) with the values the sentence needs."""

    def __init__(self, progress: Progress | None, total: int):
        self.progress, self.total, self.done = progress, max(1, total), 0

    def __call__(self, code: str, **values: object) -> None:
        if self.progress:
            self.progress(min(self.done, self.total), self.total, Stage(code, values))
        self.done += 1


DONE = "done"  # the last step of every exercise, sent by the registry after judging; its words are shared (app/registry/exercise_words.py)


def _plain(value: object) -> object:
    if hasattr(value, "item"):  # numpy scalars
        value = value.item()
    if isinstance(value, dict):
        return {k: _plain(v) for k, v in value.items()}
    if isinstance(value, float) and math.isnan(value):
        return None
    return value

