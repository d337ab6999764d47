"""Bot leases: the server process that plays Dawood-bot on a page, until its lease runs out.

Revision ID: 0004_bot_leases
Revises: 0003_push_subscriptions
Create Date: 2026-11-30
"""

from __future__ import annotations

from collections.abc import Sequence

import sqlalchemy as sa

from alembic import op

revision: str = "0004_bot_leases"
down_revision: str | None = "0003_push_subscriptions"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    op.create_table(
        "bot_leases",
        sa.Column("page_id", sa.String(32), primary_key=True),
        sa.Column("owner", sa.String(64), nullable=False),
        sa.Column("expires_at", sa.DateTime(timezone=True), nullable=False),
    )
    op.create_index("ix_bot_leases_expires_at", "bot_leases", ["expires_at"])


def downgrade() -> None:
    op.drop_index("ix_bot_leases_expires_at", table_name="bot_leases")
    op.drop_table("bot_leases")
