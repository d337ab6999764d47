"""Expiry of pages never played past setup deletes every row that hangs on the page — its seats, log,
state checkpoint and the seats' Web Push subscriptions — so a subscribed page expires like any other and
does not hold back the rest of the sweep (the database enforces the foreign keys)."""

from __future__ import annotations

from datetime import timedelta
from pathlib import Path

from sqlalchemy import func, select

from dotfight.store.database import make_engine, make_session_factory
from dotfight.store.expiry import ExpiredPageRow, expire_idle_setup_pages, is_expired
from dotfight.store.migrations import upgrade_to_head
from dotfight.store.models import PageRow, PageStateRow, PushSubscriptionRow, SeatRow, utc_now
from dotfight.store.push_subscriptions import subscribe
from dotfight.store.repository import add_page


def _setup_page(page_id: str, age: timedelta) -> tuple[PageRow, list[SeatRow], PageStateRow]:
    when = utc_now() - age
    page = PageRow(
        id=page_id, rules={}, preset="quick", seed="0" * 32, seed_sha256="0" * 64, mode="link",
        status="open", phase="positioning", side_to_act="blue", winner=None, version=3, bot=None,
        created_at=when, updated_at=when, setup_moved_at=when,
    )  # fmt: skip
    seats = [
        SeatRow(page_id=page_id, side=side, kind="seat", token_hash=f"{page_id}-{side}")
        for side in ("blue", "red")
    ]
    return page, seats, PageStateRow(page_id=page_id, version=3, state="{}")


def test_a_page_with_push_subscriptions_expires_with_them_and_the_rest_of_the_batch(tmp_path: Path) -> None:
    engine = make_engine(f"sqlite:///{tmp_path / 'pages.db'}")
    upgrade_to_head(engine)
    sessions = make_session_factory(engine)
    with sessions() as session:
        for page_id, age in (("subscribed", timedelta(days=3)), ("plain", timedelta(days=3))):
            add_page(session, *_setup_page(page_id, age))
        add_page(session, *_setup_page("fresh", timedelta(minutes=1)))
        session.flush()
        for page_id in ("subscribed", "fresh"):
            subscribe(session, page_id, "red", "https://push.example/1", "p" * 87, "a" * 22, keep=3)
        session.commit()

    with sessions() as session:
        expired = expire_idle_setup_pages(session, utc_now() - timedelta(days=1))
        session.commit()

    assert sorted(expired) == ["plain", "subscribed"]
    with sessions() as session:
        assert is_expired(session, "subscribed") and is_expired(session, "plain")
        left = session.scalars(select(PushSubscriptionRow.page_id)).all()
        assert left == ["fresh"]  # the fresh page's subscription stays
        assert session.scalar(select(func.count()).select_from(ExpiredPageRow)) == 2
        assert session.get(PageRow, "fresh") is not None
    engine.dispose()
