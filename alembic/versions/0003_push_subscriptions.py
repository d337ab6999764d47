"""Web Push: a subscription per seat of a page, and the server's VAPID key pair.

Revision ID: 0003_push_subscriptions
Revises: 0002_page_expiry
Create Date: 2026-11-30
"""

from __future__ import annotations

from collections.abc import Sequence

import sqlalchemy as sa

from alembic import op

revision: str = "0003_push_subscriptions"
down_revision: str | None = "0002_page_expiry"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    op.create_table(
        "push_subscriptions",
        sa.Column("id", sa.Integer(), primary_key=True, autoincrement=True),
        sa.Column("page_id", sa.String(32), sa.ForeignKey("pages.id"), nullable=False),
        sa.Column("side", sa.String(8), nullable=False),
        sa.Column("endpoint", sa.String(1024), nullable=False),
        sa.Column("p256dh", sa.String(128), nullable=False),
        sa.Column("auth", sa.String(64), nullable=False),
        sa.Column("created_at", sa.DateTime(timezone=True), nullable=False),
        sa.UniqueConstraint("page_id", "side", "endpoint", name="uq_push_page_side_endpoint"),
    )
    op.create_index("ix_push_subscriptions_page_id", "push_subscriptions", ["page_id"])
    op.create_table(
        "vapid_keys",
        sa.Column("id", sa.Integer(), primary_key=True),
        sa.Column("private_pem", sa.String(1024), nullable=False),
        sa.Column("public_key", sa.String(128), nullable=False),
        sa.Column("created_at", sa.DateTime(timezone=True), nullable=False),
    )


def downgrade() -> None:
    op.drop_table("vapid_keys")
    op.drop_index("ix_push_subscriptions_page_id", table_name="push_subscriptions")
    op.drop_table("push_subscriptions")
