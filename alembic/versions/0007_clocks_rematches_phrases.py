"""Pages between two people (issue 19): the page's clock, its clock state and deadline, its rematch, its
phrases, and the server's heartbeat.

- `pages.clock` (JSON, the clock as created), `pages.clock_state` (JSON, the clock model's own state,
  written in the transaction of the move that changed it) and `pages.deadline` (UTC, indexed: the
  server's one timer asks for the earliest deadlines of the pages in play). Old pages get NULL in all
  three: no clock, as before.
- `rematches`: a page's one rematch (its offer, and once accepted the new page, unique: a page is the
  rematch of at most one page).
- `phrases`: what each side said on a page, with the page's version then.
- `server_beats`: each server process's last heartbeat.

Plain ADD COLUMN and CREATE TABLE/INDEX: native on SQLite and PostgreSQL, no table is copied.

Revision ID: 0007_clocks_rematches_phrases
Revises: 0006_page_states
Create Date: 2026-12-01
"""

from __future__ import annotations

from collections.abc import Sequence

import sqlalchemy as sa

from alembic import op

revision: str = "0007_clocks_rematches_phrases"
down_revision: str | None = "0006_page_states"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    op.add_column("pages", sa.Column("clock", sa.JSON(), nullable=True))
    op.add_column("pages", sa.Column("clock_state", sa.JSON(), nullable=True))
    op.add_column("pages", sa.Column("deadline", sa.DateTime(timezone=True), nullable=True))
    op.create_index("ix_pages_deadline", "pages", ["deadline"])
    op.create_table(
        "rematches",
        sa.Column("page_id", sa.String(32), sa.ForeignKey("pages.id"), primary_key=True),
        sa.Column("offered_by", sa.String(8), nullable=False),
        sa.Column("offered_at", sa.DateTime(timezone=True), nullable=False),
        sa.Column("expires_at", sa.DateTime(timezone=True), nullable=False),
        sa.Column("new_page_id", sa.String(32), sa.ForeignKey("pages.id"), nullable=True, unique=True),
        sa.Column("accepted_at", sa.DateTime(timezone=True), nullable=True),
    )
    op.create_table(
        "phrases",
        sa.Column("id", sa.Integer(), primary_key=True, autoincrement=True),
        sa.Column("page_id", sa.String(32), sa.ForeignKey("pages.id"), nullable=False),
        sa.Column("side", sa.String(8), nullable=False),
        sa.Column("phrase", sa.String(32), nullable=False),
        sa.Column("at", sa.DateTime(timezone=True), nullable=False),
        sa.Column("version", sa.Integer(), nullable=False),
    )
    op.create_index("ix_phrases_page_side", "phrases", ["page_id", "side"])
    op.create_table(
        "server_beats",
        sa.Column("process_id", sa.String(64), primary_key=True),
        sa.Column("started_at", sa.DateTime(timezone=True), nullable=False),
        sa.Column("beat_at", sa.DateTime(timezone=True), nullable=False),
    )
    op.create_index("ix_server_beats_beat_at", "server_beats", ["beat_at"])


def downgrade() -> None:
    op.drop_index("ix_server_beats_beat_at", table_name="server_beats")
    op.drop_table("server_beats")
    op.drop_index("ix_phrases_page_side", table_name="phrases")
    op.drop_table("phrases")
    op.drop_table("rematches")
    op.drop_index("ix_pages_deadline", table_name="pages")
    # Native DROP COLUMN (SQLite ≥ 3.35, PostgreSQL), as 0006: the table is not copied, and the foreign
    # keys pointing at it stay untouched.
    for column in ("deadline", "clock_state", "clock"):
        op.execute(f"ALTER TABLE pages DROP COLUMN {column}")
