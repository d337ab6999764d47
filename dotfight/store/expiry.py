"""Expiry of pages never played past setup: their rows are deleted and a tombstone keeps their id, so
their link answers "expired" (410) rather than "unknown" (404). Pages in play or over are never touched.

Kept apart from `repository.py` (one concept per module); the tombstone table is added by the
migration `0002_page_expiry`, the index of the pages swept by `0011_setup_moved_at` (it replaced
`0010_setup_pages_index`'s).
"""

from __future__ import annotations

from datetime import datetime

from sqlalchemy import DateTime, Index, Select, String, and_, delete, literal_column, select
from sqlalchemy.orm import Mapped, Session, mapped_column

from dotfight.store.models import (
    ActionRow,
    Base,
    PageRow,
    PageStateRow,
    PushSubscriptionRow,
    SeatRow,
    utc_now,
)

# The engine's phases before play: drawing bases, then placing soldiers.
SETUP_PHASES = ("bases", "positioning")


class ExpiredPageRow(Base):
    """The id of a page deleted because nobody played it past setup in time."""

    __tablename__ = "expired_pages"

    id: Mapped[str] = mapped_column(String(32), primary_key=True)
    expired_at: Mapped[datetime] = mapped_column(DateTime(timezone=True), default=utc_now)


# The pages the sweeper reads: open, still in setup. Literals, not bound parameters: SQLite uses a partial
# index only for a query whose WHERE holds the index's own terms as written.
SWEPT = and_(
    PageRow.status == literal_column("'open'"),
    PageRow.phase.in_([literal_column(f"'{phase}'") for phase in SETUP_PHASES]),
)
# Finds idle pages in setup without reading the whole table, and only those (migration 0011). Its column
# is one a move in play leaves as it was (None): 0010's index was on `updated_at`, partial, yet
# PostgreSQL counts an index's column as indexed whatever its WHERE, so every move of every page
# changed an indexed column and no UPDATE of a page row was a HOT one (each wrote a new entry into the
# table's every index, and a dead row for vacuum).
SETUP_MOVED = PageRow.setup_moved_at.is_not(None)
Index(
    "ix_pages_setup_moved_at", PageRow.setup_moved_at, sqlite_where=SETUP_MOVED, postgresql_where=SETUP_MOVED
)


def setup_moved_at(status: str, phase: str, now: datetime) -> datetime | None:
    """Returns the page row's `setup_moved_at` after a write at `now` that leaves it in `status` and
    `phase`: now while the page is open and in setup, else None.

    >>> from datetime import datetime, timezone
    >>> at = datetime(2026, 12, 3, tzinfo=timezone.utc)
    >>> setup_moved_at("open", "positioning", at) == at, setup_moved_at("open", "battle", at)
    (True, None)
    """
    return now if status == "open" and phase in SETUP_PHASES else None


def is_expired(session: Session, page_id: str) -> bool:
    """Tells whether the page was deleted by expiry."""
    return session.get(ExpiredPageRow, page_id) is not None


def idle_setup_pages(idle_since: datetime, limit: int) -> Select[str]:
    """The query of up to `limit` open pages still in setup whose last action came before `idle_since`
    (read through `ix_pages_setup_moved_at`)."""
    return select(PageRow.id).where(SWEPT, PageRow.setup_moved_at < idle_since).limit(limit)


def expire_idle_setup_pages(session: Session, idle_since: datetime, limit: int = 500) -> list[str]:
    """Deletes up to `limit` open pages still in setup whose last action came before `idle_since`,
    leaving a tombstone for each; returns their ids (the caller commits)."""
    page_ids = list(session.scalars(idle_setup_pages(idle_since, limit)))
    if not page_ids:
        return []
    now = utc_now()
    session.add_all(ExpiredPageRow(id=page_id, expired_at=now) for page_id in page_ids)
    # Every row that hangs on the page goes with it: the foreign keys are enforced, so one left behind
    # (a seat's push subscription) would fail the whole batch, sweep after sweep.
    session.execute(delete(PushSubscriptionRow).where(PushSubscriptionRow.page_id.in_(page_ids)))
    session.execute(delete(ActionRow).where(ActionRow.page_id.in_(page_ids)))
    session.execute(delete(SeatRow).where(SeatRow.page_id.in_(page_ids)))
    session.execute(delete(PageStateRow).where(PageStateRow.page_id.in_(page_ids)))
    session.execute(delete(PageRow).where(PageRow.id.in_(page_ids)))
    return page_ids
