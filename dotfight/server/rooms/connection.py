"""One WebSocket of a page, its outgoing queue, and the messages as serialised for it (once per
action or presence change, for every socket of a page).

Every connection has its own outgoing queue, drained by a writer task while it holds anything, so
sending to a room is a non-blocking append: a commit can be told to every socket of its page at once,
in version order, without waiting for a slow phone. A connection that lets its queue fill up is
dropped; it resumes from its version. While nothing waits in its queue and the socket takes bytes (nearly
always), a message's frame is written to the socket at once instead (`FrameSink`), framed once for all
the sockets it goes to (`Room.broadcast`). While the connection's own action is under way (`hold`), its
messages are kept and written together when it is answered (`release`): the action's events and its
ack reach the socket in one write, one system call and one wake-up of the phone instead of two.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections import deque
from typing import Any

from starlette.websockets import WebSocket, WebSocketState

from dotfight.server.pages.wire import FrameSink, compact_json, text_frame

logger = logging.getLogger(__name__)

PresenceKey = tuple[bool, bool]
NOBODY: PresenceKey = (False, False)


def presence_message(presence: PresenceKey) -> str:
    """Serialises the `{type: "presence", blue, red}` message."""
    return compact_json({"type": "presence", "blue": presence[0], "red": presence[1]})


# Close code for a client too slow to keep up ("try again later").
CLOSE_TOO_SLOW = 1013
# Close code for a socket over the cap of its page or its address (4000 + HTTP 429).
CLOSE_TOO_MANY_SOCKETS = 4429


class Connection:
    """One WebSocket of a page, with its seat ("blue", "red", "both" or None for a watcher).

    Messages wait in a plain deque, sent by a task that runs only while there is something to send: a
    live page's sockets are idle nearly all the time, and a standing queue and task per socket cost
    memory (a few KB each) for nothing. The deque itself (0.6 KB, its first block) is made when a
    message comes and let go once it is sent.

    Under uvicorn (`transport.LeanWebSocketProtocol`) a message is not queued at all while the queue is
    empty and the socket takes bytes: its frame is written at once, in the caller's turn of the loop
    (no task, no ASGI `send`; the order is kept, since anything queued goes first)."""

    __slots__ = (
        "_held",
        "_outbox",
        "_queue_size",
        "_sink",
        "_writer",
        "close_code",
        "close_reason",
        "seat",
        "websocket",
    )

    def __init__(self, websocket: WebSocket, queue_size: int, sink: FrameSink | None = None) -> None:
        self.websocket = websocket
        # Where frames are written at once (`wire.frame_sink_of` the socket's scope); None: always queued.
        self._sink = sink
        self.seat: str | None = None
        self._outbox: deque[str] | None = None
        self._queue_size = queue_size
        self.close_code: int | None = None
        self.close_reason = ""
        self._writer: asyncio.Task[None] | None = None
        # The messages kept while `hold` holds them (text, frame or None), in order; None: not held.
        self._held: list[tuple[str, bytes | None]] | None = None

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

    def send(self, text: str, frame: bytes | None = None) -> None:
        """Sends a message (`frame`: its WebSocket frame, `text_frame(text)`, when the caller made it
        once for several sockets): written at once when nothing waits before it and the socket takes it,
        else queued; a connection too far behind is closed instead."""
        if self.close_code is not None:
            return
        if self._held is not None:
            self._held.append((text, frame))
            return
        sink = self._sink
        idle = self._idle()
        if sink is not None and idle and sink.write_frame(text_frame(text) if frame is None else frame):
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

    def _idle(self) -> bool:
        """Tells whether nothing waits to be written before a new message (no queue, no writer task)."""
        return self._outbox is None and self._writer is None

    def hold(self) -> None:
        """Keeps the messages sent from now on until `release` (the socket's own action: its events,
        broadcast to the page, and then its ack or refusal, go out in one write)."""
        if self._held is None:
            self._held = []

    def release(self) -> None:
        """Sends what was kept since `hold`, in order: in one write when nothing waits before it and the
        socket takes it, else each message as `send` would (queued behind what waits)."""
        held, self._held = self._held, None
        if not held or self.close_code is not None:
            return
        sink = self._sink
        if len(held) > 1 and sink is not None and self._idle():
            frames = b"".join(text_frame(text) if frame is None else frame for text, frame in held)
            if sink.write_frame(frames):
                return
        for text, frame in held:
            self.send(text, frame)

    def close_soon(self, code: int, reason: str = "") -> None:
        """Closes the socket with `code` (and `reason`) once what is queued has been sent (at once,
        dropping it, when the queue is full: the client is not reading)."""
        if self.close_code is not None:
            return
        self.release()  # what was kept goes before the close
        self.close_code = code
        self.close_reason = reason
        if self._queued() >= self._queue_size:
            self._outbox = None
            if self._writer is not None:
                self._writer.cancel()
                self._writer = None
        self._wake()

    async def close_now(self, code: int) -> None:
        """Closes the socket with `code` at once, dropping what is queued (and kept)."""
        self.close_code = code
        self._outbox = None
        self._held = None
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
