"""What an exercise is (a scenario, a question, the options) and what running it returns.

An exercise's `outcome` is the option key that matches what the server did on this run,
worked out from the measurements, so "did my prediction hold?" is answered by the server,
not by the answer key. `correct` is what the lesson says usually happens.
"""
from __future__ import annotations

import json
import math
from dataclasses import dataclass, field
from typing import Callable

import pandas as pd

from app.lab import report
from app.lab.run_log import RunLog

Progress = Callable[[float, str], None]  # (fraction done 0..1, what is happening now)


@dataclass(frozen=True)
class Option:
    key: str
    text: str


@dataclass(frozen=True)
class Exercise:
    name: str
    title: str
    scenario: str  # one paragraph: the situation the learner is put in
    question: str
    options: tuple[Option, ...]
    correct: str  # key of the option the mechanism predicts
    # Triton's --log-verbose during the run: 1 for exercises whose evidence (backlog, reaper,
    # START-flag refusals) Triton 2.51 logs only at verbosity 1 (see app/lab/server_log.py).
    log_verbose: int = 0

    def option(self, key: str) -> Option:
        for option in self.options:
            if option.key == key:
                return option
        raise ValueError(f"exercise {self.name!r} has no option {key!r}: choose one of {', '.join(o.key for o in self.options)}")


@dataclass
class ExerciseResult:
    exercise: Exercise
    outcome: str  # option key that describes what the server did this run
    numbers: dict  # headline measurements: name -> number, bool or short text
    tables: dict[str, pd.DataFrame]  # data the figures draw
    explanation: str  # what was seen, tied to the mechanism
    findings: list[str] = field(default_factory=list)  # one line per measurement, in words
    runs: dict = field(default_factory=dict)  # label -> driver.RunResult (raw per-request data)
    log: RunLog | None = None  # the server log lines of the whole exercise (set by exercises.run)

    @property
    def name(self) -> str:
        return self.exercise.name

    @property
    def as_taught(self) -> bool:
        """The server did what the lesson says it does."""
        return self.outcome == self.exercise.correct

    def held(self, prediction: str) -> bool:
        return prediction == self.outcome

    def numbers_table(self) -> pd.DataFrame:
        """The headline measurements as text, rounded for reading."""
        return pd.DataFrame({"measure": list(self.numbers), "value": [_fmt(v) for v in self.numbers.values()]})

    def summary_table(self) -> str:
        ex = self.exercise
        lines = [f"{ex.title} ({ex.name})", f"Q: {ex.question}"]
        for option in ex.options:
            marks = ("correct" if option.key == ex.correct else "") + (" observed" if option.key == self.outcome else "")
            lines.append(f"  [{option.key}] {option.text}{'  <- ' + marks.strip() if marks.strip() else ''}")
        lines.append("measured:")
        width = max((len(k) for k in self.numbers), default=0)
        lines += [f"  {k:{width}}  {_fmt(v)}" for k, v in self.numbers.items()]
        if self.findings:
            lines.append("findings:")
            lines += [f"  - {f}" for f in self.findings]
        lines.append(f"why: {self.explanation}")
        return "\n".join(lines)

    def to_json(self) -> dict:
        """Schema 1: {schema, exercise, title, scenario, question, options[{key,text}], correct,
        outcome, as_taught, numbers, findings, explanation, tables{name: [records]},
        runs{label: report.to_json(run)}, log (run_log.RunLog.to_json() or null)}."""
        ex = self.exercise
        return {
            "schema": 1,
            "exercise": ex.name,
            "title": ex.title,
            "scenario": ex.scenario,
            "question": ex.question,
            "options": [{"key": o.key, "text": o.text} for o in ex.options],
            "correct": ex.correct,
            "outcome": self.outcome,
            "as_taught": self.as_taught,
            "numbers": {k: _plain(v) for k, v in self.numbers.items()},
            "findings": list(self.findings),
            "explanation": self.explanation,
            "tables": {name: json.loads(frame.to_json(orient="records")) for name, frame in self.tables.items()},
            "runs": {label: report.to_json(run) for label, run in self.runs.items()},
            "log": self.log.to_json() if self.log is not None else None,
        }


class Steps:
    """Progress in whole steps, so each exercise only says what it is doing now."""

    def __init__(self, progress: Progress | None, total: int):
        self.progress, self.total, self.done = progress, max(1, total), 0

    def __call__(self, message: str) -> None:
        if self.progress:
            self.progress(min(1.0, self.done / self.total), message)
        self.done += 1

    def finish(self) -> None:
        if self.progress:
            self.progress(1.0, "done")


def _plain(value):
    if hasattr(value, "item"):  # numpy scalars
        value = value.item()
    if isinstance(value, float) and math.isnan(value):
        return None
    return value


def _fmt(value) -> str:
    value = _plain(value)
    if isinstance(value, float):
        return f"{value:.1f}"
    return str(value)
