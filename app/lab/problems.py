"""Problems a learner can fix (bad settings, bad text, an unknown name) as codes and values.

The engine never words them: a `Problem(code, values)` is rendered at the page or CLI edge
from app/text/problems.py in the learner's language. A `LabError` carries one or more
problems; its str() is the codes and values, for logs and tracebacks (the words live above the engine).
"""
from __future__ import annotations

from dataclasses import dataclass, field

from app.lab.errors import BatchingLabError


@dataclass(frozen=True)
class Problem:
    code: str
    values: dict[str, object] = field(default_factory=dict)

    def __str__(self) -> str:
        values = ", ".join(f"{key}={value!r}" for key, value in self.values.items())
        return f"{self.code}({values})"


class CarriesProblems:
    """An error that says what happened as .problems; .code and .values are the first one's."""

    problems: list[Problem]

    @property
    def code(self) -> str:
        return self.problems[0].code

    @property
    def values(self) -> dict[str, object]:
        return self.problems[0].values


class LabError(CarriesProblems, BatchingLabError, ValueError):
    """Input a learner must change; .problems (and .code/.values of the first) say what."""

    def __init__(self, code_or_problems: str | list[Problem], **values: object):
        problems = [Problem(code_or_problems, values)] if isinstance(code_or_problems, str) else list(code_or_problems)
        self.problems = problems
        super().__init__("; ".join(str(p) for p in problems))
