"""The class store's tables, declared once: the store and the votes read them, Alembic's
migrations create them, and the shared-server tables let app replicas coordinate one Triton.

Timestamps of the quiz tables stay ISO-8601 text in UTC, as the first schema wrote them, so a
file from before the move to SQLAlchemy migrates without rewriting a row. The coordination
tables use the database's own clock (heartbeats are compared with `now()` there), so replicas
on hosts whose clocks differ still agree on who is alive.
"""
from __future__ import annotations

import sqlalchemy as sa

metadata = sa.MetaData()

learners = sa.Table(
    "learners", metadata,
    sa.Column("name", sa.Text, primary_key=True),
    sa.Column("created_at", sa.Text, nullable=False),
)

attempts = sa.Table(
    "attempts", metadata,
    sa.Column("id", sa.Integer, primary_key=True, autoincrement=True),
    sa.Column("learner", sa.Text, sa.ForeignKey("learners.name", ondelete="CASCADE"), nullable=False),
    sa.Column("seed", sa.Integer, nullable=False),
    sa.Column("timed", sa.Integer, nullable=False, server_default="0"),
    sa.Column("time_limit_s", sa.Float),
    sa.Column("started_at", sa.Text, nullable=False),
    sa.Column("finished_at", sa.Text),
    sa.Index("attempts_by_learner", "learner", "id"),
    sqlite_autoincrement=True,
)

answers = sa.Table(
    "answers", metadata,
    sa.Column("attempt_id", sa.Integer, sa.ForeignKey("attempts.id", ondelete="CASCADE"), nullable=False),
    sa.Column("item_id", sa.Text, nullable=False),
    sa.Column("topic", sa.Text, nullable=False),  # copied from the bank so exports survive bank edits
    sa.Column("item_type", sa.Text, nullable=False),
    sa.Column("answer_json", sa.Text, nullable=False),
    sa.Column("score", sa.Float, nullable=False),
    sa.Column("correct", sa.Integer, nullable=False),
    sa.Column("detail", sa.Text, nullable=False),
    sa.Column("answered_at", sa.Text, nullable=False),
    sa.Column("elapsed_s", sa.Float),
    sa.Column("seq", sa.Integer, nullable=False, server_default="0"),  # order within the attempt
    sa.UniqueConstraint("attempt_id", "item_id"),  # an item is graded once per attempt
    sa.Index("answers_by_item", "item_id"),
)

predictions = sa.Table(
    "predictions", metadata,
    sa.Column("id", sa.Integer, primary_key=True, autoincrement=True),
    sa.Column("learner", sa.Text, nullable=False),
    sa.Column("exercise", sa.Text, nullable=False),
    sa.Column("prediction", sa.Text, nullable=False),
    sa.Column("outcome", sa.Text, nullable=False),
    sa.Column("held", sa.Integer, nullable=False),
    sa.Column("at", sa.Text, nullable=False),
    sa.Index("predictions_by_learner", "learner", "id"),
    sqlite_autoincrement=True,
)

demo_polls = sa.Table(  # the presenter's live class votes (app/quiz/votes.py)
    "demo_polls", metadata,
    sa.Column("code", sa.Text, primary_key=True),
    sa.Column("demo", sa.Text, nullable=False),
    sa.Column("state", sa.Text, nullable=False),
    sa.Column("opened_at", sa.Text, nullable=False),
    sa.Column("closed_at", sa.Text),
    sa.Column("revealed_at", sa.Text),
    sa.Column("right_json", sa.Text),  # options the run showed to be right, set at the reveal
)

demo_votes = sa.Table(
    "demo_votes", metadata,
    sa.Column("code", sa.Text, sa.ForeignKey("demo_polls.code", ondelete="CASCADE"), primary_key=True),
    sa.Column("voter", sa.Text, primary_key=True),  # one vote per voter per poll; the last one counts
    sa.Column("option", sa.Text, nullable=False),
    sa.Column("at", sa.Text, nullable=False),
)

# -- what app replicas sharing one Triton coordinate (app/lab/traffic/shared_queue.py,
#    app/lab/deployment/shared_models.py) ----------------------------------------------------

run_tickets = sa.Table(  # a run waiting for, or holding, its deployment on a server
    "run_tickets", metadata,
    sa.Column("id", sa.BigInteger().with_variant(sa.Integer, "sqlite"), primary_key=True, autoincrement=True),  # arrival order
    sa.Column("server", sa.Text, nullable=False),
    sa.Column("model", sa.Text, nullable=False),
    sa.Column("holder", sa.Text, nullable=False),  # replica id and thread: a re-entrant lease is the same holder
    sa.Column("active", sa.Boolean, nullable=False, server_default=sa.false()),
    sa.Column("heartbeat_at", sa.DateTime(timezone=True), nullable=False, server_default=sa.func.now()),
    sa.Index("run_tickets_by_server", "server", "id"),
)

loaded_deployments = sa.Table(  # what is loaded on a shared server, by whom, least recently used first
    "loaded_deployments", metadata,
    sa.Column("server", sa.Text, primary_key=True),
    sa.Column("name", sa.Text, primary_key=True),
    sa.Column("stubs", sa.Integer, nullable=False),
    sa.Column("config_text", sa.Text, nullable=False),
    sa.Column("loading", sa.Boolean, nullable=False, server_default=sa.false()),  # stubs booked, load under way
    sa.Column("used_at", sa.DateTime(timezone=True), nullable=False, server_default=sa.func.now()),
)

log_raises = sa.Table(  # a run that needs the server's log more verbose (app/lab/observation/shared_verbosity.py)
    "log_raises", metadata,
    sa.Column("id", sa.BigInteger().with_variant(sa.Integer, "sqlite"), primary_key=True, autoincrement=True),
    sa.Column("server", sa.Text, nullable=False),
    sa.Column("level", sa.Integer, nullable=False),
    sa.Column("heartbeat_at", sa.DateTime(timezone=True), nullable=False, server_default=sa.func.now()),
)

log_baselines = sa.Table(  # the server's own verbosity, to restore when no run needs more
    "log_baselines", metadata,
    sa.Column("server", sa.Text, primary_key=True),
    sa.Column("level", sa.Integer, nullable=False),
)
