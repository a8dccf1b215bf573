"""The one progress callback every long lab run takes: how far it has got, and what it is doing now.

Producers: the traffic driver and the sentiment case (requests answered of those a run sends,
stage REQUESTS), the checker (requests answered of those planned, its phase and variant as the stage) and
the exercises (steps done of the exercise's, the step under way as the stage). Each says from
which thread it calls; the caller draws the bar (app/ui/progress.py, app/checker/page/report.py,
app/views/exercises.py) or prints it (app/cli.py).
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Protocol


@dataclass(frozen=True)
class Stage:
    """What a run is doing now, as a code (its words live in app/text) and the values its sentence needs."""

    code: str
    # Untyped: a stage's values are read back as well as written (the checker's page looks its words up by one).
    values: dict[str, Any] = field(default_factory=dict)


class Progress(Protocol):
    """progress(done, total, stage): `done` of `total` units so far (total may be an estimate;
    done never passes it), and the stage under way."""

    def __call__(self, done: int, total: int, stage: Stage, /) -> None: ...


REQUESTS = Stage("requests")  # a run with one stage: its requests answered (the driver's, the sentiment case's)
