"""One run per deployment at a time, and at most a few runs on one server at once.

Why: two learners' sessions on one sequence-batched deployment share its slots. A class that
presses Run together fills them, the backlog outlives the idle timeout, and Triton reaps
sessions that only waited, so "the fix" looks broken and each learner's timeline shows the
others' sessions. A run therefore holds its deployment alone (a lease), later runs of it wait
their turn in arrival order and are told their place, and a server-wide cap (one run per core)
keeps runs on different deployments from crowding a small machine.

Leases are per server address. With the class store in an SQLite file (one app process) they
live in this process, as here; with it on PostgreSQL, app replicas that share one Triton take
them from the database instead (app/lab/traffic/shared_queue.py), by the same admission rule
(`admissible`), so two replicas never run one deployment at once.
"""
from __future__ import annotations

import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Protocol

from app.lab import database
from app.lab.traffic.admission import FIRST_GUESS_S, PARALLEL_ENV, POLL_S, OnWait, Wait, admissible, default_parallel
from app.lab.traffic.shared_queue import SharedRunQueue


class _Held(Protocol):
    @property
    def url(self) -> str: ...

__all__ = ["FIRST_GUESS_S", "PARALLEL_ENV", "POLL_S", "OnWait", "RunQueue", "SharedRunQueue", "Wait", "admissible",
           "default_parallel", "for_server", "hold"]


@dataclass
class _Ticket:
    model: str
    holder: object  # who holds it: a thread here, a replica's thread in the shared queue
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
        return admissible(ticket, self._waiting, list(self._active.values()), self.parallel)

    @contextmanager
    def lease(self, model: str, on_wait: OnWait | None = None) -> Iterator[None]:
        """Hold `model` for one run. Re-entrant in one thread, so an exercise can hold a
        deployment across several runs that must not be interleaved with anyone else's."""
        me = threading.get_ident()
        with self._cond:
            held = self._active.get(model)
            if held is not None and held.holder == me:
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


_queues: dict[str, RunQueue | SharedRunQueue] = {}
_lock = threading.Lock()


def for_server(url: str) -> RunQueue | SharedRunQueue:
    """The queue for the server at `url`: this process's own, or with the class database on
    PostgreSQL the one all replicas share (RunQueue's interface: lease, busy, waiting)."""
    db_url = database.class_database_url()
    key = f"{url} {db_url}" if database.is_shared(db_url) else url
    with _lock:
        queue = _queues.get(key)
        if queue is None:
            queue = SharedRunQueue(url, db_url) if database.is_shared(db_url) else RunQueue()
            _queues[key] = queue
        return queue


@contextmanager
def hold(server: _Held, model: str, on_wait: OnWait | None = None) -> Iterator[None]:
    """Hold `model` on `server` for one run or measurement, loaded first if it is not (a
    LabServer loads; a bare address, such as a proxy's, has nothing to load)."""
    with for_server(server.url).lease(model, on_wait):
        models = getattr(server, "models", None)
        if models is not None:
            models.ensure(model, on_wait=on_wait)
        yield
