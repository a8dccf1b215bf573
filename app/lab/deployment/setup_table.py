"""The recogniser lab's set-up, each setting declared once: its URL key, range, widget step and problem code.

LabSettings.problems (deployments.py), the lab's traffic checks and URL keys (app/recogniser/engine/setup.py)
and its widgets and their help texts' ranges (app/recogniser/view/controls.py) are all read from FIELDS, as
the generator's are from its LIMITS (app/generation/setup.py). It sits here, below both LabSettings and
Traffic (app/lab/records.py), since the lab engine may not import the recogniser's. Word-free: a field's
label and help text are the view's, its problem's words app/text/problems.py's.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from app.lab.problems import Problem
from app.lab.scenario.scenario import MAX_IN_FLIGHT
from app.lab.scenario.transport import Transport

SCHEDULERS = ("dynamic", "direct", "oldest")
STATE_KEYS = ("slot", "corrid", "session")
PARTS = ("settings", "traffic")  # a set-up's LabSettings (the deployment) and Traffic (what the run sends)


@dataclass(frozen=True)
class Field:
    name: str  # the LabSettings or Traffic field, and its URL key
    part: str  # one of PARTS: the record that holds it
    low: float | None = None  # a number's range: what the widget offers and the checks accept
    high: float | None = None
    step: float | None = None  # the widget's step
    choices: tuple[str, ...] = ()  # a choice's values; neither range nor choices: a flag, always valid
    problem: str = ""  # the code a value out of range (or not among the choices) raises
    unchecked_under: tuple[str, ...] = ()  # schedulers under which its value is not checked

    @property
    def limits(self) -> tuple[float, float]:
        """A number's (lowest, highest)."""
        if self.low is None or self.high is None:
            raise TypeError(f"{self.name} is not a number")
        return self.low, self.high

    def problems(self, value: Any, scheduler: str) -> list[Problem]:
        if scheduler in self.unchecked_under:
            return []
        if self.choices and value not in self.choices:
            return [Problem(self.problem, {"value": value, "choices": ", ".join(self.choices)})]
        if self.low is not None and self.high is not None and not self.low <= value <= self.high:
            return [Problem(self.problem, {"low": self.low, "high": self.high, "value": value})]
        return []


# In the order a set-up's problems are listed.
FIELDS: tuple[Field, ...] = (
    Field("scheduler", "settings", choices=SCHEDULERS, problem="scheduler_unknown"),
    Field("instances", "settings", 1, 4, 1, problem="instances_range"),  # each instance is a stub process
    Field("slots", "settings", 1, 16, 1, problem="slots_range"),
    Field("queue_delay_us", "settings", 0, 100_000, 500, problem="queue_delay_range"),
    Field("min_slot_utilization", "settings", 0, 1, 0.25, problem="min_slot_utilization_range"),
    # the dynamic batcher has no idle timeout: its widget is disabled there and its value never written
    Field("idle_timeout_us", "settings", 100_000, 60_000_000, 100_000, problem="idle_timeout_range",
          unchecked_under=("dynamic",)),
    Field("state_key", "settings", choices=STATE_KEYS, problem="state_key_unknown"),
    Field("honour_ready", "settings"),
    Field("sessions", "traffic", 1, 64, 1, problem="sessions_range"),  # the board summarises beyond a dozen
    Field("chunks", "traffic", 1, 80, 1, problem="chunks_range"),
    Field("think_ms", "traffic", 0, 500, 5, problem="think_ms_range"),
    Field("jitter_ms", "traffic", 0, 200, 5, problem="jitter_ms_range"),
    Field("seed", "traffic", 0, 1_000_000, 1, problem="seed_range"),
    Field("in_flight", "traffic", 1, MAX_IN_FLIGHT, 1, problem="in_flight_range"),
    Field("transport", "traffic", choices=tuple(t.value for t in Transport), problem="transport_unknown"),
    Field("spread_think", "traffic"),
)
FIELD = {f.name: f for f in FIELDS}


def field_problems(record: object, part: str, scheduler: str) -> list[Problem]:
    """Every field of `part` whose value in `record` (a LabSettings or a Traffic) the table refuses."""
    return [problem for f in FIELDS if f.part == part for problem in f.problems(getattr(record, f.name), scheduler)]
