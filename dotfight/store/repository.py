"""Repository functions: every query the server makes, each on a caller's session and transaction."""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime
from typing import Any

from sqlalchemy import Text, and_, cast, select
from sqlalchemy.orm import Session

from dotfight.store.models import ActionRow, PageRow, PageStateRow, SeatRow


def add_page(session: Session, page: PageRow, seats: Sequence[SeatRow], state: PageStateRow) -> None:
    """Adds a new page with its seats and its first private state (the caller commits)."""
    session.add(page)
    session.flush()  # the page row must exist before its seats reference it (PostgreSQL checks at once)
    session.add_all(seats)
    session.add(state)


def get_page(session: Session, page_id: str) -> PageRow | None:
    """Returns the page row, or None."""
    return session.get(PageRow, page_id)


def page_version(session: Session, page_id: str) -> int | None:
    """Returns the page's version without loading the rest of its row, or None when there is no such
    page."""
    return session.scalar(select(PageRow.version).where(PageRow.id == page_id))


def get_pages(session: Session, page_ids: Sequence[str]) -> list[PageRow]:
    """Returns the rows of the pages named that exist, in the order named."""
    query = select(PageRow).where(PageRow.id.in_(page_ids))
    rows = {row.id: row for row in session.scalars(query)}
    return [rows[page_id] for page_id in page_ids if page_id in rows]


def page_seats(session: Session, page_id: str) -> list[SeatRow]:
    """Returns the seats of a page."""
    return list(session.scalars(select(SeatRow).where(SeatRow.page_id == page_id)))


def actions_after(session: Session, page_id: str, version: int, up_to: int | None = None) -> list[ActionRow]:
    """Returns the logged actions whose resulting version is above `version` (and at most `up_to`, when
    given), oldest first."""
    query = select(ActionRow).where(ActionRow.page_id == page_id, ActionRow.version > version)
    if up_to is not None:
        query = query.where(ActionRow.version <= up_to)
    return list(session.scalars(query.order_by(ActionRow.version)))


def log_texts(
    session: Session, page_id: str, first: int, last: int
) -> list[tuple[int, str, str, str, str | None, datetime]]:
    """Returns (version, side, action JSON, events JSON, move_id, created_at) of the logged actions from
    version `first` to `last`, oldest first, with action and events as the JSON text stored (read as
    text, never parsed: a log page is passed on as it is)."""
    query = (
        select(
            ActionRow.version,
            ActionRow.side,
            cast(ActionRow.action, Text),
            cast(ActionRow.events, Text),
            ActionRow.move_id,
            ActionRow.created_at,
        )
        .where(ActionRow.page_id == page_id, ActionRow.version >= first, ActionRow.version <= last)
        .order_by(ActionRow.version)
    )
    return [tuple(row) for row in session.execute(query)]  # type: ignore[misc]


def action_by_move_id(session: Session, page_id: str, move_id: str) -> ActionRow | None:
    """Returns the logged action a client sent under `move_id`, or None."""
    query = select(ActionRow).where(ActionRow.page_id == page_id, ActionRow.move_id == move_id)
    return session.scalars(query).first()


def end_reasons(session: Session, page_ids: Sequence[str]) -> dict[str, str]:
    """Returns how each finished page named ended (its last entry's `game_over` reason), by page id."""
    if not page_ids:
        return {}
    query = (
        select(ActionRow.page_id, ActionRow.events)
        .join(PageRow, and_(PageRow.id == ActionRow.page_id, PageRow.version == ActionRow.version))
        .where(PageRow.id.in_(page_ids), PageRow.status == "over")
    )
    reasons: dict[str, str] = {}
    for page_id, events in session.execute(query):
        reason = _game_over_reason(events)
        if reason is not None:
            reasons[page_id] = reason
    return reasons


def _game_over_reason(events: list[dict[str, Any]]) -> str | None:
    for event in events:
        if event.get("type") == "game_over":
            reason = event.get("reason")
            return reason if isinstance(reason, str) else None
    return None
