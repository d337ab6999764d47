"""The WebSocket hub: the connections of each page, who of them holds a seat, and broadcasting.

Every connection has its own outgoing queue drained by its own writer task, so broadcasting is a
non-blocking put: the master can broadcast under the page lock (keeping version order) without waiting
for a slow phone. A connection that lets its queue fill up is dropped; it resumes from its version.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import logging
from collections import defaultdict
from typing import Any

from starlette.websockets import WebSocket, WebSocketState

logger = logging.getLogger(__name__)

# Close code for a client too slow to keep up ("try again later").
CLOSE_TOO_SLOW = 1013


def compact_json(message: dict[str, Any]) -> str:
    """Serialises a message as sent on the WebSocket (no spaces)."""
    return json.dumps(message, separators=(",", ":"))


def events_message(version: int, events: list[dict[str, Any]]) -> str:
    """Serialises the `{type: "events"}` message (once per action, for every connection of a page)."""
    return compact_json({"type": "events", "version": version, "events": events})


class Connection:
    """One WebSocket of a page, with its seat ("blue", "red", "both" or None for a watcher)."""

    def __init__(self, websocket: WebSocket, queue_size: int) -> None:
        self.websocket = websocket
        self.seat: str | None = None
        self._outbox: asyncio.Queue[str | None] = asyncio.Queue(maxsize=queue_size)
        self.close_code: int | None = None
        self._writer = asyncio.create_task(self._write_loop())
        self._closer: asyncio.Task[None] | None = None

    async def _write_loop(self) -> None:
        while True:
            text = await self._outbox.get()
            if text is None:
                break
            try:
                await self.websocket.send_text(text)
            except Exception:  # the peer went away; the reader side notices and cleans up
                break
        if self.close_code is not None:
            await self._close_socket(self.close_code)

    def send(self, text: str) -> None:
        """Queues a message; a connection too far behind is closed instead."""
        if self.close_code is not None:
            return
        try:
            self._outbox.put_nowait(text)
        except asyncio.QueueFull:
            logger.info("dropping a connection that does not keep up")
            self.close_soon(CLOSE_TOO_SLOW)

    def send_json(self, message: dict[str, Any]) -> None:
        """Queues a message given as a dict."""
        self.send(compact_json(message))

    def close_soon(self, code: int) -> None:
        """Closes the socket with `code` once what is queued has been sent."""
        if self.close_code is not None:
            return
        self.close_code = code
        try:
            self._outbox.put_nowait(None)
        except asyncio.QueueFull:
            self._writer.cancel()
            self._closer = asyncio.create_task(self._close_socket(code))

    async def close_now(self, code: int) -> None:
        """Closes the socket with `code` at once, dropping what is queued."""
        self.close_code = code
        self._writer.cancel()
        with contextlib.suppress(asyncio.CancelledError):
            await self._writer
        await self._close_socket(code)

    async def _close_socket(self, code: int) -> None:
        if self.websocket.application_state == WebSocketState.CONNECTED:
            with contextlib.suppress(Exception):
                await self.websocket.close(code)

    async def finish(self) -> None:
        """Lets the writer send what is queued (briefly), then stops it."""
        if self.close_code is None:
            with contextlib.suppress(asyncio.QueueFull):
                self._outbox.put_nowait(None)
        try:
            await asyncio.wait_for(self._writer, timeout=1.0)
        except (TimeoutError, asyncio.CancelledError):
            self._writer.cancel()
        except Exception:
            logger.debug("writer ended with an error", exc_info=True)


class Hub:
    """Connections per page; presence is which seats have at least one connection."""

    def __init__(self) -> None:
        self._pages: defaultdict[str, set[Connection]] = defaultdict(set)
        # Seats always present on a page (Dawood-bot's).
        self._always_present: dict[str, frozenset[str]] = {}

    def join(self, page_id: str, connection: Connection, always_present: frozenset[str]) -> None:
        """Adds a connection to a page."""
        self._pages[page_id].add(connection)
        self._always_present[page_id] = always_present

    def leave(self, page_id: str, connection: Connection) -> None:
        """Removes a connection from a page."""
        connections = self._pages.get(page_id)
        if connections is None:
            return
        connections.discard(connection)
        if not connections:
            del self._pages[page_id]
            self._always_present.pop(page_id, None)

    def broadcast(self, page_id: str, text: str) -> None:
        """Queues a serialised message for every connection of a page."""
        for connection in self._pages.get(page_id, ()):
            connection.send(text)

    def presence(self, page_id: str) -> dict[str, object]:
        """Returns the `{type: "presence", blue, red}` message of a page."""
        present = set(self._always_present.get(page_id, frozenset()))
        for connection in self._pages.get(page_id, ()):
            if connection.seat == "both":
                present.update(("blue", "red"))
            elif connection.seat is not None:
                present.add(connection.seat)
        return {"type": "presence", "blue": "blue" in present, "red": "red" in present}

    def broadcast_presence(self, page_id: str) -> None:
        """Tells every connection of a page who is there."""
        self.broadcast(page_id, compact_json(self.presence(page_id)))

    async def close_all(self, code: int) -> None:
        """Closes every connection (at shutdown)."""
        for connections in list(self._pages.values()):
            for connection in list(connections):
                await connection.close_now(code)
