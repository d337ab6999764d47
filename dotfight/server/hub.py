"""The WebSocket hub: the connections of each page, who of them holds a seat, and broadcasting.

Every connection has its own outgoing queue, drained by a writer task while it holds anything, so
broadcasting is a non-blocking append: the authority's listener can broadcast under the page lock
(keeping version order) without waiting for a slow phone. A connection that lets its queue fill up is
dropped; it resumes from its version.

Presence costs O(1) per join or leave: each page counts its connections per seat, a joining connection
is told the presence once, and the others hear of it only when it changes, gathered over a short delay
(a thousand watchers arriving cause no presence broadcast at all; a seat arriving causes one). Sockets
are capped per page and per client address.

Several processes may serve one page (`dotfight.server.fanout`): each page remembers the version its
sockets here have all heard (`deliver` moves it on by exactly one), and presence is this process's seats
together with the seats the other processes hold (`set_remote_presence`); this process's own seats are
handed to `on_local_presence` when they change, to be shared with the others.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import logging
from collections import Counter, deque
from collections.abc import Callable
from typing import Any

import orjson
from starlette.websockets import WebSocket, WebSocketState

logger = logging.getLogger(__name__)

# Close code for a client too slow to keep up ("try again later").
CLOSE_TOO_SLOW = 1013
# Close code for a socket over the cap of its page or its address (4000 + HTTP 429).
CLOSE_TOO_MANY_SOCKETS = 4429


def compact_json(message: dict[str, Any]) -> str:
    """Serialises a message as sent on the WebSocket (no spaces), with orjson: the events message is made
    once per action (about 0.7 µs against stdlib json's 12); stdlib json answers what orjson refuses
    (integers beyond 64 bits).

    >>> compact_json({"type": "ack", "move_id": "m1", "version": 5})
    '{"type":"ack","move_id":"m1","version":5}'
    """
    try:
        return orjson.dumps(message).decode()
    except orjson.JSONEncodeError:
        return json.dumps(message, separators=(",", ":"))


def events_message(version: int, events: list[dict[str, Any]]) -> str:
    """Serialises the `{type: "events"}` message (once per action, for every connection of a page)."""
    return compact_json({"type": "events", "version": version, "events": events})


class Connection:
    """One WebSocket of a page, with its seat ("blue", "red", "both" or None for a watcher).

    Messages wait in a plain deque, sent by a task that runs only while there is something to send: a
    live page's sockets are idle nearly all the time, and a standing queue and task per socket cost
    memory (a few KB each) for nothing. The deque itself (0.6 KB, its first block) is made when a
    message comes and let go once it is sent."""

    __slots__ = ("_outbox", "_queue_size", "_writer", "close_code", "close_reason", "seat", "websocket")

    def __init__(self, websocket: WebSocket, queue_size: int) -> None:
        self.websocket = websocket
        self.seat: str | None = None
        self._outbox: deque[str] | None = None
        self._queue_size = queue_size
        self.close_code: int | None = None
        self.close_reason = ""
        self._writer: asyncio.Task[None] | None = None

    def _wake(self) -> None:
        if self._writer is None:
            self._writer = asyncio.get_running_loop().create_task(self._drain())

    def _queued(self) -> int:
        return 0 if self._outbox is None else len(self._outbox)

    async def _drain(self) -> None:
        try:
            while self._outbox:
                text = self._outbox.popleft()
                try:
                    await self.websocket.send_text(text)
                except Exception:  # the peer went away; the reader side notices and cleans up
                    self._outbox = None
                    break
            if self.close_code is not None:
                await self._close_socket(self.close_code)
        finally:
            if self._writer is asyncio.current_task():  # not a successor started after a cancel
                self._writer = None
                if not self._outbox:
                    self._outbox = None

    def send(self, text: str) -> None:
        """Queues a message; a connection too far behind is closed instead."""
        if self.close_code is not None:
            return
        if self._outbox is None:
            self._outbox = deque()
        elif len(self._outbox) >= self._queue_size:
            logger.info("dropping a connection that does not keep up")
            self.close_soon(CLOSE_TOO_SLOW)
            return
        self._outbox.append(text)
        self._wake()

    def send_json(self, message: dict[str, Any]) -> None:
        """Queues a message given as a dict."""
        self.send(compact_json(message))

    def close_soon(self, code: int, reason: str = "") -> None:
        """Closes the socket with `code` (and `reason`) once what is queued has been sent (at once,
        dropping it, when the queue is full: the client is not reading)."""
        if self.close_code is not None:
            return
        self.close_code = code
        self.close_reason = reason
        if self._queued() >= self._queue_size:
            self._outbox = None
            if self._writer is not None:
                self._writer.cancel()
                self._writer = None
        self._wake()

    async def close_now(self, code: int) -> None:
        """Closes the socket with `code` at once, dropping what is queued."""
        self.close_code = code
        self._outbox = None
        writer = self._writer
        if writer is not None:
            writer.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await writer
        await self._close_socket(code)

    async def _close_socket(self, code: int) -> None:
        if self.websocket.application_state == WebSocketState.CONNECTED:
            with contextlib.suppress(Exception):
                await self.websocket.close(code, self.close_reason)

    async def finish(self) -> None:
        """Lets the writer send what is queued (briefly), then stops it."""
        writer = self._writer
        if writer is None:
            return
        try:
            await asyncio.wait_for(asyncio.shield(writer), timeout=1.0)
        except (TimeoutError, asyncio.CancelledError):
            writer.cancel()
        except Exception:
            logger.debug("writer ended with an error", exc_info=True)


PresenceKey = tuple[bool, bool]
NOBODY: PresenceKey = (False, False)


class _Page:
    """The connections of one page, counted per seat, and the presence last broadcast."""

    __slots__ = ("always_present", "connections", "flush", "remote", "seats", "sent", "shared", "version")

    def __init__(self, always_present: frozenset[str], version: int, remote: PresenceKey) -> None:
        self.connections: dict[Connection, str | None] = {}
        self.seats: Counter[str] = Counter()
        self.always_present = always_present
        # The version every connection of this page has heard (the next to hear is version + 1).
        self.version = version
        # The seats other processes hold here, and this process's seats as last shared with them.
        self.remote = remote
        self.shared: PresenceKey = NOBODY
        # What an empty page's presence is; each joiner is told the presence itself on arrival.
        self.sent: PresenceKey = self.presence()
        self.flush: asyncio.TimerHandle | None = None

    def local(self) -> PresenceKey:
        both = self.seats["both"] > 0
        return both or self.seats["blue"] > 0, both or self.seats["red"] > 0

    def presence(self) -> PresenceKey:
        blue, red = self.local()
        blue = blue or self.remote[0] or "blue" in self.always_present
        red = red or self.remote[1] or "red" in self.always_present
        return blue, red


def presence_message(presence: PresenceKey) -> str:
    """Serialises the `{type: "presence", blue, red}` message."""
    return compact_json({"type": "presence", "blue": presence[0], "red": presence[1]})


class Hub:
    """Connections per page; presence is which seats have at least one connection.

    `max_per_page` and `max_per_address` cap sockets (per process); `presence_delay` is how long
    presence changes are gathered before one broadcast.
    """

    def __init__(
        self, max_per_page: int = 500, max_per_address: int = 500, presence_delay: float = 0.05
    ) -> None:
        self._pages: dict[str, _Page] = {}
        self._addresses: Counter[str] = Counter()
        self.max_per_page = max_per_page
        self.max_per_address = max_per_address
        self._presence_delay = presence_delay
        # Told (page_id, seats) when this process's own seats on a page change (after the delay).
        self.on_local_presence: Callable[[str, PresenceKey], None] | None = None

    def admit(self, address: str) -> bool:
        """Counts one more socket from `address`; False (counting nothing) when it is at its cap."""
        if self._addresses[address] >= self.max_per_address:
            return False
        self._addresses[address] += 1
        return True

    def release(self, address: str) -> None:
        """Forgets one socket of `address` (counted by `admit`)."""
        self._addresses[address] -= 1
        if self._addresses[address] <= 0:
            del self._addresses[address]

    def page_full(self, page_id: str, connection: Connection) -> bool:
        """Tells whether a connection not yet on the page would go over the page's cap."""
        page = self._pages.get(page_id)
        return (
            page is not None
            and connection not in page.connections
            and (len(page.connections) >= self.max_per_page)
        )

    def join(
        self,
        page_id: str,
        connection: Connection,
        always_present: frozenset[str],
        version: int = 0,
        remote: PresenceKey = NOBODY,
    ) -> None:
        """Adds a connection to a page with its `seat` (again after a resync hello: its seat may have
        changed), tells it the presence, and tells the others if the presence changed.

        `version` is what the connection was told (the page's sockets here must have heard just as
        much, see `deliver`); `remote` the seats other processes hold, for a page new to this hub."""
        page = self._pages.get(page_id)
        if page is None:
            page = self._pages[page_id] = _Page(always_present, version, remote)
        elif page.version != version:
            raise RuntimeError(f"page {page_id}: joining at version {version}, its sockets at {page.version}")
        previous = page.connections.get(connection)
        if previous is not None:
            page.seats[previous] -= 1
        page.connections[connection] = connection.seat
        if connection.seat is not None:
            page.seats[connection.seat] += 1
        connection.send(presence_message(page.presence()))
        self._presence_may_have_changed(page_id, page)

    def leave(self, page_id: str, connection: Connection) -> None:
        """Removes a connection from a page (the others hear of it if the presence changed)."""
        page = self._pages.get(page_id)
        if page is None or connection not in page.connections:
            return
        seat = page.connections.pop(connection)
        if seat is not None:
            page.seats[seat] -= 1
        if not page.connections:
            if page.flush is not None:
                page.flush.cancel()
            del self._pages[page_id]
            if page.shared != NOBODY and self.on_local_presence is not None:
                self.on_local_presence(page_id, NOBODY)
            return
        self._presence_may_have_changed(page_id, page)

    def version(self, page_id: str) -> int | None:
        """Returns the version every socket of a page here has heard (None: no socket of it here)."""
        page = self._pages.get(page_id)
        return None if page is None else page.version

    def page_ids(self) -> list[str]:
        """Returns the ids of the pages with sockets here."""
        return list(self._pages)

    def deliver(self, page_id: str, version: int, text: str) -> None:
        """Broadcasts the events message of `version`, the next version the page's sockets are to hear
        (a version already heard, or one further on, is a caller's mistake and raises)."""
        page = self._pages.get(page_id)
        if page is None:
            return
        if version != page.version + 1:
            raise RuntimeError(f"page {page_id}: version {version} after {page.version}")
        page.version = version
        self.broadcast(page_id, text)

    def set_remote_presence(self, page_id: str, seats: PresenceKey) -> None:
        """Records which seats other processes hold on a page served here (others are ignored)."""
        page = self._pages.get(page_id)
        if page is None or page.remote == seats:
            return
        page.remote = seats
        self._presence_may_have_changed(page_id, page)

    def _presence_may_have_changed(self, page_id: str, page: _Page) -> None:
        changed = page.presence() != page.sent
        shared = self.on_local_presence is not None and page.local() != page.shared
        if page.flush is None and (changed or shared):
            loop = asyncio.get_running_loop()
            page.flush = loop.call_later(self._presence_delay, self._flush_presence, page_id, page)

    def _flush_presence(self, page_id: str, page: _Page) -> None:
        page.flush = None
        if self._pages.get(page_id) is not page:
            return
        local = page.local()
        if local != page.shared and self.on_local_presence is not None:
            page.shared = local
            self.on_local_presence(page_id, local)
        presence = page.presence()
        if presence != page.sent:
            page.sent = presence
            self.broadcast(page_id, presence_message(presence))

    def broadcast(self, page_id: str, text: str) -> None:
        """Queues a serialised message for every connection of a page."""
        page = self._pages.get(page_id)
        if page is None:
            return
        for connection in page.connections:
            connection.send(text)

    def presence(self, page_id: str) -> dict[str, object]:
        """Returns the `{type: "presence", blue, red}` message of a page."""
        page = self._pages.get(page_id)
        blue, red = page.presence() if page is not None else (False, False)
        return {"type": "presence", "blue": blue, "red": red}

    def close_page(self, page_id: str, message: dict[str, Any], code: int, reason: str = "") -> None:
        """Sends `message` to every connection of a page, then closes them with `code`."""
        page = self._pages.get(page_id)
        if page is None:
            return
        for connection in list(page.connections):
            connection.send_json(message)
            connection.close_soon(code, reason)

    async def close_all(self, code: int) -> None:
        """Closes every connection (at shutdown)."""
        for page in list(self._pages.values()):
            for connection in list(page.connections):
                await connection.close_now(code)
