"""The class database: where the store, the votes and replicas' coordination live.

    url = class_database_url()          # TRITON_LAB_DATABASE_URL, secrets.toml, or an SQLite file
    with writing(url) as conn: ...      # a committed transaction, or DatabaseError
    is_shared(url)                      # PostgreSQL: replicas share leases and the budget
"""
from app.lab.database import schema
from app.lab.database.engine import engine_for, forget, reading, writing
from app.lab.database.errors import DatabaseError, masked
from app.lab.database.settings import URL_ENV, class_database_url, is_shared, sqlite_url

__all__ = [
    "URL_ENV", "DatabaseError", "class_database_url", "engine_for", "forget", "is_shared", "masked", "reading",
    "schema", "sqlite_url", "writing",
]
