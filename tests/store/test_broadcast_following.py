"""Who hears a page's commits on PostgreSQL (issue 22, item 2): a page's NOTIFYs go to a channel of its
own, which a process LISTENs to only while it holds a room of the page (`PostgresBroadcast.follow` /
`unfollow`), so a process with no socket of a page is sent nothing of it; and the notices this process's
own writer sent are not handed on (its rooms hear its commits from the page authority). Two broadcasts
on one throwaway database stand for two processes; the NOTIFYs are sent as the store sends them
(`notify_in_transaction`), from connections of the test's own."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Callable, Iterator
from typing import Any

import psycopg
import pytest
from sqlalchemy import Engine

from dotfight.server.broadcast import PostgresBroadcast, notify_in_transaction
from dotfight.server.pages.notice import CommitNotice
from dotfight.store.database import make_engine
from dotfight.store.migrations import upgrade_to_head

# Long enough for a loaded machine; every wait ends as soon as what it waits for came.
WAIT_S = 10.0


@pytest.fixture
def engine(postgres_url: str) -> Iterator[Engine]:
    engine = make_engine(postgres_url)
    upgrade_to_head(engine)
    yield engine
    engine.dispose()


@pytest.fixture
def sender(postgres_url: str) -> Iterator[psycopg.Connection[Any]]:
    """A connection that NOTIFYs as a process's writer does."""
    url = postgres_url.replace("postgresql+psycopg://", "postgresql://")
    with psycopg.connect(url, autocommit=True) as connection:
        yield connection


def notify(connection: psycopg.Connection[Any], page_id: str, version: int) -> None:
    """Sends the NOTIFY of a commit of `page_id` at `version` (a bare payload) from `connection`."""
    channel, payload = notify_in_transaction(page_id, version)
    connection.execute("SELECT pg_notify(%s, %s)", (channel, payload))


class Process:
    """A broadcast as one process's, with every notice handed to its subscribers kept in order."""

    def __init__(self, engine: Engine, own_sender: Callable[[], int | None] | None = None) -> None:
        self.broadcast = PostgresBroadcast(engine, reconnect_max_s=0.1, own_sender=own_sender)
        self.heard: list[tuple[str, int]] = []
        self.changed = asyncio.Event()
        self.reconnected = asyncio.Event()
        self.broadcast.subscribe(self._heard)

        async def reconnected() -> None:
            self.reconnected.set()

        self.broadcast.on_reconnect(reconnected)

    def _heard(self, notice: CommitNotice) -> None:
        self.heard.append((notice.page_id, notice.version))
        self.changed.set()

    async def hears(self, expected: tuple[str, int]) -> list[tuple[str, int]]:
        """Waits until `expected` was heard; returns everything heard up to it, and forgets it."""
        async with asyncio.timeout(WAIT_S):
            while expected not in self.heard:
                self.changed.clear()
                await self.changed.wait()
        upto = self.heard.index(expected) + 1
        heard, self.heard = self.heard[:upto], self.heard[upto:]
        return heard


@pytest.fixture
async def processes(engine: Engine) -> AsyncIterator[Callable[..., Any]]:
    started: list[Process] = []

    async def start(own_sender: Callable[[], int | None] | None = None) -> Process:
        process = Process(engine, own_sender)
        await process.broadcast.start()
        started.append(process)
        return process

    yield start
    for process in started:
        await process.broadcast.close()


async def test_a_process_hears_a_pages_commits_only_while_it_follows_the_page(
    processes: Callable[..., Any], sender: psycopg.Connection[Any]
) -> None:
    a, b = await processes(), await processes()
    await a.broadcast.follow("p1")
    await a.broadcast.follow("marker")
    await b.broadcast.follow("marker")
    notify(sender, "p1", 1)
    notify(sender, "marker", 1)  # delivered after p1's on each connection (commit order)
    assert await a.hears(("marker", 1)) == [("p1", 1), ("marker", 1)]
    assert await b.hears(("marker", 1)) == [("marker", 1)]  # B holds no room of p1: sent nothing of it
    # A's room of p1 goes and B's is made: from then on only B hears p1 (A's UNLISTEN goes with its next
    # LISTEN at the latest).
    a.broadcast.unfollow("p1")
    await a.broadcast.follow("p2")
    await b.broadcast.follow("p1")
    notify(sender, "p1", 2)
    notify(sender, "p2", 1)
    notify(sender, "marker", 2)
    assert await a.hears(("marker", 2)) == [("p2", 1), ("marker", 2)]
    assert await b.hears(("marker", 2)) == [("p1", 2), ("marker", 2)]


async def test_following_a_page_many_times_and_at_once_listens_once_and_misses_nothing(
    processes: Callable[..., Any], sender: psycopg.Connection[Any]
) -> None:
    """Rooms of many pages made at once (a server's start, a burst of hellos): every follow returns
    listening, and a commit sent right after it is heard."""
    a = await processes()
    pages = [f"page-{number}" for number in range(40)]
    await asyncio.gather(*(a.broadcast.follow(page_id) for page_id in pages + pages))
    for page_id in pages:
        notify(sender, page_id, 7)
    assert await a.hears((pages[-1], 7)) == [(page_id, 7) for page_id in pages]


async def test_the_notices_sent_by_the_processs_own_writer_are_not_handed_on(
    processes: Callable[..., Any], sender: psycopg.Connection[Any], postgres_url: str
) -> None:
    """A's writer is `sender` (A's rooms hear its commits from A's page authority); another process's
    writer is `theirs`: only theirs are handed to A's rooms, whether read by the reader callback or by
    psycopg while a statement runs on the connection."""
    url = postgres_url.replace("postgresql+psycopg://", "postgresql://")
    a = await processes(own_sender=lambda: sender.info.backend_pid)
    with psycopg.connect(url, autocommit=True) as theirs:
        await a.broadcast.follow("p1")
        notify(sender, "p1", 1)
        notify(theirs, "p1", 2)
        notify(sender, "p1", 3)
        notify(theirs, "p1", 4)
        assert await a.hears(("p1", 4)) == [("p1", 2), ("p1", 4)]
        # Read by psycopg while a LISTEN runs on the connection (its notify handler): the same.
        a.broadcast._heard(*notify_in_transaction("p1", 5), sender.info.backend_pid)
        a.broadcast._heard(*notify_in_transaction("p1", 6), theirs.info.backend_pid)
        assert await a.hears(("p1", 6)) == [("p1", 6)]


async def test_the_pages_followed_are_listened_to_again_when_the_listen_connection_is_back(
    processes: Callable[..., Any], sender: psycopg.Connection[Any]
) -> None:
    a = await processes()
    await a.broadcast.follow("p1")
    sender.execute("SELECT pg_terminate_backend(%s)", (a.broadcast.listen_backend_pid,))
    async with asyncio.timeout(WAIT_S):
        await a.reconnected.wait()  # the rooms catch up from the log here (tested with real servers)
    notify(sender, "p1", 9)
    assert await a.hears(("p1", 9)) == [("p1", 9)]
