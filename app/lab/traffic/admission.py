"""Who may start a run now: the rule every run queue applies (this process's, and the one app
replicas share through the class database), what a waiting run is told, and how many runs a
server takes at once."""
from __future__ import annotations

import os
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Protocol

from app.lab import env_settings

PARALLEL_ENV = "TRITON_LAB_PARALLEL_RUNS"
FIRST_GUESS_S = 2.0  # expected length of a run before any has finished
POLL_S = 0.25  # how often a waiting run re-reports its place


@dataclass(frozen=True)
class Wait:
    """What a waiting run is told: runs ahead of it (on its deployment or for a free place); or,
    when its deployment must first be loaded and the server's memory budget is full of running
    deployments, that budget, what they hold and what the load needs (MB), and expected_s is how
    long it waits at most before it is refused (app/lab/deployment/loaded_models.py)."""

    position: int
    expected_s: float
    budget_mb: float = 0.0
    in_use_mb: float = 0.0
    need_mb: float = 0.0

    @property
    def for_memory(self) -> bool:
        return self.budget_mb > 0


OnWait = Callable[[Wait], None]


def default_parallel() -> int:
    """TRITON_LAB_PARALLEL_RUNS, else one run per CPU core of the app's host.

    Measured with benchmarks/classroom.py on two cores: two runs at once on different
    deployments gave every run the outcome and verdict mix it gives alone, as one at a time did,
    with the p95 wait at 20 learners 11.5 s instead of 18.0 s."""
    given = env_settings.count(PARALLEL_ENV, "runs")
    return given if given is not None else max(1, os.cpu_count() or 1)


class Ticket(Protocol):
    """A place in a queue: the model it holds or waits for, and who holds it."""

    @property
    def model(self) -> str: ...
    @property
    def holder(self) -> object: ...


def admissible(ticket: Ticket, waiting: Sequence[Ticket], active: Sequence[Ticket], parallel: int) -> bool:
    """Whether `ticket` (one of `waiting`, in arrival order) may start now, with `active` running.
    Tickets have .model and .holder; one rule for this process's queue and the replicas' shared one."""
    running = {held.model for held in active}
    if ticket.model in running:
        return False
    if any(held.holder == ticket.holder for held in active):
        return True  # its own run needs a second deployment: waiting for itself would never end
    if len(active) >= parallel:
        return False
    # Arrival order among those that could start: an earlier ticket that could start now goes first.
    for earlier in waiting:
        if earlier is ticket:
            return True
        if earlier.model not in running:
            return False
    return False
