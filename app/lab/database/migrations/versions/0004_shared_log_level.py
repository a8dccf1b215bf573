"""The server's log verbosity is one setting for every replica that shares the server: raises
kept alive by heartbeats, and the level to restore when none is left.

Revision ID: 0004
Revises: 0003
"""
import sqlalchemy as sa
from alembic import op

revision = "0004"
down_revision = "0003"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_table(
        "log_raises",
        sa.Column("id", sa.BigInteger().with_variant(sa.Integer, "sqlite"), primary_key=True, autoincrement=True),
        sa.Column("server", sa.Text, nullable=False),
        sa.Column("level", sa.Integer, nullable=False),
        sa.Column("heartbeat_at", sa.DateTime(timezone=True), nullable=False, server_default=sa.func.now()),
    )
    op.create_table(
        "log_baselines",
        sa.Column("server", sa.Text, primary_key=True),
        sa.Column("level", sa.Integer, nullable=False),
    )


def downgrade() -> None:
    op.drop_table("log_baselines")
    op.drop_table("log_raises")
