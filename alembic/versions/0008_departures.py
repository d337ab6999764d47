"""When each seat of a page last left it, across processes (PostgreSQL only; issue 19, absence).

`dotfight_departures` keeps one row per page and side: when the last socket of that seat on any process
closed (written by the process whose socket it was, or by the process that found it dead). A live page's
side to act may be claimed against once it has been away for the absence grace, counted from the later
of the turn passing to it and this moment, whichever process decides the claim. Logged, unlike
presence: a departure is a fact a claim needs after a restart of the database too. On SQLite (one
process serves live play) the process keeps departures in memory and nothing is created.

Revision ID: 0008_departures
Revises: 0007_clocks_rematches_phrases
Create Date: 2026-12-01
"""

from __future__ import annotations

from collections.abc import Sequence

from alembic import op

revision: str = "0008_departures"
down_revision: str | None = "0007_clocks_rematches_phrases"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    if op.get_bind().dialect.name != "postgresql":
        return
    op.execute(
        "CREATE TABLE dotfight_departures ("
        " page_id varchar(32) NOT NULL,"
        " side varchar(8) NOT NULL,"
        " left_at timestamptz NOT NULL,"
        " PRIMARY KEY (page_id, side))"
    )


def downgrade() -> None:
    if op.get_bind().dialect.name != "postgresql":
        return
    op.execute("DROP TABLE dotfight_departures")
