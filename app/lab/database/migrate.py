"""Schema versions by Alembic (app/lab/database/migrations): every engine is brought to the
newest revision before its first use, by whichever process gets there first.

Racing processes are safe: the upgrade runs in one write transaction (SQLite's write lock;
on PostgreSQL an advisory lock first), and both engines roll DDL back with it. A progress file
written before the move to SQLAlchemy (the tables of revision 0001, no alembic_version) is
stamped 0001 and upgraded from there, so nothing in it is rewritten or lost.
"""
from __future__ import annotations

import sqlite3
import time
from pathlib import Path

import sqlalchemy as sa
from alembic import command
from alembic.config import Config
from alembic.runtime.migration import MigrationContext
from alembic.script import ScriptDirectory

SCRIPTS = Path(__file__).with_name("migrations")
FIRST = "0001"
_MIGRATION_LOCK = 0x7472_6C61  # any fixed key: every replica's upgrade queues on it


def config(connection: sa.Connection | None = None) -> Config:
    cfg = Config()
    cfg.set_main_option("script_location", str(SCRIPTS))
    cfg.attributes["connection"] = connection
    return cfg


def head() -> str:
    return ScriptDirectory.from_config(config()).get_current_head() or FIRST


def current(connection: sa.Connection) -> str | None:
    return MigrationContext.configure(connection).get_current_revision()


def upgrade(engine: sa.Engine) -> None:
    newest = head()
    with engine.connect() as probe:
        if current(probe) == newest:
            return  # the common case: one read, no lock
    with engine.connect().execution_options(lab_write=True) as conn, conn.begin():
        if conn.dialect.name == "postgresql":
            conn.execute(sa.text("SELECT pg_advisory_xact_lock(:key)"), {"key": _MIGRATION_LOCK})
        cfg = config(conn)
        tables = set(sa.inspect(conn).get_table_names())
        if "attempts" in tables and "alembic_version" not in tables:
            command.stamp(cfg, FIRST)  # today's tables, from the hand-written schema of before
        command.upgrade(cfg, "head")
    if engine.dialect.name == "sqlite":
        _wal(engine)


def _wal(engine: sa.Engine, attempts: int = 50) -> None:
    """Readers run during a write in WAL mode; it persists in the file. The switch needs a moment
    with no other transaction open, so a racing process may see "locked": retried."""
    for attempt in range(attempts):
        raw = engine.raw_connection()
        try:
            driver = raw.driver_connection
            assert driver is not None  # a connection just taken from the pool is open
            driver.execute("PRAGMA journal_mode = WAL")
            return
        except sqlite3.OperationalError as exc:
            if "locked" not in str(exc) and "busy" not in str(exc) or attempt == attempts - 1:
                raise
            time.sleep(0.05 * (attempt + 1))  # back off: another process holds the file this instant
        finally:
            raw.close()
