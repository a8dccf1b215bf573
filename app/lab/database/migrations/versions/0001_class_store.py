"""The class store as the first, hand-written SQLite schema had it (user_version 1): learners,
attempts, answers, predictions, the presenter's polls and votes.

Revision ID: 0001
Revises:
"""
import sqlalchemy as sa
from alembic import op

revision = "0001"
down_revision = None
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_table(
        "learners",
        sa.Column("name", sa.Text, primary_key=True),
        sa.Column("created_at", sa.Text, nullable=False),
    )
    op.create_table(
        "attempts",
        sa.Column("id", sa.Integer, primary_key=True, autoincrement=True),
        sa.Column("learner", sa.Text, sa.ForeignKey("learners.name", ondelete="CASCADE"), nullable=False),
        sa.Column("seed", sa.Integer, nullable=False),
        sa.Column("timed", sa.Integer, nullable=False, server_default="0"),
        sa.Column("time_limit_s", sa.Float),
        sa.Column("started_at", sa.Text, nullable=False),
        sa.Column("finished_at", sa.Text),
        sqlite_autoincrement=True,
    )
    op.create_index("attempts_by_learner", "attempts", ["learner", "id"])
    op.create_table(
        "answers",
        sa.Column("attempt_id", sa.Integer, sa.ForeignKey("attempts.id", ondelete="CASCADE"), nullable=False),
        sa.Column("item_id", sa.Text, nullable=False),
        sa.Column("topic", sa.Text, nullable=False),
        sa.Column("item_type", sa.Text, nullable=False),
        sa.Column("answer_json", sa.Text, nullable=False),
        sa.Column("score", sa.Float, nullable=False),
        sa.Column("correct", sa.Integer, nullable=False),
        sa.Column("detail", sa.Text, nullable=False),
        sa.Column("answered_at", sa.Text, nullable=False),
        sa.Column("elapsed_s", sa.Float),
        sa.UniqueConstraint("attempt_id", "item_id"),
    )
    op.create_index("answers_by_item", "answers", ["item_id"])
    op.create_table(
        "predictions",
        sa.Column("id", sa.Integer, primary_key=True, autoincrement=True),
        sa.Column("learner", sa.Text, nullable=False),
        sa.Column("exercise", sa.Text, nullable=False),
        sa.Column("prediction", sa.Text, nullable=False),
        sa.Column("outcome", sa.Text, nullable=False),
        sa.Column("held", sa.Integer, nullable=False),
        sa.Column("at", sa.Text, nullable=False),
        sqlite_autoincrement=True,
    )
    op.create_index("predictions_by_learner", "predictions", ["learner", "id"])
    op.create_table(
        "demo_polls",
        sa.Column("code", sa.Text, primary_key=True),
        sa.Column("demo", sa.Text, nullable=False),
        sa.Column("state", sa.Text, nullable=False),
        sa.Column("opened_at", sa.Text, nullable=False),
        sa.Column("closed_at", sa.Text),
        sa.Column("revealed_at", sa.Text),
        sa.Column("right_json", sa.Text),
    )
    op.create_table(
        "demo_votes",
        sa.Column("code", sa.Text, sa.ForeignKey("demo_polls.code", ondelete="CASCADE"), primary_key=True),
        sa.Column("voter", sa.Text, primary_key=True),
        sa.Column("option", sa.Text, nullable=False),
        sa.Column("at", sa.Text, nullable=False),
    )


def downgrade() -> None:
    for table in ("demo_votes", "demo_polls", "predictions", "answers", "attempts", "learners"):
        op.drop_table(table)
