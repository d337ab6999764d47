"""A link page's reminder kept with the page, and a rematch's seats drawn at random (issue 19).

- `pages.reminder_at` (UTC, indexed): when the side to act of a link page is to be reminded by push that a
  fifth of its move's time is left. Written in the transaction of the move that set its deadline, set to
  NULL by the process that sends it (the UPDATE only one process wins) and when the turn passes. Every
  process reads the earliest of them, as it reads the deadlines, so a restart loses no reminder. A link
  page in play whose reminder is still to come (its deadline less a fifth of its time per move is after
  the migration) gets it here, so this deploy loses none either; one whose moment has passed was sent
  (or lost) by the process before and gets NULL, as every other page.
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
from datetime import UTC, datetime, timedelta

import sqlalchemy as sa

from alembic import op

revision: str = "0009_reminders_rematch_seats"
down_revision: str | None = "0008_departures"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

_REMATCH_COLUMNS = ("offered_seat", "offered_seal", "accepted_seal")
# The share of a link page's time per move left when its side to act is reminded (the clock model's
# REMINDER_LEFT at this migration; a migration keeps its own numbers).
_REMINDER_LEFT = 0.2
_pages = sa.table(
    "pages",
    sa.column("id", sa.String),
    sa.column("mode", sa.String),
    sa.column("status", sa.String),
    sa.column("clock", sa.JSON),
    sa.column("deadline", sa.DateTime(timezone=True)),
    sa.column("reminder_at", sa.DateTime(timezone=True)),
)


def upgrade() -> None:
    op.add_column("pages", sa.Column("reminder_at", sa.DateTime(timezone=True), nullable=True))
    op.create_index("ix_pages_reminder_at", "pages", ["reminder_at"])
    _remind_the_moves_under_way()
    op.add_column("rematches", sa.Column("offered_seat", sa.String(64), nullable=True))
    op.add_column("rematches", sa.Column("offered_seal", sa.String(128), nullable=True))
    op.add_column("rematches", sa.Column("accepted_seal", sa.String(128), nullable=True))
    op.create_index("ix_rematches_expires_at", "rematches", ["expires_at"])


def _remind_the_moves_under_way() -> None:
    """Stores the reminder of each link page in play whose moment is still to come."""
    bind = op.get_bind()
    now = datetime.now(UTC)
    running = sa.select(_pages.c.id, _pages.c.clock, _pages.c.deadline).where(
        _pages.c.mode == "link", _pages.c.status == "open", _pages.c.deadline.is_not(None)
    )
    for page_id, clock, deadline in bind.execute(running).all():
        per_move_s = clock.get("per_move_s") if isinstance(clock, dict) else None
        if not isinstance(per_move_s, int | float) or isinstance(per_move_s, bool):
            continue
        ends = deadline.replace(tzinfo=UTC) if deadline.tzinfo is None else deadline.astimezone(UTC)
        at = ends - timedelta(seconds=per_move_s * _REMINDER_LEFT)
        if at > now:
            bind.execute(sa.update(_pages).where(_pages.c.id == page_id).values(reminder_at=at))


def downgrade() -> None:
    op.drop_index("ix_rematches_expires_at", table_name="rematches")
    op.drop_index("ix_pages_reminder_at", table_name="pages")
    # Native DROP COLUMN (SQLite ≥ 3.35, PostgreSQL), as 0007: the tables are not copied.
    for column in _REMATCH_COLUMNS:
        op.execute(f"ALTER TABLE rematches DROP COLUMN {column}")
    op.execute("ALTER TABLE pages DROP COLUMN reminder_at")
