"""Which processes hear a page's commits (issue 22): `pages.followers`.

On PostgreSQL a process LISTENs to a page's own channel while it holds a room of the page, and then
writes its process id into the page row (`broadcast.PostgresBroadcast.follow`). An action's statement
reads the row it moves on and sends the action's NOTIFY only when a process other than the writer's
follows the page (`store/appends.py`): with page affinity nobody else does, and no notice is sent at all.
The id is written into the page row itself, not a table beside it, because the move's UPDATE and the
follower's take the same row lock: whichever comes second sees the other (the move's RETURNING reads
the row as the follower left it, or the follower's read of the log after it sees the move).

The column holds the ids as one text, each followed by a space after a leading one (" a b "), NULL
when nobody follows: plain text, so the column is the same on both databases (SQLite's, never written,
keeps the schema the models describe).

Revision ID: 0012_page_followers
Revises: 0011_setup_moved_at
Create Date: 2026-12-04
"""

from __future__ import annotations

from collections.abc import Sequence

import sqlalchemy as sa

from alembic import op

revision: str = "0012_page_followers"
down_revision: str | None = "0011_setup_moved_at"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    op.add_column("pages", sa.Column("followers", sa.Text(), nullable=True))


def downgrade() -> None:
    # Native DROP COLUMN (SQLite ≥ 3.35, PostgreSQL), as 0011: the table is not copied.
    op.execute("ALTER TABLE pages DROP COLUMN followers")
