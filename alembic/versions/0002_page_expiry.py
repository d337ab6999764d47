"""Expired pages: a tombstone per page deleted because nobody played it past setup in time, and an
index that finds such pages without reading the whole table.

Revision ID: 0002_page_expiry
Revises: 0001
Create Date: 2026-11-30
"""

from __future__ import annotations

from collections.abc import Sequence

import sqlalchemy as sa

from alembic import op

revision: str = "0002_page_expiry"
down_revision: str | None = "0001"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    op.create_table(
        "expired_pages",
        sa.Column("id", sa.String(32), primary_key=True),
        sa.Column("expired_at", sa.DateTime(timezone=True), nullable=False),
    )
    op.create_index("ix_pages_phase_updated_at", "pages", ["phase", "updated_at"])


def downgrade() -> None:
    op.drop_index("ix_pages_phase_updated_at", table_name="pages")
    op.drop_table("expired_pages")
