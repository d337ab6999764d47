"""Presence across processes (PostgreSQL only): each process's heartbeat and the seats it holds per page.

Both tables are UNLOGGED: presence is only true while the processes run, so it need not survive a crash
of the database and costs no WAL. On SQLite (one process serves live play) nothing is created.

Revision ID: 0005_presence
Revises: 0004_bot_leases
Create Date: 2026-11-30
"""

from __future__ import annotations

from collections.abc import Sequence

from alembic import op

revision: str = "0005_presence"
down_revision: str | None = "0004_bot_leases"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    if op.get_bind().dialect.name != "postgresql":
        return
    op.execute(
        "CREATE UNLOGGED TABLE dotfight_processes ("
        " process_id varchar(32) PRIMARY KEY,"
        " seen_at timestamptz NOT NULL)"
    )
    op.execute(
        "CREATE UNLOGGED TABLE dotfight_presence ("
        " process_id varchar(32) NOT NULL,"
        " page_id varchar(32) NOT NULL,"
        " blue boolean NOT NULL,"
        " red boolean NOT NULL,"
        " PRIMARY KEY (process_id, page_id))"
    )
    op.execute("CREATE INDEX dotfight_presence_page ON dotfight_presence (page_id)")


def downgrade() -> None:
    if op.get_bind().dialect.name != "postgresql":
        return
    op.execute("DROP TABLE dotfight_presence")
    op.execute("DROP TABLE dotfight_processes")
