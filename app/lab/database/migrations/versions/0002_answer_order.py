"""Answers keep the order they were given in on every engine: `seq` numbers them within their
attempt. The first schema relied on SQLite's rowid, which PostgreSQL has not; rows already in a
file take their rowid, which orders them as before.

Revision ID: 0002
Revises: 0001
"""
import sqlalchemy as sa
from alembic import op

revision = "0002"
down_revision = "0001"
branch_labels = None
depends_on = None


def upgrade() -> None:
    with op.batch_alter_table("answers") as batch:
        batch.add_column(sa.Column("seq", sa.Integer, nullable=False, server_default="0"))
    if op.get_bind().dialect.name == "sqlite":
        op.execute("UPDATE answers SET seq = rowid")


def downgrade() -> None:
    with op.batch_alter_table("answers") as batch:
        batch.drop_column("seq")
