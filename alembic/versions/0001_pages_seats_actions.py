"""Pages, seats and the append-only action log.

Revision ID: 0001
Revises:
Create Date: 2026-11-29
"""

from __future__ import annotations

from collections.abc import Sequence

import sqlalchemy as sa

from alembic import op

revision: str = "0001"
down_revision: str | None = None
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    op.create_table(
        "pages",
        sa.Column("id", sa.String(32), primary_key=True),
        sa.Column("rules", sa.JSON(), nullable=False),
        sa.Column("preset", sa.String(16), nullable=False),
        sa.Column("seed", sa.String(32), nullable=False),
        sa.Column("seed_sha256", sa.String(64), nullable=False),
        sa.Column("mode", sa.String(8), nullable=False),
        sa.Column("status", sa.String(8), nullable=False),
        sa.Column("phase", sa.String(16), nullable=False),
        sa.Column("side_to_act", sa.String(8), nullable=True),
        sa.Column("winner", sa.String(8), nullable=True),
        sa.Column("version", sa.Integer(), nullable=False),
        sa.Column("bot", sa.JSON(), nullable=True),
        sa.Column("state_cache", sa.JSON(), nullable=True),
        sa.Column("cache_version", sa.Integer(), nullable=True),
        sa.Column("created_at", sa.DateTime(timezone=True), nullable=False),
        sa.Column("updated_at", sa.DateTime(timezone=True), nullable=False),
    )
    op.create_table(
        "seats",
        sa.Column("id", sa.Integer(), primary_key=True, autoincrement=True),
        sa.Column("page_id", sa.String(32), sa.ForeignKey("pages.id"), nullable=False),
        sa.Column("side", sa.String(8), nullable=True),
        sa.Column("kind", sa.String(8), nullable=False),
        sa.Column("token_hash", sa.String(64), nullable=False, unique=True),
    )
    op.create_index("ix_seats_page_id", "seats", ["page_id"])
    op.create_table(
        "actions",
        sa.Column("id", sa.Integer(), primary_key=True, autoincrement=True),
        sa.Column("page_id", sa.String(32), sa.ForeignKey("pages.id"), nullable=False),
        sa.Column("version", sa.Integer(), nullable=False),
        sa.Column("side", sa.String(8), nullable=False),
        sa.Column("action", sa.JSON(), nullable=False),
        sa.Column("events", sa.JSON(), nullable=False),
        sa.Column("move_id", sa.String(64), nullable=True),
        sa.Column("created_at", sa.DateTime(timezone=True), nullable=False),
        sa.UniqueConstraint("page_id", "version", name="uq_actions_page_version"),
        sa.UniqueConstraint("page_id", "move_id", name="uq_actions_page_move_id"),
    )


def downgrade() -> None:
    op.drop_table("actions")
    op.drop_index("ix_seats_page_id", table_name="seats")
    op.drop_table("seats")
    op.drop_table("pages")
