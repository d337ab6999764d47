"""A link page's reminder kept with the page, and a rematch's seats drawn at random (issue 19).

- `pages.reminder_at` (UTC, indexed): when the side to act of a link page is to be reminded by push that a
  fifth of its move's time is left. Written in the transaction of the move that set its deadline, set to
  NULL by the process that sends it (the UPDATE only one process wins) and when the turn passes. Every
  process reads the earliest of them, as it reads the deadlines, so a restart loses no reminder. Old
  pages get NULL: no reminder is waiting for the move they are at.
- `rematches.offered_seat` (the sha256 of the offering seat's new token, drawn at random with its offer),
  `rematches.offered_seal` and `rematches.accepted_seal` (each seat's new token sealed under a key only
  that seat's old token gives: the server hands it out again only to that token's holder). Rows written
  before this migration have none of them and keep the tokens derived from the old seats.
- `ix_rematches_expires_at`: every process reads the earliest standing offers' ends, to tell the
  page's sockets when one runs out.

Plain ADD COLUMN and CREATE INDEX: native on SQLite and PostgreSQL, no table is copied.

Revision ID: 0009_reminders_rematch_seats
Revises: 0008_departures
Create Date: 2026-12-02
"""

from __future__ import annotations

from collections.abc import Sequence

import sqlalchemy as sa

from alembic import op

revision: str = "0009_reminders_rematch_seats"
down_revision: str | None = "0008_departures"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

_REMATCH_COLUMNS = ("offered_seat", "offered_seal", "accepted_seal")


def upgrade() -> None:
    op.add_column("pages", sa.Column("reminder_at", sa.DateTime(timezone=True), nullable=True))
    op.create_index("ix_pages_reminder_at", "pages", ["reminder_at"])
    op.add_column("rematches", sa.Column("offered_seat", sa.String(64), nullable=True))
    op.add_column("rematches", sa.Column("offered_seal", sa.String(128), nullable=True))
    op.add_column("rematches", sa.Column("accepted_seal", sa.String(128), nullable=True))
    op.create_index("ix_rematches_expires_at", "rematches", ["expires_at"])


def downgrade() -> None:
    op.drop_index("ix_rematches_expires_at", table_name="rematches")
    op.drop_index("ix_pages_reminder_at", table_name="pages")
    # Native DROP COLUMN (SQLite ≥ 3.35, PostgreSQL), as 0007: the tables are not copied.
    for column in _REMATCH_COLUMNS:
        op.execute(f"ALTER TABLE rematches DROP COLUMN {column}")
    op.execute("ALTER TABLE pages DROP COLUMN reminder_at")
