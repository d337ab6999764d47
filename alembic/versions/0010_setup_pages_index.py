"""The expiry sweeper's index over the pages it reads only: open pages still in setup (issue 22).

`ix_pages_phase_updated_at` (0002) held every page, by (phase, updated_at), and every move changes
`updated_at`: each action of a page in play rewrote its entry, for a query that reads pages in setup
alone. `ix_pages_setup_updated_at` is a partial index, by `updated_at`, of the rows the sweeper's
WHERE selects (`status = 'open' AND phase IN ('bases', 'positioning')`, written with the same literals,
so SQLite's planner, which matches a partial index's terms as written, and PostgreSQL's both use it): a
page in play or over is not in it, and its moves write no entry there. Nothing else reads the old index
(the deadlines, reminders and offers have indexes of their own).

Plain DROP INDEX and CREATE INDEX … WHERE: native on SQLite and PostgreSQL, no table is copied.

Revision ID: 0010_setup_pages_index
Revises: 0009_reminders_rematch_seats
Create Date: 2026-12-02
"""

from __future__ import annotations

from collections.abc import Sequence

import sqlalchemy as sa

from alembic import op

revision: str = "0010_setup_pages_index"
down_revision: str | None = "0009_reminders_rematch_seats"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

# The sweeper's WHERE at this migration (expiry.SWEPT; a migration keeps its own copy).
_SWEPT = "status = 'open' AND phase IN ('bases', 'positioning')"


def upgrade() -> None:
    op.drop_index("ix_pages_phase_updated_at", table_name="pages")
    op.create_index(
        "ix_pages_setup_updated_at",
        "pages",
        ["updated_at"],
        sqlite_where=sa.text(_SWEPT),
        postgresql_where=sa.text(_SWEPT),
    )


def downgrade() -> None:
    op.drop_index("ix_pages_setup_updated_at", table_name="pages")
    op.create_index("ix_pages_phase_updated_at", "pages", ["phase", "updated_at"])
