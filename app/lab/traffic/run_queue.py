"""One run per deployment at a time, and at most a few runs on one server at once.

Why: two learners' sessions on one sequence-batched deployment share its slots. A class that
presses Run together fills them, the backlog outlives the idle timeout, and Triton reaps
sessions that only waited, so "the fix" looks broken and each learner's timeline shows the
others' sessions. A run therefore holds its deployment alone (a lease), later runs of it wait
their turn in arrival order and are told their place, and a server-wide cap (one run per core)
keeps runs on different deployments from crowding a small machine.

Leases are per app process and per server address: one app process serves a class from one
server (a replicated app pins each learner to one pod and its own Triton).
"""
from __future__ import annotations

import os
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass

from app.lab import env_settings

PARALLEL_ENV = "TRITON_LAB_PARALLEL_RUNS"
FIRST_GUESS_S = 2.0  # expected length of a run before any has finished
POLL_S = 0.25  # how often a waiting run re-reports its place


@dataclass(frozen=True)
class Wait:
    """What a waiting run is told: runs ahead of it (on its deployment or for a free place)."""

    position: int
    expected_s: float


OnWait = Callable[[Wait], None]


def default_parallel() -> int:
    """TRITON_LAB_PARALLEL_RUNS, else one run per CPU core of the app's host.

    Measured with benchmarks/classroom.py on two cores: two runs at once on different
    deployments gave every run the outcome and verdict mix it gives alone, as one at a time did,
    with the p95 wait at 20 learners 11.5 s instead of 18.0 s."""
    given = env_settings.count(PARALLEL_ENV, "runs")
    return given if given is not None else max(1, os.cpu_count() or 1)


@dataclass
class _Ticket:
    model: str
    thread: int
    arrived: float


class RunQueue:
    def __init__(self, parallel: int | None = None):
        self.parallel = parallel or default_parallel()
        self._cond = threading.Condition()
        self._waiting: list[_Ticket] = []
        self._active: dict[str, _Ticket] = {}
        self._mean_s = FIRST_GUESS_S
        self._finished = 0

    def busy(self) -> set[str]:
        """Deployments with a run in progress: never unload these."""
        with self._cond:
            return set(self._active)

    def waiting(self) -> int:
        with self._cond:
            return len(self._waiting)

    def _ahead(self, ticket: _Ticket) -> int:
        """Runs that go first: those that arrived earlier and still wait, plus the one it waits on."""
        return self._waiting.index(ticket) + 1

    def _admissible(self, ticket: _Ticket) -> bool:
        if ticket.model in self._active:
            return False
        if any(held.thread == ticket.thread for held in self._active.values()):
            return True  # its own run needs a second deployment: waiting for itself would never end
        if len(self._active) >= self.parallel:
            return False
        # Arrival order among those that could start: an earlier ticket that could start now goes first.
        for earlier in self._waiting:
            if earlier is ticket:
                return True
            if earlier.model not in self._active:
                return False
        return False

    @contextmanager
    def lease(self, model: str, on_wait: OnWait | None = None) -> Iterator[None]:
        """Hold `model` for one run. Re-entrant in one thread, so an exercise can hold a
        deployment across several runs that must not be interleaved with anyone else's."""
        me = threading.get_ident()
        with self._cond:
            held = self._active.get(model)
            if held is not None and held.thread == me:
                reentered = True
            else:
                reentered = False
                ticket = _Ticket(model, me, time.monotonic())
                self._waiting.append(ticket)
        if reentered:
            yield
            return
        try:
            while True:
                with self._cond:
                    if self._admissible(ticket):
                        self._waiting.remove(ticket)
                        self._active[model] = ticket
                        self._cond.notify_all()
                        break
                    ahead = self._ahead(ticket)
                    wait = Wait(ahead, ahead * self._mean_s / self.parallel + self._mean_s)
                if on_wait is not None:  # outside the lock: it may draw on a page
                    on_wait(wait)
                with self._cond:
                    if not self._admissible(ticket):
                        self._cond.wait(POLL_S)
        except BaseException:
            with self._cond:
                if ticket in self._waiting:
                    self._waiting.remove(ticket)
                self._cond.notify_all()
            raise
        started = time.monotonic()
        try:
            yield
        finally:
            with self._cond:
                del self._active[model]
                self._finished += 1
                # A moving mean: the wait a learner is told follows what runs take now.
                self._mean_s += (time.monotonic() - started - self._mean_s) / min(self._finished, 10)
                self._cond.notify_all()


_queues: dict[str, RunQueue] = {}
_lock = threading.Lock()


def for_server(url: str) -> RunQueue:
    """The one queue of this process for the server at `url`."""
    with _lock:
        queue = _queues.get(url)
        if queue is None:
            queue = _queues[url] = RunQueue()
        return queue


@contextmanager
def hold(server, model: str, on_wait: OnWait | None = None) -> Iterator[None]:
    """Hold `model` on `server` for one run or measurement, loaded first if it is not (a
    LabServer loads; a bare address, such as a proxy's, has nothing to load)."""
    with for_server(server.url).lease(model, on_wait):
        models = getattr(server, "models", None)
        if models is not None:
            models.ensure(model)
        yield
