"""What app replicas sharing one Triton coordinate: run tickets (a run's lease on its deployment,
in arrival order, kept alive by heartbeats) and the deployments loaded on a shared server.

Revision ID: 0003
Revises: 0002
"""
import sqlalchemy as sa
from alembic import op

revision = "0003"
down_revision = "0002"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_table(
        "run_tickets",
        sa.Column("id", sa.BigInteger().with_variant(sa.Integer, "sqlite"), primary_key=True, autoincrement=True),
        sa.Column("server", sa.Text, nullable=False),
        sa.Column("model", sa.Text, nullable=False),
        sa.Column("holder", sa.Text, nullable=False),
        sa.Column("active", sa.Boolean, nullable=False, server_default=sa.false()),
        sa.Column("heartbeat_at", sa.DateTime(timezone=True), nullable=False, server_default=sa.func.now()),
    )
    op.create_index("run_tickets_by_server", "run_tickets", ["server", "id"])
    op.create_table(
        "loaded_deployments",
        sa.Column("server", sa.Text, primary_key=True),
        sa.Column("name", sa.Text, primary_key=True),
        sa.Column("stubs", sa.Integer, nullable=False),
        sa.Column("config_text", sa.Text, nullable=False),
        sa.Column("loading", sa.Boolean, nullable=False, server_default=sa.false()),
        sa.Column("used_at", sa.DateTime(timezone=True), nullable=False, server_default=sa.func.now()),
    )


def downgrade() -> None:
    op.drop_table("loaded_deployments")
    op.drop_index("run_tickets_by_server", "run_tickets")
    op.drop_table("run_tickets")
