"""The log verbosity of a Triton that app replicas share, coordinated through the class database.

Verbosity is one setting for the whole server, so a replica that restored "its" level while
another replica's run still needed the log, or that died while it had raised it, would leave the
others with the wrong one. Each raise is a row kept alive by this process's heartbeat
(app/lab/database/leases.py); the server's own level is recorded the first time any replica
raises it, while no raise is live; whoever ends the last live raise sets that level back, and a
raise whose replica died stops counting after the lease TTL.
"""
from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager, suppress
from typing import TYPE_CHECKING, Protocol

import sqlalchemy as sa

from app.lab import database
from app.lab.database import DatabaseError
from app.lab.database import schema as t
from app.lab.database.leases import expired, heartbeat, lease_ttl_s, server_lock, server_name

if TYPE_CHECKING:
    import tritonclient.http as http



class _Logging(Protocol):
    @property
    def url(self) -> str: ...
    def client(self, timeout_s: float = 60.0) -> http.InferenceServerClient: ...


def _live(conn: sa.Connection, server: str, ttl_s: float) -> list[int]:
    conn.execute(t.log_raises.delete().where(t.log_raises.c.server == server, expired(t.log_raises.c.heartbeat_at, ttl_s)))
    return list(conn.execute(sa.select(t.log_raises.c.level).where(t.log_raises.c.server == server)).scalars())


@contextmanager
def raised(server: _Logging, level: int, db_url: str) -> Iterator[None]:
    """Hold the server's verbosity at `level` or more while the block runs, across replicas."""
    name, ttl_s = server_name(server.url), lease_ttl_s()
    beat = heartbeat(db_url, ttl_s)
    with database.writing(db_url) as conn, server.client(timeout_s=10) as client:
        server_lock(conn, "log", name)
        live = _live(conn, name, ttl_s)
        now = int(client.get_log_settings().get("log_verbose_level", 0))
        if not live:
            # No live raise: what the server runs at now is its own level (a dead replica's raise
            # expired, so the recorded level stands, not the one it left).
            recorded = conn.execute(sa.select(t.log_baselines.c.level).where(t.log_baselines.c.server == name)).scalar()
            if recorded is None:
                conn.execute(t.log_baselines.insert().values(server=name, level=now))
        if level > now:
            client.update_log_settings({"log_verbose_level": level})
        row = int(conn.execute(t.log_raises.insert().values(server=name, level=level).returning(t.log_raises.c.id)).scalar_one())
    beat.add(t.log_raises, row)
    try:
        yield
    finally:
        beat.drop(t.log_raises, row)
        with suppress(DatabaseError), database.writing(db_url) as conn:
            server_lock(conn, "log", name)
            conn.execute(t.log_raises.delete().where(t.log_raises.c.id == row))
            live = _live(conn, name, ttl_s)
            baseline = conn.execute(sa.select(t.log_baselines.c.level).where(t.log_baselines.c.server == name)).scalar()
            target = max(live, default=baseline if baseline is not None else 0)
            with suppress(Exception), server.client(timeout_s=10) as client:  # a server that died meanwhile has no verbosity to restore
                client.update_log_settings({"log_verbose_level": target})
