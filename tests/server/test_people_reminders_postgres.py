"""A link page's reminder across two `dotfight serve` processes on one PostgreSQL database (issue 19, item
2): both read the reminders from the store and race for each, and each page's side to act is pushed once,
by whichever process claimed it; a side with a socket open on the other process is not pushed at all.
The reminders' moments are moved to a few seconds ahead in the database (no one waits 48 minutes)."""

from __future__ import annotations

import asyncio
import time
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from typing import TYPE_CHECKING, Any

import pytest
from sqlalchemy import create_engine, update
from sqlalchemy.pool import NullPool
from test_people_offers import bearer, new_page, seat_socket

from dotfight.store.models import PageRow
from tests.server.test_people_clocks_push import push_service
from tests.store.conftest import postgres_cluster  # noqa: F401 — the throwaway cluster, for these tests too
from tests.store.test_many_processes import migrated, server, serving_two
from tests.support.push_service import Browser, PushService
from tests.support.server_process import ServerProcess

if TYPE_CHECKING:
    from tests.store.conftest import PostgresCluster

__all__ = ["push_service"]  # the fixture, used by name

PAGES = 4
# Each process polls every 0.2 s and reads the reminders every 15th poll: every 3 s.
POLL_S = "0.2"


@pytest.fixture
def two_processes(
    postgres_cluster: PostgresCluster,  # noqa: F811
    tmp_path: Any,
) -> Iterator[tuple[ServerProcess, ServerProcess]]:
    url = migrated(postgres_cluster.new_database())
    env = {"DOTFIGHT_PUSH_INSECURE_ENDPOINTS": "1", "DOTFIGHT_TIME_OUT_POLL_S": POLL_S}
    with serving_two([server(url, tmp_path / f"{name}.log", **env) for name in ("a", "b")]) as both:
        yield both


def remind_soon(database_url: str, page_ids: list[str], seconds: float) -> None:
    """Moves the pages' stored reminders to `seconds` from now (as if their moves were that old)."""
    engine = create_engine(database_url, poolclass=NullPool)
    try:
        with engine.begin() as connection:
            at = datetime.now(UTC) + timedelta(seconds=seconds)
            connection.execute(update(PageRow).where(PageRow.id.in_(page_ids)).values(reminder_at=at))
    finally:
        engine.dispose()


def waiting_reminders(database_url: str, page_ids: list[str]) -> list[str]:
    engine = create_engine(database_url, poolclass=NullPool)
    try:
        with engine.connect() as connection:
            rows = connection.execute(
                PageRow.__table__.select().where(PageRow.id.in_(page_ids), PageRow.reminder_at.is_not(None))
            )
            return [row.id for row in rows]
    finally:
        engine.dispose()


async def test_two_processes_push_each_reminder_once_and_none_to_a_page_open_on_the_other(
    two_processes: tuple[ServerProcess, ServerProcess], push_service: PushService
) -> None:
    first, second = two_processes
    pages = [new_page(first.http, clock={"per_move_s": 3600}) for _ in range(PAGES + 1)]
    for page in pages:
        browser = Browser.at(f"{push_service.base}/push/{page['id']}")
        subscribed = first.http.post(
            f"/api/pages/{page['id']}/push",
            json=browser.subscription(),
            headers=bearer(page["seats"]["blue"]),
        )
        assert subscribed.status_code == 201, subscribed.text
    *away, opened = pages
    ids = [page["id"] for page in pages]
    # Blue has the last page open on the second process only; the first holds no socket of it.
    async with seat_socket(second, opened["id"], opened["seats"]["blue"]):
        await asyncio.sleep(0.5)  # the presence row is written
        remind_soon(first.database_url, ids, 2.0)
        await asyncio.to_thread(push_service.wait_for, PAGES, 20)
        deadline = time.monotonic() + 15
        while waiting_reminders(first.database_url, ids) and time.monotonic() < deadline:
            await asyncio.sleep(0.2)
        assert waiting_reminders(first.database_url, ids) == []  # every one claimed, the open one too
        await asyncio.sleep(4)  # a second read of both processes: nothing more is pushed
    pushes = list(push_service.received)
    assert sorted(push.path.rsplit("/", 1)[-1] for push in pushes) == sorted(page["id"] for page in away)
    logs = first.log_text() + second.log_text()
    assert "Traceback" not in logs
