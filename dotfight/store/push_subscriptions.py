"""Repository functions of Web Push: the seats' subscriptions and the server's VAPID key pair."""

from __future__ import annotations

from sqlalchemy import delete, select
from sqlalchemy.orm import Session

from dotfight.store.models import PushSubscriptionRow, VapidKeyRow, utc_now

VAPID_ROW_ID = 1


def vapid_key(session: Session) -> VapidKeyRow | None:
    """Returns the server's VAPID key pair, or None before it is made."""
    return session.get(VapidKeyRow, VAPID_ROW_ID)


def add_vapid_key(session: Session, private_pem: str, public_key: str) -> None:
    """Stores the server's VAPID key pair (the caller commits; a second maker fails on the primary key)."""
    row = VapidKeyRow(id=VAPID_ROW_ID, private_pem=private_pem, public_key=public_key, created_at=utc_now())
    session.add(row)


def subscriptions(session: Session, page_id: str, side: str) -> list[PushSubscriptionRow]:
    """Returns a seat's subscriptions, oldest first."""
    query = (
        select(PushSubscriptionRow)
        .where(PushSubscriptionRow.page_id == page_id, PushSubscriptionRow.side == side)
        .order_by(PushSubscriptionRow.id)
    )
    return list(session.scalars(query))


def subscribe(
    session: Session, page_id: str, side: str, endpoint: str, p256dh: str, auth: str, *, keep: int
) -> None:
    """Adds or renews a seat's subscription for an endpoint, keeping the seat's `keep` newest ones."""
    current = subscriptions(session, page_id, side)
    for row in current:
        if row.endpoint == endpoint:
            row.p256dh, row.auth = p256dh, auth
            return
    for row in current[: max(0, len(current) - keep + 1)]:
        session.delete(row)
    session.add(
        PushSubscriptionRow(
            page_id=page_id, side=side, endpoint=endpoint, p256dh=p256dh, auth=auth, created_at=utc_now()
        )
    )


def unsubscribe(session: Session, page_id: str, side: str | None, endpoint: str) -> int:
    """Removes a subscription of a page (of one seat, or of any when `side` is None); returns how many."""
    query = delete(PushSubscriptionRow).where(
        PushSubscriptionRow.page_id == page_id, PushSubscriptionRow.endpoint == endpoint
    )
    if side is not None:
        query = query.where(PushSubscriptionRow.side == side)
    return int(session.execute(query).rowcount)  # type: ignore[attr-defined]
