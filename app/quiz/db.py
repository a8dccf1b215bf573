"""Where the class store lives and how the quiz writes to it, over app/lab/database.

A store is named by a database URL (PostgreSQL for a class on several app replicas), by an
SQLite file's path, or by nothing: then the class database (TRITON_LAB_DATABASE_URL, the
`[connections.class_store]` secrets, or progress.sqlite3 in the data folder). The statements
that differ between the two engines (insert-or-ignore, upsert) are chosen here, once.
"""
from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

import sqlalchemy as sa
from sqlalchemy.dialects import postgresql, sqlite

from app.lab import database
from app.lab.database import reading, writing
from app.lab.database.settings import FILE_NAME

__all__ = ["FILE_NAME", "insert_ignore", "reading", "sqlite_path", "upsert", "url_for", "writing"]


def url_for(where: Path | str | None) -> str:
    if where is None:
        return database.class_database_url()
    text = str(where)
    return text if "://" in text else database.sqlite_url(Path(text))


def sqlite_path(url: str) -> Path | None:
    parsed = sa.make_url(url) if url.startswith("sqlite") else None
    return Path(parsed.database) if parsed is not None and parsed.database else None


def _insert(conn: sa.Connection, table: sa.Table) -> postgresql.Insert | sqlite.Insert:
    return postgresql.insert(table) if conn.dialect.name == "postgresql" else sqlite.insert(table)


def insert_ignore(conn: sa.Connection, table: sa.Table, **values: object) -> None:
    """INSERT unless a row with that key exists (the first one stays)."""
    conn.execute(_insert(conn, table).values(**values).on_conflict_do_nothing())


def upsert(conn: sa.Connection, table: sa.Table, keys: Sequence[str], **values: object) -> None:
    """INSERT, or replace the non-key columns of the row with those keys."""
    statement = _insert(conn, table).values(**values)
    changed = {name: statement.excluded[name] for name in values if name not in keys}
    conn.execute(statement.on_conflict_do_update(index_elements=list(keys), set_=changed))
