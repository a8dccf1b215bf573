"""One SQLAlchemy engine per database URL in a process, and transactions on it.

SQLite: WAL lets readers run during a write, busy_timeout makes two writers queue rather than
fail, and a write transaction begins IMMEDIATE so it holds the write lock from its first
statement (a deferred one that upgrades can fail with "database is locked"). PostgreSQL: a
pool with pre-ping, so a connection that died with a database restart is replaced at checkout
instead of failing the first page after it. Every failure leaves as a DatabaseError.
"""
from __future__ import annotations

import sqlite3
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import sqlalchemy as sa
from sqlalchemy import event

from app.lab.database.errors import DatabaseError, from_exception

BUSY_TIMEOUT_S = 30.0
CONNECT_TIMEOUT_S = 5

_engines: dict[str, sa.Engine] = {}
_lock = threading.Lock()


def engine_for(url: str) -> sa.Engine:
    """The process's engine for `url`, its schema brought to the newest version first."""
    with _lock:
        engine = _engines.get(url)
    if engine is not None and not _file_gone(engine):
        return engine
    if engine is not None:  # its SQLite file was removed: start a new one, schema and all
        forget(url)
    engine = _create(url)
    from app.lab.database import migrate  # here: migrate needs engines too

    try:
        migrate.upgrade(engine)
    except DatabaseError:
        engine.dispose()
        raise
    except Exception as err:
        engine.dispose()
        raise from_exception(err, url) from err
    with _lock:
        return _engines.setdefault(url, engine)


def forget(url: str | None = None) -> None:
    """Drop cached engines (all, or one URL's): a test that removes a database file or server."""
    with _lock:
        urls = [url] if url is not None else list(_engines)
        for key in urls:
            engine = _engines.pop(key, None)
            if engine is not None:
                engine.dispose()


def _file_gone(engine: sa.Engine) -> bool:
    database = engine.url.database if engine.dialect.name == "sqlite" else None
    return database is not None and database not in ("", ":memory:") and not Path(database).exists()


def _create(url: str) -> sa.Engine:
    try:
        parsed = sa.make_url(url)
        if parsed.get_backend_name() == "sqlite":
            return _sqlite(parsed)
        args = {"connect_timeout": CONNECT_TIMEOUT_S} if parsed.get_backend_name() == "postgresql" else {}
        return sa.create_engine(parsed, pool_pre_ping=True, pool_size=5, max_overflow=10, connect_args=args)
    except Exception as err:
        raise from_exception(err, url) from err


def _sqlite(parsed: sa.URL) -> sa.Engine:
    if parsed.database and parsed.database != ":memory:":
        Path(parsed.database).parent.mkdir(parents=True, exist_ok=True)
    engine = sa.create_engine(parsed, connect_args={"timeout": BUSY_TIMEOUT_S, "check_same_thread": False})

    @event.listens_for(engine, "connect")
    def _on_connect(dbapi_connection: sqlite3.Connection, _record: object) -> None:
        dbapi_connection.isolation_level = None  # BEGIN is ours to emit, with the lock mode we choose
        cursor = dbapi_connection.cursor()
        cursor.execute(f"PRAGMA busy_timeout = {int(BUSY_TIMEOUT_S * 1000)}")
        cursor.execute("PRAGMA foreign_keys = ON")
        cursor.close()

    @event.listens_for(engine, "begin")
    def _on_begin(conn: sa.Connection) -> None:
        conn.exec_driver_sql("BEGIN IMMEDIATE" if conn.get_execution_options().get("lab_write") else "BEGIN")

    return engine


@contextmanager
def reading(url: str) -> Iterator[sa.Connection]:
    """A read transaction; DatabaseError when the database cannot be used."""
    engine = engine_for(url)
    try:
        with engine.connect() as conn, conn.begin():
            yield conn
    except DatabaseError:
        raise
    except sa.exc.SQLAlchemyError as err:
        raise from_exception(err, url) from err


@contextmanager
def writing(url: str) -> Iterator[sa.Connection]:
    """A write transaction, committed when the block ends (or rolled back): what the caller is
    told succeeded is on disk. IntegrityError passes through: it is the caller's to read."""
    engine = engine_for(url)
    try:
        with engine.connect().execution_options(lab_write=True) as conn, conn.begin():
            yield conn
    except (DatabaseError, sa.exc.IntegrityError):
        raise
    except sa.exc.SQLAlchemyError as err:
        raise from_exception(err, url) from err
