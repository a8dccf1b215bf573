"""Alembic's environment: always given a connection by app/lab/database/migrate.py (never a URL
from an ini file), inside the transaction that holds the upgrade's lock."""
from alembic import context

from app.lab.database.schema import metadata

connection = context.config.attributes["connection"]
context.configure(connection=connection, target_metadata=metadata, render_as_batch=True)
with context.begin_transaction():
    context.run_migrations()
