"""Who hears a page's commits on PostgreSQL (issue 22, items 2 and 3): a page's NOTIFYs go to a channel
of its own, which a process LISTENs to only while it holds a room of the page (`PostgresBroadcast.follow`
/ `unfollow`), so a process with no socket of a page is sent nothing of it; an action is NOTIFYed at
all only when a process other than its writer follows the page (`pages.followers`, migration 0012);
and the notices this process's own writer sent are not handed on (its rooms hear its commits from the
page authority). Two broadcasts on one throwaway database stand for two processes; the NOTIFYs are
sent as the store sends them (`notify_in_transaction`), from connections of the test's own or by the
store itself."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Callable, Iterator
from functools import partial
from typing import Any

import psycopg
import pytest
from sqlalchemy import Engine, text

from dotfight.server.broadcast import PostgresBroadcast, notify_in_transaction
from dotfight.server.pages.notice import CommitNotice
from dotfight.store.database import make_engine
from dotfight.store.migrations import upgrade_to_head
from dotfight.store.records import Appended
from dotfight.store.sql_pages import SqlPageStore
from tests.store.test_sql_hot_path import append, entry, new_page

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
    channel, payload, _ = notify_in_transaction(page_id, version)
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
        a.broadcast._heard(*notify_in_transaction("p1", 5)[:2], sender.info.backend_pid)
        a.broadcast._heard(*notify_in_transaction("p1", 6)[:2], theirs.info.backend_pid)
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


# -- sent only when someone else follows (pages.followers, migration 0012)


def followers(engine: Engine, page_id: str) -> str | None:
    with engine.connect() as connection:
        value: str | None = connection.execute(
            text("SELECT followers FROM pages WHERE id = :id"), {"id": page_id}
        ).scalar_one()
    return value


def set_followers(engine: Engine, page_id: str, value: str | None) -> None:
    with engine.begin() as connection:
        statement = text("UPDATE pages SET followers = :f WHERE id = :id")
        connection.execute(statement, {"f": value, "id": page_id})


def test_an_action_is_notified_only_when_a_process_other_than_its_writer_follows_the_page(
    engine: Engine, postgres_url: str
) -> None:
    """The action's own statement reads the followers of the row it moves on: nobody, or only the
    writing process itself ("me"), and no NOTIFY is sent; anyone else among them, and it is."""
    url = postgres_url.replace("postgresql+psycopg://", "postgresql://")
    store = SqlPageStore(engine, notify=partial(notify_in_transaction, sender="me"))
    try:
        new_page(store, "p1")
        with psycopg.connect(url, autocommit=True) as listening:
            listening.execute('LISTEN "dotfight_page_p1"')
            sent = []
            for version, following in enumerate([None, " me ", " me other ", " other ", " me "], start=1):
                set_followers(engine, "p1", following)
                written = append(store, "p1", version, f"m{version}").result(10)
                assert written == Appended(entry(version, f"m{version}"))
                listening.execute("SELECT 1")
                sent += [notice.payload for notice in listening.notifies(timeout=0.2)]
            assert sent == ["p1 3", "p1 4"]
    finally:
        store.close()


async def test_a_follower_is_written_into_the_page_row_and_taken_out_when_its_room_goes(
    processes: Callable[..., Any], engine: Engine
) -> None:
    """Listening, then among the page's followers (so the others' moves are NOTIFYed to it); the ids of
    processes no longer alive are left out as the followers are written again; a room's going and a
    process's close take it out."""
    store = SqlPageStore(engine)
    try:
        new_page(store, "p1")
    finally:
        store.close()
    a, b = await processes(), await processes()
    me_a, me_b = a.broadcast.process_id, b.broadcast.process_id
    set_followers(engine, "p1", " gone-long-ago ")  # a process killed while it followed the page
    await a.broadcast.follow("p1")
    assert followers(engine, "p1") == f" {me_a} "
    await a.broadcast.follow("p1")  # its second room of the page: written once
    await b.broadcast.follow("p1")
    assert followers(engine, "p1") == " " + " ".join(sorted([me_a, me_b])) + " "
    a.broadcast.unfollow("p1")
    await a.broadcast.follow("elsewhere")  # the UNLISTEN and the row's write go before it at the latest
    assert followers(engine, "p1") == f" {me_b} "
    await b.broadcast.close()
    assert followers(engine, "p1") is None


async def test_a_process_taken_for_dead_follows_its_pages_again_and_its_rooms_read_the_log(
    processes: Callable[..., Any], engine: Engine
) -> None:
    """A process stalled past the heartbeat's TTL is deleted by a peer, and a follow by anyone then
    leaves it out of a page's followers: its moves would not be NOTIFYed to it. Its next beat finds its
    row gone, writes itself into its pages' followers again, and its rooms catch up from the log."""
    store = SqlPageStore(engine)
    try:
        new_page(store, "p1")
    finally:
        store.close()
    a = await processes()
    await a.broadcast.follow("p1")
    with engine.begin() as connection:  # what a peer's sweep and a later follow leave
        forget = text("DELETE FROM dotfight_processes WHERE process_id = :id")
        connection.execute(forget, {"id": a.broadcast.process_id})
    set_followers(engine, "p1", None)
    async with asyncio.timeout(WAIT_S):
        await a.reconnected.wait()
    assert followers(engine, "p1") == f" {a.broadcast.process_id} "
