"""What replicas that share a server use to coordinate through the class database: how they name
the server, a lock per server and purpose, the lease TTL, and one heartbeat thread per process
that keeps its rows alive (a run's ticket, a raised log level). A row not refreshed for the TTL
belongs to a replica that died, and the next replica that looks drops it."""
from __future__ import annotations

import socket
import threading
import time
from contextlib import suppress
from typing import Any

import sqlalchemy as sa

from app.lab import env_settings
from app.lab.database.engine import writing
from app.lab.database.errors import DatabaseError

TTL_ENV = "TRITON_LAB_LEASE_TTL_S"
DEFAULT_TTL_S = 10


def lease_ttl_s() -> int:
    given = env_settings.count(TTL_ENV, "seconds")
    return given if given is not None else DEFAULT_TTL_S


def heartbeat_s(ttl_s: float) -> float:
    return max(0.2, ttl_s / 5)  # five beats a lifetime: a slow beat or two never loses a lease


def server_name(url: str) -> str:
    """How replicas name a server among themselves: its address, with the host's name before a
    loopback one (127.0.0.1 on two hosts is two servers; on one host, one)."""
    host = url.removeprefix("http://").split(":", 1)[0]
    return f"{socket.gethostname()}/{url}" if host in ("localhost", "::1") or host.startswith("127.") else url


def server_lock(conn: sa.Connection, purpose: str, server: str) -> None:
    """Serialise decisions about `server` across replicas until the transaction ends."""
    conn.execute(sa.select(sa.func.pg_advisory_xact_lock(sa.func.hashtext(f"{purpose} {server}"))))


def expired(column: sa.ColumnElement[Any], ttl_s: float) -> sa.ColumnElement[bool]:  # any table's heartbeat column
    return column < sa.func.now() - sa.func.make_interval(0, 0, 0, 0, 0, 0, ttl_s)


class Heartbeat:
    """One thread per process and database: refreshes the rows this process holds (table, id)."""

    def __init__(self, db_url: str, every_s: float):
        self.db_url, self.every_s = db_url, every_s
        self._rows: set[tuple[sa.Table, int]] = set()
        self._lock = threading.Lock()
        self._thread: threading.Thread | None = None

    def add(self, table: sa.Table, row: int) -> None:
        with self._lock:
            self._rows.add((table, row))
            if self._thread is None or not self._thread.is_alive():
                self._thread = threading.Thread(target=self._beat, name="lab-lease-heartbeat", daemon=True)
                self._thread.start()

    def drop(self, table: sa.Table, row: int) -> None:
        with self._lock:
            self._rows.discard((table, row))

    def _beat(self) -> None:
        while True:
            time.sleep(self.every_s)  # a period, not a wait for an event: the beat is the event others read
            with self._lock:
                rows = sorted(self._rows, key=lambda pair: (pair[0].name, pair[1]))
            if not rows:
                continue
            # The database is away: others cannot admit anyone either; the next beat tries again.
            with suppress(DatabaseError), writing(self.db_url) as conn:
                for table in {table for table, _ in rows}:
                    ids = [row for t, row in rows if t is table]
                    conn.execute(table.update().where(table.c.id.in_(ids)).values(heartbeat_at=sa.func.now()))


_beats: dict[str, Heartbeat] = {}
_beats_lock = threading.Lock()


def heartbeat(db_url: str, ttl_s: float) -> Heartbeat:
    with _beats_lock:
        beat = _beats.get(db_url)
        if beat is None:
            beat = _beats[db_url] = Heartbeat(db_url, heartbeat_s(ttl_s))
        return beat
