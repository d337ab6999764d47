"""The expiry sweeper's index on a column a move in play leaves as it was (issue 22): `setup_moved_at`.

0010's `ix_pages_setup_updated_at` was a partial index on `updated_at`, holding only the pages in
setup, and every move changes `updated_at`. PostgreSQL decides whether an UPDATE can be a HOT one
(the new row version on the same heap page, no new entry in any index) from the columns any index
names, in its key or its WHERE, whatever rows the index holds: with `updated_at` named, no move of any
page was a HOT update, so each one wrote a new entry into every index of `pages` (its key, the
deadline's, the reminder's) and left a dead row for vacuum. Measured with the benchmark's 200 live
pages on PostgreSQL: 0 of 3684 page-row updates HOT before, 97 % after, the action's statement 7 %
cheaper in the database.

`setup_moved_at` is when the page last moved while open and in setup, NULL once it is past setup or
over; the new index holds the rows where it is set. The upgrade copies `updated_at` into it for the
pages in setup now (0010's WHERE), so the sweep after it expires what it would have before.

Plain ADD COLUMN, UPDATE, DROP INDEX and CREATE INDEX … WHERE: native on SQLite and PostgreSQL, no
table is copied.

Revision ID: 0011_setup_moved_at
Revises: 0010_setup_pages_index
Create Date: 2026-12-03
"""

from __future__ import annotations

from collections.abc import Sequence

import sqlalchemy as sa

from alembic import op

revision: str = "0011_setup_moved_at"
down_revision: str | None = "0010_setup_pages_index"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

# The sweeper's WHERE at 0010 (a migration keeps its own copy).
_SWEPT = "status = 'open' AND phase IN ('bases', 'positioning')"
_SETUP_MOVED = "setup_moved_at IS NOT NULL"


def upgrade() -> None:
    op.add_column("pages", sa.Column("setup_moved_at", sa.DateTime(timezone=True), nullable=True))
    op.execute(f"UPDATE pages SET setup_moved_at = updated_at WHERE {_SWEPT}")
    op.drop_index("ix_pages_setup_updated_at", table_name="pages")
    op.create_index(
        "ix_pages_setup_moved_at",
        "pages",
        ["setup_moved_at"],
        sqlite_where=sa.text(_SETUP_MOVED),
        postgresql_where=sa.text(_SETUP_MOVED),
    )


def downgrade() -> None:
    op.drop_index("ix_pages_setup_moved_at", table_name="pages")
    op.create_index(
        "ix_pages_setup_updated_at",
        "pages",
        ["updated_at"],
        sqlite_where=sa.text(_SWEPT),
        postgresql_where=sa.text(_SWEPT),
    )
    # Native DROP COLUMN (SQLite ≥ 3.35, PostgreSQL), as 0007 and 0009: the table is not copied.
    op.execute("ALTER TABLE pages DROP COLUMN setup_moved_at")
