"""The private state checkpoint leaves the page row for a table of its own (issue 12).

Every action updates its page's row (version, phase, side to act). The engine's private state cached in
that same row (8–20 KB of JSON) made each of those updates rewrite the whole record and its overflow
pages: a commit wrote about four times the WAL it needed. The checkpoint is written only every few
versions, so it now lives in `page_states` (one row per page, updated in place, as JSON text), and the
page row is small.

Old databases upgrade in place: each page's cached state (where it had one) is copied over, then the two
columns are dropped (`ALTER TABLE … DROP COLUMN`, native in SQLite ≥ 3.35 and PostgreSQL, so the table
is not copied and the foreign keys pointing at it are untouched). A page without a cached state gets no
row and is rebuilt from its log when first read, as before.

Revision ID: 0006_page_states
Revises: 0005_presence
Create Date: 2026-11-30
"""

from __future__ import annotations

from collections.abc import Sequence

import sqlalchemy as sa

from alembic import op

revision: str = "0006_page_states"
down_revision: str | None = "0005_presence"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    op.create_table(
        "page_states",
        sa.Column("page_id", sa.String(32), sa.ForeignKey("pages.id"), primary_key=True),
        sa.Column("version", sa.Integer(), nullable=False),
        sa.Column("state", sa.Text(), nullable=False),
    )
    op.execute(
        "INSERT INTO page_states (page_id, version, state)"
        " SELECT id, cache_version, CAST(state_cache AS TEXT) FROM pages"
        " WHERE state_cache IS NOT NULL AND cache_version IS NOT NULL"
    )
    op.execute("ALTER TABLE pages DROP COLUMN state_cache")
    op.execute("ALTER TABLE pages DROP COLUMN cache_version")


def downgrade() -> None:
    op.add_column("pages", sa.Column("state_cache", sa.JSON(), nullable=True))
    op.add_column("pages", sa.Column("cache_version", sa.Integer(), nullable=True))
    cast = "CAST(state AS JSON)" if op.get_bind().dialect.name == "postgresql" else "state"
    op.execute(
        "UPDATE pages SET"
        f" state_cache = (SELECT {cast} FROM page_states WHERE page_states.page_id = pages.id),"
        " cache_version = (SELECT version FROM page_states WHERE page_states.page_id = pages.id)"
    )
    op.drop_table("page_states")
