"""How the processes serving one database tell each other of committed actions and of who is here.

`Broadcast` is the contract (CONTRACTS.md, issue 11), and holds only what differs between one process
and several: how a commit's notice and presence cross processes. `subscribe(callback)` hears a
`CommitNotice` of every commit announced, `start()` / `close()`. Since issue 22 (item 2) a notice
carries the move and its events message as the sockets receive it whenever the payload fits in
PostgreSQL's 8000 bytes (`dotfight.server.pages.notice`), else only `"<page_id> <version>"`: a room with
sockets forwards a whole notice's events as they are and keeps the move for the state in memory, which
is advanced by it only when this process next decides an action of the page; a bare notice, or a version
missing before one, makes the room read the missing entries from the log, once for all its sockets
(`dotfight.server.rooms`); a process with no socket of the page does not hear it. This process's own
commits reach its rooms from the page authority directly (`Rooms.committed`), never through here.

- `LocalBroadcast`: one process (SQLite, the embedded default); nobody else commits or holds seats.
- `PostgresBroadcast`: each page's commits are NOTIFYed on a channel of its own (`page_channel`), which
  a process LISTENs to while it holds a room of the page, writing its id into the page row's followers
  (`follow` when the room is made, before its first socket reads the page; `unfollow` when it goes),
  through one dedicated psycopg connection on the event loop, read by a reader callback (libpq hands
  the notices over as the socket delivers them). An action's statement NOTIFYs only when a process
  other than its writer follows the page (store/appends.py): with page affinity (deploy/nginx.conf)
  nothing is sent at all. The notices this process's own writer sent (another process following the
  page too; told apart by the PostgreSQL backend that sent them, `own_sender`) are dropped as they are
  read: the page authority tells this process's rooms of its own commits, and a write whose outcome it
  never learnt makes the room read the log (`Rooms.write_unsure`). The NOTIFY is sent inside
  the action's own transaction (`notify_in_transaction`, one payload per action, by the action's own
  statement: a group commit's in its one executemany), so PostgreSQL delivers it exactly when, and only
  if, the action commits, in commit order. A dropped LISTEN connection is reconnected with a growing
  pause, listening again to every page followed, and `on_reconnect` callbacks then catch up every page
  from the last version each heard.

Presence crosses processes the same way: each process keeps one row per page where it holds a seat
(`dotfight_presence`, written only when its presence there changes), refreshes one heartbeat row of its
own (`dotfight_processes`) every `heartbeat_s`, and NOTIFYs `dotfight_presence` with the page id. A peer
whose heartbeat is older than `ttl_s` is dead: whichever process notices first deletes its rows and
NOTIFYs their pages, so a killed process's seats are seen leaving within `ttl_s + heartbeat_s`.

Departures too (issue 19, absence): when a process's seat on a page goes (its last socket there closed,
the process closed, or it was found dead), the moment is kept per page and side (`departures`), so a
claim decided on any process, or a room made after the seat left, counts the absence grace from it. On
PostgreSQL they are rows of `dotfight_departures` (migration 0008), written before the presence NOTIFY
that tells of the leaving; in one process they are kept in memory (a restart forgets them, and the room
then counts from the server's start: nobody is claimed against for an outage).

Notices cross processes too: a message for every socket of a page that is not a commit (a rematch
offered or made, a phrase said; issue 19) is told to this process's room directly and to the others with
`tell`, a NOTIFY on `dotfight_notices` (payload `"<process_id> <page_id> <message>"`, the message as the
sockets receive it), which each other process hands to its room of the page (`subscribe_notices`). What a
notice says is kept in the store, so a phone that missed one (a dropped LISTEN connection) reads it
with `GET …/rematch` or `GET …/said`, as it does when it opens a page.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import time
import uuid
from collections import OrderedDict
from collections.abc import Awaitable, Callable, Iterator, Sequence
from typing import Any, Protocol

from sqlalchemy import Engine

from dotfight.server.pages.notice import CommitNotice, PendingNotices, parse_notice
from dotfight.store.records import StoreUnavailable

logger = logging.getLogger(__name__)

# A page's commits are NOTIFYed on a channel of its own, which a process LISTENs to only while it holds
# a room of the page: PostgreSQL then sends a notice only to the processes with sockets of the page.
PAGE_CHANNEL_PREFIX = "dotfight_page_"
PAGE_CHANNEL_PREFIX_BYTES = PAGE_CHANNEL_PREFIX.encode()
PRESENCE_CHANNEL = "dotfight_presence"
NOTICES_CHANNEL = "dotfight_notices"

# A committed action's notice: its page and version, and (when it fitted) the move and its events.
CommitCallback = Callable[[CommitNotice], None]
# (page_id, (blue, red)): which seats the other processes hold on a page.
PresenceCallback = Callable[[str, tuple[bool, bool]], None]
ReconnectCallback = Callable[[], Awaitable[None]]
# (page_id, message): a serialised message another process has for every socket of a page.
NoticeCallback = Callable[[str, str], None]

NO_ONE = (False, False)
SIDES = ("blue", "red")
# Departures one process keeps in memory (page, side), the oldest forgotten first: a claim against a
# seat whose departure was forgotten counts from the turn passing to it, or the server's start.
DEPARTURES_KEPT = 100_000


def page_channel(page_id: str) -> str:
    """The channel a page's commits are NOTIFYed on (a page id is at most 32 characters of
    `[A-Za-z0-9_-]`, so a channel name stays within PostgreSQL's 63 bytes).

    >>> page_channel("Ab-3")
    'dotfight_page_Ab-3'
    """
    return PAGE_CHANNEL_PREFIX + page_id


def listen_statement(command: str, page_ids: Sequence[str]) -> str:
    """The LISTENs (or UNLISTENs) of the pages' channels as one statement, each name quoted (a page id
    may hold capitals and dashes).

    >>> listen_statement("LISTEN", ["Ab-3", "x"])
    'LISTEN "dotfight_page_Ab-3"; LISTEN "dotfight_page_x"'
    """
    quoted = (page_channel(page_id).replace('"', '""') for page_id in page_ids)
    return "; ".join(f'{command} "{channel}"' for channel in quoted)


def departed(before: tuple[bool, bool], after: tuple[bool, bool]) -> list[str]:
    """Returns the seats held `before` and not `after` (the ones that just left).

    >>> departed((True, True), (False, True)), departed((False, True), (True, True))
    (['blue'], [])
    """
    return [side for side, was, now in zip(SIDES, before, after, strict=True) if was and not now]


class Broadcast(Protocol):
    """Tells every process serving the database of each committed action (and of who is here)."""

    # Whether other processes may serve the same pages (their commits and seats then come through here).
    other_processes: bool

    def subscribe(self, callback: CommitCallback) -> None:
        """Registers `callback(notice)`, called on the event loop for every commit heard."""

    def on_reconnect(self, callback: ReconnectCallback) -> None:
        """Registers a coroutine run after commits may have been missed (a dropped connection)."""

    def subscribe_presence(self, callback: PresenceCallback) -> None:
        """Registers `callback(page_id, (blue, red))`: the seats other processes hold on a page changed."""

    async def follow(self, page_id: str) -> None:
        """Hears the commits of a page from now on (a room of it is made here): returns once every commit
        after the call will be heard, so a read of the page made after it misses nothing."""

    def unfollow(self, page_id: str) -> None:
        """Stops hearing a page's commits (its room here is gone), off the caller's path."""

    def share_presence(self, page_id: str, seats: tuple[bool, bool]) -> None:
        """Records which seats this process holds on a page (both False: none)."""

    async def remote_presence(self, page_id: str) -> tuple[bool, bool]:
        """Returns which seats the other (living) processes hold on a page."""
        ...

    async def departures(self, page_id: str) -> dict[str, float]:
        """Returns when each seat of a page last left it, on any process (seconds since the epoch), for
        the seats whose departure is known."""
        ...

    def subscribe_notices(self, callback: NoticeCallback) -> None:
        """Registers `callback(page_id, message)` for the notices other processes tell a page's sockets."""

    def tell(self, page_id: str, message: str) -> None:
        """Tells the other processes' sockets of a page a serialised message (off the caller's path)."""

    async def start(self) -> None:
        """Starts listening."""

    async def close(self) -> None:
        """Stops listening and forgets this process's presence."""


class LocalBroadcast:
    """One process: every commit is this process's own (told to its rooms by the authority); nobody
    else holds seats."""

    other_processes = False

    def __init__(self, now: Callable[[], float] = time.time) -> None:
        self.now = now  # the clock departures are stamped with
        self._shared: dict[str, tuple[bool, bool]] = {}
        self._departures: OrderedDict[tuple[str, str], float] = OrderedDict()

    def subscribe(self, callback: CommitCallback) -> None:
        """No other process commits: never called."""

    def on_reconnect(self, callback: ReconnectCallback) -> None:
        """Nothing can be missed in-process: never called."""

    def subscribe_presence(self, callback: PresenceCallback) -> None:
        """No other process: never called."""

    async def follow(self, page_id: str) -> None:
        """Every commit is this process's own: nothing to listen to."""

    def unfollow(self, page_id: str) -> None:
        """Nothing was listened to."""

    def share_presence(self, page_id: str, seats: tuple[bool, bool]) -> None:
        """No other process to tell; the seats that left are kept as departures (in memory, bounded)."""
        before = self._shared.pop(page_id, NO_ONE)
        if seats != NO_ONE:
            self._shared[page_id] = seats
        for side in departed(before, seats):
            key = (page_id, side)
            self._departures.pop(key, None)
            self._departures[key] = self.now()
            if len(self._departures) > DEPARTURES_KEPT:
                self._departures.popitem(last=False)

    async def remote_presence(self, page_id: str) -> tuple[bool, bool]:
        """No other process: nobody."""
        return NO_ONE

    async def departures(self, page_id: str) -> dict[str, float]:
        """Returns the departures this process saw on a page (since it started)."""
        known = ((side, self._departures.get((page_id, side))) for side in SIDES)
        return {side: at for side, at in known if at is not None}

    def subscribe_notices(self, callback: NoticeCallback) -> None:
        """No other process tells: never called."""

    def tell(self, page_id: str, message: str) -> None:
        """No other process to tell."""

    async def start(self) -> None:
        """Nothing to start."""

    async def close(self) -> None:
        """Nothing to stop."""


def notify_in_transaction(
    page_id: str, version: int, notices: PendingNotices | None = None, sender: str | None = None
) -> tuple[str, str, str | None]:
    """The NOTIFY of a commit, sent by the action's own statement inside its transaction (PostgreSQL
    delivers it at commit, never for a write undone): the channel, the payload `notices` holds for it
    (the move and its events, pages/notice.py), else a bare one, and the writing process's id
    (`PostgresBroadcast.process_id`): the statement sends it only when another process follows the
    page (`follow`). With no `sender` it is sent whoever follows.

    Made before the write, so the store sends it with the write itself (one round trip an action, a group
    commit's in its one executemany), from the page row the write moved on: a refused write sends none.
    """
    payload = f"{page_id} {version}" if notices is None else notices.payload(page_id, version)
    return page_channel(page_id), payload, sender


# The rows of the pages bound, locked in the order of their ids, as a writer's group commit locks them:
# a follow of many pages at once (a server's start) never waits on a writer in a circle.
_LOCKED_IN_ORDER = (
    "FROM (SELECT id FROM pages WHERE id = ANY(%(pages)s) AND {condition} ORDER BY id FOR UPDATE)"
)
# This process (`me`) among the followers of the pages bound (`pages.followers`, " a b ": migration
# 0012), the ids of processes no longer alive left out as the text is written again.
FOLLOW_PAGES = (
    "UPDATE pages SET followers = ("
    "SELECT ' ' || string_agg(follower, ' ' ORDER BY follower) || ' ' FROM ("
    "SELECT unnest(string_to_array(btrim(coalesce(pages.followers, '')), ' ')) AS follower "
    "UNION SELECT %(me)s) AS ids "
    "WHERE follower <> '' AND (follower = %(me)s OR follower IN (SELECT process_id FROM dotfight_processes))"
    ") "
    + _LOCKED_IN_ORDER.format(condition="position(' ' || %(me)s || ' ' IN coalesce(followers, ' ')) = 0")
    + " AS locked WHERE pages.id = locked.id"
)
# This process out of the followers of the pages bound (NULL when nobody is left).
UNFOLLOW_PAGES = (
    "UPDATE pages SET followers = nullif(replace(followers, ' ' || %(me)s || ' ', ' '), ' ') "
    + _LOCKED_IN_ORDER.format(condition="position(' ' || %(me)s || ' ' IN followers) > 0")
    + " AS locked WHERE pages.id = locked.id"
)


# A departure kept per page and side is the latest one written (two processes may write at once).
KEEP_LATEST_DEPARTURE = (
    "ON CONFLICT (page_id, side) DO UPDATE "
    "SET left_at = GREATEST(dotfight_departures.left_at, excluded.left_at)"
)
# A CTE after `gone` (deleted presence rows: page_id, blue, red): their seats' departures, at the moment
# bound to its one parameter (DISTINCT: two dead processes may have held one seat of one page).
RECORD_GONE_SEATS = (
    "departed AS (INSERT INTO dotfight_departures (page_id, side, left_at) "
    "SELECT DISTINCT gone.page_id, seat.side, to_timestamp(%s) FROM gone "
    "CROSS JOIN LATERAL (VALUES ('blue', gone.blue), ('red', gone.red)) AS seat(side, held) "
    f"WHERE seat.held {KEEP_LATEST_DEPARTURE})"
)


class PostgresBroadcast:
    """LISTEN/NOTIFY on PostgreSQL: one LISTEN connection and one for presence writes, both async.

    `database` is the server's SQLAlchemy engine (its URL and connection arguments are reused).
    """

    other_processes = True

    def __init__(
        self,
        database: Engine,
        *,
        heartbeat_s: float = 1.0,
        ttl_s: float = 3.0,
        reconnect_max_s: float = 2.0,
        now: Callable[[], float] = time.time,
        own_sender: Callable[[], int | None] | None = None,
    ) -> None:
        """`own_sender` says which PostgreSQL backend sends this process's own commits' NOTIFYs (the
        store's writer connection, `SqlPageStore.writer_backend_pid`), or None: a notice from it is this
        process's own commit, told to its rooms by the page authority, and is not handed on again."""
        self._now = now
        self._own_sender = own_sender
        args, params = database.dialect.create_connect_args(database.url)
        self._connect_args: tuple[Any, ...] = tuple(args)
        self._connect_params: dict[str, Any] = dict(params)
        self.process_id = uuid.uuid4().hex
        self._heartbeat_s = heartbeat_s
        self._ttl_s = ttl_s
        self._reconnect_max_s = reconnect_max_s
        self._callbacks: list[CommitCallback] = []
        self._presence_callbacks: list[PresenceCallback] = []
        self._reconnect_callbacks: list[ReconnectCallback] = []
        self._notice_callbacks: list[NoticeCallback] = []
        self._shared: dict[str, tuple[bool, bool]] = {}
        self._writes: asyncio.Lock | None = None
        self._writer: Any = None  # psycopg.AsyncConnection for presence, opened at start
        self._listening = asyncio.Event()
        # The pages whose commits this process wants to hear (it holds a room of them), those its LISTEN
        # connection listens to, and that connection while it reads (None while it is being made again).
        self._followed: set[str] = set()
        self._listened: set[str] = set()
        self._listen_connection: Any = None
        self._lost: asyncio.Future[None] | None = None
        self._sync_lock = asyncio.Lock()
        self._unfollow_due = False
        self._tasks: list[asyncio.Task[None]] = []
        self._presence_tasks: set[asyncio.Task[None]] = set()
        self.listen_backend_pid: int | None = None

    # -- the contract

    def subscribe(self, callback: CommitCallback) -> None:
        """Registers `callback(notice)` for every NOTIFY heard of the pages followed (`follow`), but
        this process's own when `own_sender` names them. The NOTIFY goes out inside the action's own
        transaction (`notify_in_transaction`), so it cannot be lost between the commit and an
        announcement."""
        self._callbacks.append(callback)

    def on_reconnect(self, callback: ReconnectCallback) -> None:
        """Registers a coroutine run each time the LISTEN connection is back after a drop."""
        self._reconnect_callbacks.append(callback)

    def subscribe_presence(self, callback: PresenceCallback) -> None:
        """Registers `callback(page_id, (blue, red))` for presence changes of other processes."""
        self._presence_callbacks.append(callback)

    async def start(self) -> None:
        """Opens the connections, records this process, and listens (returns once listening)."""
        self._writes = asyncio.Lock()
        await self._heartbeat_once()
        self._tasks = [asyncio.create_task(self._listen_forever()), asyncio.create_task(self._beat_forever())]
        with contextlib.suppress(TimeoutError):
            await asyncio.wait_for(self._listening.wait(), timeout=10)

    async def close(self) -> None:
        """Stops listening and deletes this process's presence (peers hear its seats leave)."""
        for task in self._tasks:
            task.cancel()
        for task in self._tasks:
            with contextlib.suppress(asyncio.CancelledError, Exception):
                await task
        with contextlib.suppress(Exception):
            if self._followed or self._listened:  # the others stop telling this process at once
                followed = sorted(self._followed | self._listened)
                await self._execute(UNFOLLOW_PAGES, {"me": self.process_id, "pages": followed})
            await self._execute(
                "WITH gone AS (DELETE FROM dotfight_presence WHERE process_id = %s "
                f"RETURNING page_id, blue, red), {RECORD_GONE_SEATS} "
                "SELECT pg_notify(%s, page_id) FROM gone",
                (self.process_id, self._now(), PRESENCE_CHANNEL),
            )
            await self._execute("DELETE FROM dotfight_processes WHERE process_id = %s", (self.process_id,))
        if self._writer is not None:
            with contextlib.suppress(Exception):
                await self._writer.close()

    # -- connections

    async def _connect(self) -> Any:
        import psycopg  # only needed on PostgreSQL

        return await psycopg.AsyncConnection.connect(
            *self._connect_args, **self._connect_params, autocommit=True
        )

    async def _execute(self, query: str, params: tuple[Any, ...] | dict[str, Any]) -> list[tuple[Any, ...]]:
        """Runs one statement on the presence connection (reopened if it dropped)."""
        assert self._writes is not None, "start() first"
        async with self._writes:
            for attempt in range(2):
                try:
                    if self._writer is None or self._writer.closed:
                        self._writer = await self._connect()
                    cursor = await self._writer.execute(query.encode(), params)
                    return list(await cursor.fetchall()) if cursor.description else []
                except Exception:
                    with contextlib.suppress(Exception):
                        await self._writer.close()
                    self._writer = None
                    if attempt:
                        raise
            return []

    async def _listen_forever(self) -> None:
        pause = 0.05
        dropped = False
        while True:
            try:
                connection = await self._connect()
                async with connection:
                    # Notices read while a statement runs on it are handed over by psycopg; else by
                    # `_reading`.
                    connection.add_notify_handler(
                        lambda notify: self._heard(notify.channel, notify.payload, notify.pid)
                    )
                    await connection.execute(f"LISTEN {PRESENCE_CHANNEL}".encode())
                    await connection.execute(f"LISTEN {NOTICES_CHANNEL}".encode())
                    async with self._sync_lock:
                        # Every page followed, listened to again: the catch-up below reads after it.
                        self._listened = set(self._followed)
                        if self._listened:
                            followed = sorted(self._listened)
                            await connection.execute(listen_statement("LISTEN", followed).encode())
                            # Those followed while deaf are not among their pages' followers yet.
                            await self._execute(FOLLOW_PAGES, {"me": self.process_id, "pages": followed})
                        self.listen_backend_pid = connection.info.backend_pid
                        self._listen_connection = connection
                    try:
                        with self._reading(connection) as lost:
                            self._listening.set()
                            pause = 0.05
                            if dropped:
                                # Anything committed while deaf is caught up from the log, page by page.
                                for callback in self._reconnect_callbacks:
                                    await callback()
                            await lost
                    finally:
                        self._listen_connection = None
            except asyncio.CancelledError:
                raise
            except Exception as error:
                logger.warning("the LISTEN connection dropped (%s); reconnecting", error)
            dropped = True
            await asyncio.sleep(pause)
            pause = min(pause * 2, self._reconnect_max_s)

    @contextlib.contextmanager
    def _reading(self, connection: Any) -> Iterator[asyncio.Future[None]]:
        """Hands every notice the LISTEN connection receives to `_heard` from a reader callback on the
        event loop: libpq reads what the socket holds and gives the notices one by one, with no
        coroutine, generator step or wake-up per notice (psycopg's `notifies()` cost 39 of 428 samples
        of a spread benchmark's two processes). Yields a future that fails when the connection drops."""
        loop = asyncio.get_running_loop()
        lost: asyncio.Future[None] = loop.create_future()
        self._lost = lost
        self._read_notices(connection)
        try:
            yield lost
        finally:
            self._lost = None
            loop.remove_reader(connection.pgconn.socket)

    def _read_notices(self, connection: Any) -> None:
        """Starts reading the LISTEN connection's notices with a reader callback (`_reading`), handing
        over at once what psycopg received and did not hand over yet."""
        loop = asyncio.get_running_loop()
        pgconn = connection.pgconn
        socket = pgconn.socket
        lost = self._lost
        assert lost is not None
        own_sender = self._own_sender

        def readable() -> None:
            try:
                pgconn.consume_input()
                own = None if own_sender is None else own_sender()
                while (notify := pgconn.notifies()) is not None:
                    if notify.be_pid == own and notify.relname.startswith(PAGE_CHANNEL_PREFIX_BYTES):
                        continue  # this process's own commit: its rooms are told by the authority
                    self._heard(notify.relname.decode(), notify.extra.decode(), notify.be_pid)
            except Exception as error:  # the connection dropped (libpq could not read it)
                loop.remove_reader(socket)
                if not lost.done():
                    lost.set_exception(error)

        loop.add_reader(socket, readable)
        readable()

    def _heard(self, channel: str, payload: str, sender: int) -> None:
        if channel.startswith(PAGE_CHANNEL_PREFIX):
            if self._own_sender is not None and sender == self._own_sender():
                return  # this process's own commit (read while a statement ran on the connection)
            notice = parse_notice(payload)
            if notice is None:
                logger.warning("ignoring a malformed NOTIFY payload %r", payload[:80])
                return
            for callback in self._callbacks:
                try:
                    callback(notice)
                except Exception:
                    logger.exception("a commit subscriber failed")
        elif channel == PRESENCE_CHANNEL and self._presence_callbacks:
            self._spawn(self._refresh_presence(payload))
        elif channel == NOTICES_CHANNEL:
            self._heard_notice(payload)

    # -- following pages

    async def follow(self, page_id: str) -> None:
        """LISTENs to a page's channel (a room of it is made here), and returns once PostgreSQL listens:
        a commit after that is heard, and one before it is in the log the caller reads next (a NOTIFY
        queued before the LISTEN and committed after it is delivered too: PostgreSQL reads the queue by
        its listeners' channels when it delivers). While the LISTEN connection is being made again it
        returns at once: the page is listened to with the others when the connection is back, and every
        room then catches up from the log."""
        self._followed.add(page_id)
        if page_id not in self._listened:
            await self._sync_listening()

    def unfollow(self, page_id: str) -> None:
        """Stops listening to a page's channel (its room here is gone), in the background: the UNLISTEN
        goes with the next LISTEN, or on its own soon after."""
        self._followed.discard(page_id)
        if page_id in self._listened and not self._unfollow_due:
            self._unfollow_due = True
            self._spawn(self._sync_listening())

    async def _sync_listening(self) -> None:
        """Makes the LISTEN connection listen to the pages followed and to no other page, in one statement
        (the pages of several rooms made at once go together)."""
        async with self._sync_lock:
            self._unfollow_due = False
            connection = self._listen_connection
            if connection is None:
                return  # being made again: it listens to every page followed before reading
            adding = sorted(self._followed - self._listened)
            dropping = sorted(self._listened - self._followed)
            statements = [listen_statement("LISTEN", adding)] if adding else []
            statements += [listen_statement("UNLISTEN", dropping)] if dropping else []
            if not statements:
                return
            if dropping:
                # Out of the pages' followers first: the others stop NOTIFYing them to this process.
                try:
                    await self._execute(UNFOLLOW_PAGES, {"me": self.process_id, "pages": dropping})
                except Exception as error:  # left in: its writers NOTIFY a channel nobody hears, no more
                    logger.warning("could not leave the followers of %d pages (%s)", len(dropping), error)
            loop = asyncio.get_running_loop()
            # psycopg waits on the socket itself while its statement runs (and hands over the notices it
            # reads meanwhile): the reader callback steps aside until it is done.
            loop.remove_reader(connection.pgconn.socket)
            try:
                await connection.execute("; ".join(statements).encode())
            except Exception as error:  # the connection dropped: it is made again, listening to all
                logger.warning("could not LISTEN to the pages' channels (%s)", error)
                if self._lost is not None and not self._lost.done():
                    self._lost.set_exception(error)
                return
            self._listened.difference_update(dropping)
            if self._lost is not None and not self._lost.done():
                self._read_notices(connection)
            if adding:
                # Listening, then among the followers: a move whose write comes after this one is
                # NOTIFYed here, and one before it is in the log the caller reads next (migration 0012).
                # Listened to only once both are done: a follow finding a page listened to returns.
                try:
                    await self._execute(FOLLOW_PAGES, {"me": self.process_id, "pages": adding})
                except Exception as error:  # the next follow LISTENs again (a no-op) and writes them
                    raise StoreUnavailable(f"could not follow the page ({error})") from error
                self._listened.update(adding)

    # -- notices

    def subscribe_notices(self, callback: NoticeCallback) -> None:
        """Registers `callback(page_id, message)` for the notices of the other processes (this process's
        own are told to its rooms directly, not through here)."""
        self._notice_callbacks.append(callback)

    def tell(self, page_id: str, message: str) -> None:
        """NOTIFYs the other processes of a notice for a page's sockets, off the caller's path."""
        payload = f"{self.process_id} {page_id} {message}"
        self._spawn(self._notify_notice(payload))

    async def _notify_notice(self, payload: str) -> None:
        await self._execute("SELECT pg_notify(%s, %s)", (NOTICES_CHANNEL, payload))

    def _heard_notice(self, payload: str) -> None:
        process_id, _, rest = payload.partition(" ")
        page_id, _, message = rest.partition(" ")
        if process_id == self.process_id or not page_id or not message:
            return  # its own (told to its rooms already), or not a notice
        for callback in self._notice_callbacks:
            try:
                callback(page_id, message)
            except Exception:
                logger.exception("a notice subscriber failed")

    def _spawn(self, work: Awaitable[None]) -> None:
        async def run() -> None:
            try:
                await work
            except Exception:
                logger.warning("a presence update failed", exc_info=True)

        task = asyncio.create_task(run())
        self._presence_tasks.add(task)
        task.add_done_callback(self._presence_tasks.discard)

    # -- presence

    def share_presence(self, page_id: str, seats: tuple[bool, bool]) -> None:
        """Writes (or deletes) this process's presence row of a page, and the departures of the seats
        that left, and NOTIFYs the page, off the caller's path; called only when this process's presence
        on the page changes."""
        before = self._shared.get(page_id, NO_ONE)
        if before == seats:
            return
        if seats == NO_ONE:
            self._shared.pop(page_id, None)
        else:
            self._shared[page_id] = seats
        self._spawn(self._write_presence(page_id, seats, departed(before, seats), self._now()))

    async def _write_presence(
        self, page_id: str, seats: tuple[bool, bool], gone: Sequence[str] = (), at: float = 0.0
    ) -> None:
        if gone:
            # Before the NOTIFY: a peer that hears of the leaving reads when it was.
            await self._execute(
                "INSERT INTO dotfight_departures (page_id, side, left_at) "
                "SELECT %s, side, to_timestamp(%s) FROM unnest(CAST(%s AS text[])) AS gone(side) "
                f"{KEEP_LATEST_DEPARTURE}",
                (page_id, at, list(gone)),
            )
        if seats == NO_ONE:
            statement = "DELETE FROM dotfight_presence WHERE process_id = %s AND page_id = %s"
            params: tuple[Any, ...] = (self.process_id, page_id)
        else:
            statement = (
                "INSERT INTO dotfight_presence (process_id, page_id, blue, red) VALUES (%s, %s, %s, %s) "
                "ON CONFLICT (process_id, page_id) DO UPDATE SET blue = excluded.blue, red = excluded.red"
            )
            params = (self.process_id, page_id, seats[0], seats[1])
        await self._execute(statement, params)
        await self._execute("SELECT pg_notify(%s, %s)", (PRESENCE_CHANNEL, page_id))

    async def remote_presence(self, page_id: str) -> tuple[bool, bool]:
        """Reads which seats the other living processes hold on a page."""
        rows = await self._execute(
            "SELECT coalesce(bool_or(p.blue), false), coalesce(bool_or(p.red), false) "
            "FROM dotfight_presence p JOIN dotfight_processes q USING (process_id) "
            "WHERE p.page_id = %s AND p.process_id <> %s "
            "AND q.seen_at > clock_timestamp() - make_interval(secs => %s)",
            (page_id, self.process_id, self._ttl_s),
        )
        blue, red = rows[0] if rows else NO_ONE
        return bool(blue), bool(red)

    async def departures(self, page_id: str) -> dict[str, float]:
        """Reads when each seat of a page last left it (`dotfight_departures`)."""
        rows = await self._execute(
            "SELECT side, extract(epoch FROM left_at) FROM dotfight_departures WHERE page_id = %s",
            (page_id,),
        )
        return {str(side): float(at) for side, at in rows if side in SIDES}

    async def _refresh_presence(self, page_id: str) -> None:
        seats = await self.remote_presence(page_id)
        for callback in self._presence_callbacks:
            callback(page_id, seats)

    async def _heartbeat_once(self) -> None:
        rows = await self._execute(
            "INSERT INTO dotfight_processes (process_id, seen_at) VALUES (%s, clock_timestamp()) "
            "ON CONFLICT (process_id) DO UPDATE SET seen_at = excluded.seen_at "
            "RETURNING (xmax = 0)",
            (self.process_id,),
        )
        if rows and rows[0][0]:
            # This process's row was new (first beat, or peers took it for dead): share all again.
            for page_id, seats in list(self._shared.items()):
                await self._write_presence(page_id, seats)
            if self._listened:
                # Taken for dead, it may have been left out of its pages' followers (`FOLLOW_PAGES`), and
                # their moves since were not NOTIFYed: it follows them again, and its rooms read the log.
                async with self._sync_lock:
                    followed = {"me": self.process_id, "pages": sorted(self._listened)}
                    await self._execute(FOLLOW_PAGES, followed)
                for callback in self._reconnect_callbacks:
                    await callback()
        # The dead (no heartbeat within the TTL): their seats leave, and their pages hear of it.
        await self._execute(
            "WITH dead AS (DELETE FROM dotfight_processes "
            "WHERE seen_at < clock_timestamp() - make_interval(secs => %s) RETURNING process_id), "
            "gone AS (DELETE FROM dotfight_presence WHERE process_id IN (SELECT process_id FROM dead) "
            f"RETURNING page_id, blue, red), {RECORD_GONE_SEATS} "
            "SELECT pg_notify(%s, page_id) FROM (SELECT DISTINCT page_id FROM gone) pages",
            (self._ttl_s, self._now(), PRESENCE_CHANNEL),
        )

    async def _beat_forever(self) -> None:
        while True:
            await asyncio.sleep(self._heartbeat_s)
            try:
                await self._heartbeat_once()
            except Exception as error:
                logger.warning("presence heartbeat failed (%s)", error)
