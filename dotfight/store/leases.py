"""Leases: which server process plays Dawood-bot on a page. One row per page while a process plays its
bot; the row names the owner and when the lease runs out unless its owner renews it (a heartbeat).
A lease that ran out (its owner died or hung) may be taken by any process.

Written only by conditional statements, so two processes asking at once never both win: the UPDATE takes
a lease that is the asker's own or has run out, and the INSERT of a page nobody holds does nothing when
another process inserted it first (`ON CONFLICT DO NOTHING`, SQLite and PostgreSQL alike). Times are the
server processes' own clocks (UTC): the processes sharing a database must keep their clocks in step
(NTP), far closer than a lease's length. Kept apart from `repository.py` (one concept per module); the
table is added by the migration `0004_bot_leases`.
"""

from __future__ import annotations

from collections.abc import Collection
from datetime import datetime, timedelta

from sqlalchemy import DateTime, String, delete, select, update
from sqlalchemy.dialects import postgresql, sqlite
from sqlalchemy.orm import Mapped, Session, mapped_column

from dotfight.store.models import Base, PageRow

# How long a lease lasts unless renewed, by default (the server's `BOT_LEASE_S` setting): how long a
# dead process's bot pages wait before another process takes them over.
DEFAULT_LEASE_S = 10.0


class BotLeaseRow(Base):
    """The process playing Dawood-bot on a page, until `expires_at` unless renewed."""

    __tablename__ = "bot_leases"

    # No foreign key: a lease outlives nothing, and an expired page's rows go without asking it.
    page_id: Mapped[str] = mapped_column(String(32), primary_key=True)
    owner: Mapped[str] = mapped_column(String(64))
    expires_at: Mapped[datetime] = mapped_column(DateTime(timezone=True), index=True)


def take(session: Session, page_id: str, owner: str, now: datetime, length: timedelta) -> bool:
    """Takes (or renews) the lease of a page for `owner`: when nobody holds it, when it is `owner`'s own,
    or when its holder let it run out. Returns whether `owner` holds it now (the caller commits)."""
    # RETURNING tells what happened (a driver's rowcount of INSERT … ON CONFLICT is not to be trusted).
    taken = session.scalar(
        update(BotLeaseRow)
        .where(
            BotLeaseRow.page_id == page_id,
            (BotLeaseRow.owner == owner) | (BotLeaseRow.expires_at < now),
        )
        .values(owner=owner, expires_at=now + length)
        .returning(BotLeaseRow.page_id)
        .execution_options(synchronize_session=False)
    )
    if taken is not None:
        return True
    dialect = postgresql if session.get_bind().dialect.name == "postgresql" else sqlite
    inserted = session.scalar(
        dialect.insert(BotLeaseRow)
        .values(page_id=page_id, owner=owner, expires_at=now + length)
        .on_conflict_do_nothing(index_elements=["page_id"])
        .returning(BotLeaseRow.page_id)
    )
    return inserted is not None


def renew(
    session: Session, page_ids: Collection[str], owner: str, now: datetime, length: timedelta
) -> set[str]:
    """Renews `owner`'s leases of the pages named; returns the ids it still holds (a lease that ran out
    and was taken by another process is not among them)."""
    if not page_ids:
        return set()
    held = session.scalars(
        update(BotLeaseRow)
        .where(BotLeaseRow.page_id.in_(sorted(page_ids)), BotLeaseRow.owner == owner)
        .values(expires_at=now + length)
        .returning(BotLeaseRow.page_id)
        .execution_options(synchronize_session=False)
    )
    return set(held)


def release(session: Session, page_id: str, owner: str) -> None:
    """Gives up `owner`'s lease of a page (nothing when another process holds it)."""
    session.execute(
        delete(BotLeaseRow)
        .where(BotLeaseRow.page_id == page_id, BotLeaseRow.owner == owner)
        .execution_options(synchronize_session=False)
    )


def unleased_bot_pages(session: Session, now: datetime) -> list[tuple[str, dict[str, object], str | None]]:
    """Returns (id, bot, side_to_act) of every open bot page that no process holds a live lease of."""
    live = select(BotLeaseRow.page_id).where(BotLeaseRow.expires_at >= now)
    query = select(PageRow.id, PageRow.bot, PageRow.side_to_act).where(
        PageRow.mode == "bot", PageRow.status == "open", PageRow.id.not_in(live)
    )
    return [(page_id, bot, side) for page_id, bot, side in session.execute(query) if bot is not None]
