"""The run queue of app replicas that share one Triton, kept in the class database (PostgreSQL).

Each run is a row of run_tickets: its id is its place in arrival order across replicas, and it
holds its deployment once `active`. Who may start is decided by run_queue.admissible, the rule
one process's queue uses, over every replica's tickets, under a transaction-scoped advisory lock
per server (so two replicas never both admit a run of one deployment). A waiting run re-reads
its place every POLL_S and tells the learner, as in one process.

A replica that dies stops its heartbeats: this process refreshes its tickets every TTL / 5
(app/lab/database/leases.py), and a ticket not refreshed for the TTL (TRITON_LAB_LEASE_TTL_S,
default 10 s) is deleted by the next replica that looks, so nothing a dead replica held blocks the class for
longer than that. The heartbeat runs on a thread of its own, not in the run, so a run that
computes for a long time keeps its lease.
"""
from __future__ import annotations

import os
import socket
import threading
import time
import uuid
from collections.abc import Iterator
from contextlib import contextmanager, suppress
from dataclasses import dataclass

import sqlalchemy as sa

from app.lab import database
from app.lab.database import DatabaseError
from app.lab.database import schema as t
from app.lab.database.leases import expired, heartbeat, lease_ttl_s, server_lock, server_name
from app.lab.traffic.admission import FIRST_GUESS_S, POLL_S, OnWait, Wait, admissible, default_parallel

REPLICA = f"{socket.gethostname()}:{os.getpid()}:{uuid.uuid4().hex[:8]}"  # this process, among replicas


@dataclass(frozen=True)
class _Row:
    id: int
    model: str
    holder: str
    active: bool


class SharedRunQueue:
    """RunQueue's interface (lease, busy, waiting) over the class database."""

    def __init__(self, server: str, db_url: str, parallel: int | None = None, ttl_s: float | None = None,
                 replica: str = REPLICA):
        self.server, self.db_url = server_name(server), db_url
        self.parallel = parallel or default_parallel()
        self.ttl_s = ttl_s if ttl_s is not None else lease_ttl_s()
        self.replica = replica  # tests make two replicas in one process by giving two names
        self._beat = heartbeat(db_url, self.ttl_s)
        self._mean_s = FIRST_GUESS_S
        self._finished = 0
        self._held: dict[str, str] = {}  # model -> holder, for re-entry in this process
        self._lock = threading.Lock()
        # A run of this replica that ends wakes this replica's waiters at once; other replicas'
        # waiters see it on their next look, POLL_S later at most.
        self._ended = threading.Condition()

    def _holder(self) -> str:
        return f"{self.replica}:{threading.get_ident()}"

    def _tickets(self, conn: sa.Connection) -> list[_Row]:
        conn.execute(t.run_tickets.delete().where(t.run_tickets.c.server == self.server,
                                                 expired(t.run_tickets.c.heartbeat_at, self.ttl_s)))
        rows = conn.execute(sa.select(t.run_tickets.c.id, t.run_tickets.c.model, t.run_tickets.c.holder,
                                      t.run_tickets.c.active)
                            .where(t.run_tickets.c.server == self.server).order_by(t.run_tickets.c.id)).all()
        return [_Row(r.id, r.model, r.holder, bool(r.active)) for r in rows]

    def busy(self) -> set[str]:
        """Deployments with a run in progress on any live replica: never unload these."""
        with database.writing(self.db_url) as conn:
            server_lock(conn, "runs", self.server)
            return {row.model for row in self._tickets(conn) if row.active}

    def waiting(self) -> int:
        with database.writing(self.db_url) as conn:
            server_lock(conn, "runs", self.server)
            return sum(not row.active for row in self._tickets(conn))

    def _arrive(self, model: str, holder: str) -> tuple[int, int | None]:
        """A new ticket and its first try, in one locked transaction: a ticket is never seen
        waiting while it could start."""
        with database.writing(self.db_url) as conn:
            server_lock(conn, "runs", self.server)
            ticket = int(conn.execute(t.run_tickets.insert().values(server=self.server, model=model, holder=holder)
                                      .returning(t.run_tickets.c.id)).scalar_one())
            ahead = self._decide(conn, ticket)
        self._beat.add(t.run_tickets, ticket)
        return ticket, ahead

    def _try_start(self, ticket: int) -> int | None:
        with database.writing(self.db_url) as conn:
            server_lock(conn, "runs", self.server)
            return self._decide(conn, ticket)

    def _decide(self, conn: sa.Connection, ticket: int) -> int | None:
        """None once `ticket` holds its deployment; else how many go first; -1 for a ticket that
        expired while this replica could not reach the database (it arrives again, at the back)."""
        rows = self._tickets(conn)
        mine = next((row for row in rows if row.id == ticket), None)
        if mine is None:
            return -1
        waiting = [row for row in rows if not row.active]
        if admissible(mine, waiting, [row for row in rows if row.active], self.parallel):
            conn.execute(t.run_tickets.update().where(t.run_tickets.c.id == ticket).values(active=True))
            return None
        return waiting.index(mine) + 1

    def _leave(self, ticket: int) -> None:
        self._beat.drop(t.run_tickets, ticket)  # even if the delete below fails, the ticket expires within the TTL
        with suppress(DatabaseError), database.writing(self.db_url) as conn:
            conn.execute(t.run_tickets.delete().where(t.run_tickets.c.id == ticket))

    @contextmanager
    def lease(self, model: str, on_wait: OnWait | None = None) -> Iterator[None]:
        """Hold `model` for one run, across every replica on this database. Re-entrant in one thread."""
        holder = self._holder()
        with self._lock:
            reentered = self._held.get(model) == holder
        if reentered:
            yield
            return
        ticket, ahead = self._arrive(model, holder)
        try:
            while ahead is not None:
                if ahead < 0:
                    self._beat.drop(t.run_tickets, ticket)
                    ticket, ahead = self._arrive(model, holder)
                    continue
                if on_wait is not None:
                    on_wait(Wait(ahead, ahead * self._mean_s / self.parallel + self._mean_s))
                with self._ended:
                    self._ended.wait(POLL_S)  # other replicas cannot notify this one: it looks again
                ahead = self._try_start(ticket)
        except BaseException:
            self._leave(ticket)
            raise
        with self._lock:
            self._held[model] = holder
        started = time.monotonic()
        try:
            yield
        finally:
            with self._lock:
                self._held.pop(model, None)
            self._leave(ticket)
            with self._ended:
                self._ended.notify_all()
            self._finished += 1
            self._mean_s += (time.monotonic() - started - self._mean_s) / min(self._finished, 10)
