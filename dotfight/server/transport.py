"""HTTP transport guards under uvicorn: bounded request heads, a request-head timeout, a connection cap,
and the API's JSON error shape for the refusals made before the app runs; and uvicorn's WebSocket
protocol made lean for sockets held open for hours (`LeanWebSocketProtocol`).

uvicorn bounds nothing of a request head under httptools (its default with `uvicorn[standard]`): a
64 MiB header was read whole, and a connection that sends half a request, or nothing, was held for as
long as the client liked. `guarded_protocol(settings)` returns uvicorn's HTTP protocol class with these
guards added; `dotfight serve` hands it to uvicorn as its `http` implementation. The h11 implementation
bounds the head itself (`h11_max_incomplete_event_size`); the timeout and cap are added to both.

These are the same limits nginx puts in front of an app (`large_client_header_buffers`,
`client_header_timeout`, `keepalive_timeout`, `limit_conn`); `deploy/nginx.conf` sets them there too.
"""

from __future__ import annotations

import asyncio
import json
from typing import Any

import h11
from uvicorn.protocols.http.h11_impl import H11Protocol
from uvicorn.protocols.websockets.websockets_sansio_impl import WebSocketsSansIOProtocol

from dotfight.server.errors import ApiError
from dotfight.server.settings import Settings

try:
    from uvicorn.protocols.http.httptools_impl import HttpToolsProtocol
except ImportError:  # pragma: no cover - httptools is part of uvicorn[standard]
    HttpToolsProtocol = None  # type: ignore[assignment,misc]


def raw_error_response(error: ApiError) -> bytes:
    """Returns a whole HTTP/1.1 answer (closing the connection) carrying `error` in the API's shape."""
    body = json.dumps(error.to_json(), separators=(",", ":")).encode()
    reason = {400: "Bad Request", 408: "Request Timeout", 431: "Request Header Fields Too Large"}
    head = (
        f"HTTP/1.1 {error.status} {reason.get(error.status, 'Error')}\r\n"
        "content-type: application/json\r\n"
        f"content-length: {len(body)}\r\n"
        "connection: close\r\n\r\n"
    )
    return head.encode("ascii") + body


MALFORMED = raw_error_response(ApiError("bad_request", "the request is not valid HTTP"))
HEAD_TOO_LARGE = raw_error_response(ApiError("header_too_large", "the request's headers are too large"))
HEAD_TOO_SLOW = raw_error_response(ApiError("request_timeout", "the request's headers came too slowly"))


async def _unavailable(scope: Any, receive: Any, send: Any) -> None:
    """The ASGI answer to a request over the connection cap: 503 unavailable, in the API's shape."""
    error = ApiError("unavailable", "the server is too busy; try again in a moment")
    body = json.dumps(error.to_json()).encode()
    headers = [
        (b"content-type", b"application/json"),
        (b"content-length", str(len(body)).encode()),
        (b"retry-after", b"1"),
        (b"connection", b"close"),
    ]
    await send({"type": "http.response.start", "status": 503, "headers": headers})
    await send({"type": "http.response.body", "body": body})


class _HeadGuard:
    """What both guarded protocols share: the head timer, the connection cap and the JSON refusals.

    Mixed into uvicorn's protocol classes; the class attributes are set by `guarded_protocol`.
    """

    head_timeout: float = 10.0
    max_connections: int = 4096
    max_head_bytes: int = 16384

    limit_concurrency: int | None
    transport: asyncio.Transport
    loop: asyncio.AbstractEventLoop
    connections: set[Any]
    tasks: set[Any]
    app: Any
    _head_timer: asyncio.TimerHandle | None = None
    _head_bytes = 0

    def _arm_head_timer(self) -> None:
        self._disarm_head_timer()
        self._head_timer = self.loop.call_later(self.head_timeout, self._head_overdue)

    def _disarm_head_timer(self) -> None:
        if self._head_timer is not None:
            self._head_timer.cancel()
            self._head_timer = None

    def _head_overdue(self) -> None:
        self._head_timer = None
        if self.transport.is_closing():
            return
        # A connection that said nothing at all (a browser's spare connection) is closed without a word.
        if self._head_bytes:
            self.transport.write(HEAD_TOO_SLOW)
        self.transport.close()

    def _refuse(self, answer: bytes) -> None:
        self._disarm_head_timer()
        if not self.transport.is_closing():
            self.transport.write(answer)
            self.transport.close()

    def _take_over_the_cap(self) -> None:
        # uvicorn's own check of `limit_concurrency` answers in plain text; this protocol answers HTTP
        # requests over the cap itself (`_over_capacity`). WebSocket handshakes keep uvicorn's check.
        self.limit_concurrency = None

    def _awaiting_head(self) -> bool:
        """Tells whether the bytes coming now belong to a request head."""
        raise NotImplementedError

    def _feed(self, data: bytes) -> None:
        """Hands bytes to uvicorn's parser (the protocol's own `data_received`)."""
        raise NotImplementedError

    def data_received(self, data: bytes) -> None:
        if not self._awaiting_head():
            self._feed(data)
            return
        # Only as much as the head may still take is parsed; if the head is not complete by then, it
        # is too large (httptools would buffer a header of any size, h11 a head that comes in one piece).
        room = self.max_head_bytes - self._head_bytes
        self._head_bytes += min(len(data), room)
        self._feed(data[:room])
        if len(data) <= room or self.transport.is_closing():
            return
        if self._awaiting_head():
            self._refuse(HEAD_TOO_LARGE)
            return
        # The head ended inside this chunk: the rest (a body, a pipelined request) goes on as usual, to
        # whichever protocol now owns the connection (a WebSocket after an upgrade).
        self.transport.get_protocol().data_received(data[room:])  # type: ignore[attr-defined]

    def send_400_response(self, msg: str) -> None:
        """Answers an unreadable request in the API's error shape (uvicorn's own is plain text)."""
        self._refuse(MALFORMED)

    def _over_capacity(self) -> bool:
        return len(self.connections) > self.max_connections or len(self.tasks) >= self.max_connections


if HttpToolsProtocol is not None:

    class GuardedHttpToolsProtocol(_HeadGuard, HttpToolsProtocol):
        """uvicorn's httptools protocol with a bounded request head, a head timeout and a connection cap."""

        _in_head = True

        def _feed(self, data: bytes) -> None:
            HttpToolsProtocol.data_received(self, data)

        def connection_made(self, transport: asyncio.Transport) -> None:  # type: ignore[override]
            super().connection_made(transport)
            self._take_over_the_cap()
            self._in_head = True
            self._head_bytes = 0
            self._arm_head_timer()

        def connection_lost(self, exc: Exception | None) -> None:
            self._disarm_head_timer()
            super().connection_lost(exc)

        def _awaiting_head(self) -> bool:
            return self._in_head

        def on_message_begin(self) -> None:
            if not self._in_head:  # a kept-alive connection starts its next request
                self._in_head = True
                self._arm_head_timer()
            super().on_message_begin()

        def on_headers_complete(self) -> None:
            self._in_head = False
            self._head_bytes = 0
            self._disarm_head_timer()
            if not self._over_capacity():
                super().on_headers_complete()
                return
            app, self.app = self.app, _unavailable
            try:
                super().on_headers_complete()
            finally:
                self.app = app


class GuardedH11Protocol(_HeadGuard, H11Protocol):
    """uvicorn's h11 protocol with a bounded request head, a head timeout and a connection cap."""

    def connection_made(self, transport: asyncio.Transport) -> None:  # type: ignore[override]
        super().connection_made(transport)
        self._take_over_the_cap()
        self._arm_head_timer()

    def connection_lost(self, exc: Exception | None) -> None:
        self._disarm_head_timer()
        super().connection_lost(exc)

    def _awaiting_head(self) -> bool:
        return self.conn.their_state is h11.IDLE

    def _feed(self, data: bytes) -> None:
        H11Protocol.data_received(self, data)

    def _head_overdue(self) -> None:
        # Only a connection still waiting for a request head is timed out (not a running request).
        if self._awaiting_head():
            super()._head_overdue()

    def on_response_complete(self) -> None:
        super().on_response_complete()
        self._head_bytes = 0
        self._arm_head_timer()

    def handle_events(self) -> None:
        if not self._over_capacity():
            super().handle_events()
            return
        app, self.app = self.app, _unavailable
        try:
            super().handle_events()
        finally:
            self.app = app


def guarded_protocol(settings: Settings) -> type[asyncio.Protocol]:
    """Returns the HTTP protocol class `dotfight serve` runs, with the settings' limits built in."""
    use_h11 = settings.http_implementation == "h11" or (
        settings.http_implementation == "auto" and HttpToolsProtocol is None
    )
    limits: dict[str, Any] = {
        "head_timeout": settings.http_head_timeout,
        "max_connections": settings.max_connections,
    }
    limits["max_head_bytes"] = settings.http_max_head_bytes
    if use_h11:
        return type("DotfightH11Protocol", (GuardedH11Protocol,), limits)
    if HttpToolsProtocol is None:  # pragma: no cover
        raise RuntimeError("httptools is not installed; set DOTFIGHT_HTTP_IMPLEMENTATION=h11")
    return type("DotfightHttpToolsProtocol", (GuardedHttpToolsProtocol,), limits)


class _Inbox:
    """What a socket received, for the app's `receive`: the part of `asyncio.Queue` uvicorn uses
    (`put_nowait`, `get`, `empty`), without its counters, its `Event` and its two waiter deques (about
    2.5 KB a socket). A reader waits on one future, made only while it waits. The items are a list, not
    a deque (whose first block alone is 0.6 KB): uvicorn stops reading the socket while any wait, so
    there are only ever a few."""

    __slots__ = ("_items", "_waiters")

    def __init__(self) -> None:
        self._items: list[Any] = []
        self._waiters: list[asyncio.Future[None]] = []

    def put_nowait(self, item: Any) -> None:
        self._items.append(item)
        self._wake_one()

    def empty(self) -> bool:
        return not self._items

    def qsize(self) -> int:
        return len(self._items)

    def _wake_one(self) -> None:
        for waiter in self._waiters:
            if not waiter.done():
                waiter.set_result(None)
                return

    async def get(self) -> Any:
        while not self._items:
            waiter = asyncio.get_running_loop().create_future()
            self._waiters.append(waiter)
            try:
                await waiter
            except BaseException:
                # Cancelled (perhaps just after being woken): what came is left to another reader.
                self._waiters.remove(waiter)
                if self._items:
                    self._wake_one()
                raise
            self._waiters.remove(waiter)
        return self._items.pop(0)


class _Writable:
    """Whether the transport takes more bytes (`asyncio.Event`'s `set`, `clear`, `is_set`, `wait`), with
    no waiter deque kept while nobody waits — nearly always: a phone reads what it is sent."""

    __slots__ = ("_set", "_waiters")

    def __init__(self) -> None:
        self._set = True
        self._waiters: list[asyncio.Future[None]] | None = None

    def is_set(self) -> bool:
        return self._set

    def set(self) -> None:
        self._set = True
        waiters, self._waiters = self._waiters, None
        for waiter in waiters or ():
            if not waiter.done():
                waiter.set_result(None)

    def clear(self) -> None:
        self._set = False

    async def wait(self) -> bool:
        if self._set:
            return True
        waiter = asyncio.get_running_loop().create_future()
        if self._waiters is None:
            self._waiters = []
        self._waiters.append(waiter)
        try:
            await waiter
        finally:
            if self._waiters is not None and waiter in self._waiters:
                self._waiters.remove(waiter)
        return True


class LeanWebSocketProtocol(WebSocketsSansIOProtocol):
    """uvicorn's WebSocket protocol (websockets' sans-I/O core; the same frames, limits, pings and close
    codes), holding less for each open socket, of which a live server has thousands (issue 12):

    - its attributes in slots: uvicorn sets about forty, past what Python shares between instances'
      dictionaries, so each socket had a dictionary of its own (≈ 1.5 KB);
    - the receive queue and the "writable" flag without asyncio's `Queue` and `Event` (`_Inbox`,
      `_Writable`);
    - the handshake's request and response (websockets `Headers`, ≈ 3 KB) let go once the socket is
      accepted or refused: nothing reads them again. websockets' parser keeps the request in its
      generator's frame for the life of the connection, so its headers are emptied as well.

    `dotfight serve` hands it to uvicorn as its `ws` implementation.
    """

    __slots__ = (
        "app",
        "app_state",
        "asgi_version",
        "client",
        "close_sent",
        "close_timeout",
        "close_timer",
        "config",
        "conn",
        "connections",
        "curr_msg_data_type",
        "default_headers",
        "disconnected",
        "frames",
        "handshake_complete",
        "handshake_initiated",
        "initial_response",
        "last_ping_rtt",
        "logger",
        "loop",
        "pending_ping_payload",
        "ping_interval",
        "ping_sent_at",
        "ping_timeout",
        "ping_timer",
        "pong_timer",
        "queue",
        "read_paused",
        "request",
        "response",
        "root_path",
        "scheme",
        "scope",
        "server",
        "tasks",
        "transport",
        "writable",
    )

    def __init__(
        self,
        config: Any,
        server_state: Any,
        app_state: dict[str, Any],
        _loop: asyncio.AbstractEventLoop | None = None,
    ) -> None:
        super().__init__(config, server_state, app_state, _loop)
        self.queue = _Inbox()  # type: ignore[assignment]
        self.writable = _Writable()  # type: ignore[assignment]

    def handle_connect(self, event: Any) -> None:
        super().handle_connect(event)
        # uvicorn copied what the app needs into the scope, and websockets answered the handshake.
        event.headers.clear()
        self.request = None  # type: ignore[assignment]
        if self.handshake_complete:  # refused by websockets itself (not a valid handshake)
            self.response = None  # type: ignore[assignment]

    def start_keepalive(self) -> None:
        # Called once, right after the accepting response was sent: the response is not needed again.
        self.response = None  # type: ignore[assignment]
        super().start_keepalive()
