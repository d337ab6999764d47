"""HTTP transport guards under uvicorn: bounded request heads, a request-head timeout, a whole-body
deadline, a connection cap and a cap per TCP peer, and the API's JSON error shape for the refusals made
before the app runs; and uvicorn's WebSocket protocol made lean for sockets held open for hours
(`LeanWebSocketProtocol`).

uvicorn bounds nothing of a request head under httptools (its default with `uvicorn[standard]`): a
64 MiB header was read whole, and a connection that sends half a request, or nothing, was held for as
long as the client liked; so was one that sent a whole head and then its body a byte every few seconds,
and one address could hold every connection the server allows. `guarded_protocol(settings)` returns
uvicorn's HTTP protocol class with these guards added; `dotfight serve` hands it to uvicorn as its
`http` implementation. The h11 implementation bounds the head itself (`h11_max_incomplete_event_size`);
the timeouts and caps are added to both.

These are the same limits nginx puts in front of an app (`large_client_header_buffers`,
`client_header_timeout`, `client_body_timeout`, `keepalive_timeout`, `limit_conn`); `deploy/nginx.conf`
sets them there too.
"""

from __future__ import annotations

import asyncio
import ipaddress
import json
from collections.abc import Callable
from typing import Any

import h11
from uvicorn.protocols.http.h11_impl import H11Protocol
from uvicorn.protocols.websockets.websockets_sansio_impl import WebSocketsSansIOProtocol
from websockets.protocol import State

from dotfight.server.errors import ApiError
from dotfight.server.pages.wire import FRAME_SINK_KEY
from dotfight.server.settings import Settings
from dotfight.server.socket_lag import SCOPE_KEY, SocketLag

try:
    from uvicorn.protocols.http.httptools_impl import HttpToolsProtocol
except ImportError:  # pragma: no cover - httptools is part of uvicorn[standard]
    HttpToolsProtocol = None  # type: ignore[assignment,misc]


def raw_error_response(error: ApiError) -> bytes:
    """Returns a whole HTTP/1.1 answer (closing the connection) carrying `error` in the API's shape."""
    body = json.dumps(error.to_json(), separators=(",", ":")).encode()
    reason = {
        400: "Bad Request",
        408: "Request Timeout",
        429: "Too Many Requests",
        431: "Request Header Fields Too Large",
    }
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
BODY_TOO_SLOW = raw_error_response(ApiError("request_timeout", "the request's body came too slowly"))


def too_many_connections(cap: int) -> bytes:
    """The answer to a connection beyond its peer's cap (429, the WebSocket cap's code)."""
    return raw_error_response(ApiError("too_many_sockets", f"this address has {cap} connections open"))


def proxy_test(forwarded_allow_ips: str) -> Callable[[str], bool]:
    """Returns a test of whether a peer's address is one of the proxies listed in `forwarded_allow_ips`
    (uvicorn's syntax: comma-separated addresses and networks, "*" for any).

    >>> trusted = proxy_test("127.0.0.1, 10.0.0.0/8")
    >>> trusted("127.0.0.1"), trusted("10.1.2.3"), trusted("127.0.0.2"), proxy_test("")("127.0.0.1")
    (True, True, False, False)
    """
    entries = {entry.strip() for entry in forwarded_allow_ips.split(",")} - {""}
    if "*" in entries:
        return lambda host: True
    networks: list[ipaddress.IPv4Network | ipaddress.IPv6Network] = []
    literals: set[str] = set()
    for entry in entries:
        try:
            networks.append(ipaddress.ip_network(entry, strict=False))  # an address: a network of one
        except ValueError:
            literals.add(entry)  # not an address (uvicorn compares those as they are written)

    def trusted(host: str) -> bool:
        if host in literals:
            return True
        if not networks:
            return False
        try:
            address = ipaddress.ip_address(host)
        except ValueError:
            return False
        return any(address in network for network in networks)

    return trusted


class PeerConnections:
    """Open HTTP connections per TCP peer address, against a cap; trusted proxies are not capped."""

    def __init__(self, cap: int, forwarded_allow_ips: str = "") -> None:
        self.cap = cap
        self.is_proxy = proxy_test(forwarded_allow_ips)
        self._open: dict[str, int] = {}

    def admit(self, host: str) -> bool:
        """Counts one more connection of `host`; False (counting nothing) when it is at its cap."""
        count = self._open.get(host, 0)
        if count >= self.cap:
            return False
        self._open[host] = count + 1
        return True

    def release(self, host: str) -> None:
        """Forgets one connection of `host` (counted by `admit`)."""
        count = self._open.pop(host, 0) - 1
        if count > 0:
            self._open[host] = count


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
    """What both guarded protocols share: the head timer, the body deadline, the connection caps and
    the JSON refusals.

    Mixed into uvicorn's protocol classes; the class attributes are set by `guarded_protocol`.
    """

    head_timeout: float = 10.0
    body_timeout: float = 10.0
    max_connections: int = 4096
    max_head_bytes: int = 16384
    peers: PeerConnections = PeerConnections(500)
    over_peer_cap: bytes = too_many_connections(500)

    limit_concurrency: int | None
    transport: asyncio.Transport
    loop: asyncio.AbstractEventLoop
    connections: set[Any]
    tasks: set[Any]
    app: Any
    client: tuple[str, int] | None
    cycle: Any
    _head_timer: asyncio.TimerHandle | None = None
    _head_bytes = 0
    _body_timer: asyncio.TimerHandle | None = None
    # The peer address this connection is counted under in `peers` (None: not counted).
    _peer: str | None = None

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

    def _admit_peer(self) -> bool:
        """Counts this new connection under its peer's cap; over it, refuses it at once (429, closed)
        and returns False. A connection not over TCP (no peer address) and a trusted proxy's are not
        counted."""
        host = self.client[0] if self.client else None
        if host is None or self.peers.is_proxy(host):
            return True
        if not self.peers.admit(host):
            # Refused before its request is read: waiting for its head would let the peer hold
            # connections past the cap for as long as the head timeout.
            self._refuse(self.over_peer_cap)
            return False
        self._peer = host
        return True

    def _leave_http(self) -> None:
        """Lets go of what this connection holds as an HTTP connection: its timers and its place under
        the peer cap (at its end, or when a WebSocket upgrade takes it over)."""
        self._disarm_head_timer()
        self._disarm_body_timer()
        if self._peer is not None:
            self.peers.release(self._peer)
            self._peer = None

    def _awaiting_head(self) -> bool:
        """Tells whether the bytes coming now belong to a request head."""
        raise NotImplementedError

    def _awaiting_body(self) -> bool:
        """Tells whether a request's head is in and the rest of its body is still to come."""
        raise NotImplementedError

    def _may_answer_now(self) -> bool:
        """Tells whether the request being read is the one being answered (not one queued behind an
        answer still being written)."""
        return True

    def _feed(self, data: bytes) -> None:
        """Hands bytes to uvicorn's parser (the protocol's own `data_received`)."""
        raise NotImplementedError

    def _watch_body(self) -> None:
        """Starts the body deadline when a request's body has begun to be awaited, and stops it when the
        body is whole: one deadline for the whole body, however it is dribbled."""
        if self._awaiting_body():
            if self._body_timer is None:
                self._body_timer = self.loop.call_later(self.body_timeout, self._body_overdue)
        else:
            self._disarm_body_timer()

    def _disarm_body_timer(self) -> None:
        if self._body_timer is not None:
            self._body_timer.cancel()
            self._body_timer = None

    def _body_overdue(self) -> None:
        self._body_timer = None
        if self.transport.is_closing() or not self._awaiting_body():
            return
        cycle = self.cycle
        if cycle is not None and not cycle.response_started and self._may_answer_now():
            self.transport.write(BODY_TOO_SLOW)
        if cycle is not None and not cycle.response_complete:
            # As if the client had gone (uvicorn does the same when it goes): the app's `receive` says
            # `http.disconnect` now, and whatever it answers is dropped.
            cycle.disconnected = True
            cycle.message_event.set()
        self.transport.close()

    def data_received(self, data: bytes) -> None:
        self._receive(data)
        self._watch_body()

    def _receive(self, data: bytes) -> None:
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
        """uvicorn's httptools protocol with a bounded request head, a head timeout, a body deadline and
        connection caps."""

        _in_head = True
        _in_body = False

        def _feed(self, data: bytes) -> None:
            HttpToolsProtocol.data_received(self, data)

        def connection_made(self, transport: asyncio.Transport) -> None:  # type: ignore[override]
            super().connection_made(transport)
            self._take_over_the_cap()
            self._in_head = True
            self._head_bytes = 0
            if self._admit_peer():
                self._arm_head_timer()

        def connection_lost(self, exc: Exception | None) -> None:
            self._leave_http()
            super().connection_lost(exc)

        def handle_websocket_upgrade(self) -> None:
            self._in_body = False
            self._leave_http()
            super().handle_websocket_upgrade()

        def _awaiting_head(self) -> bool:
            return self._in_head

        def _awaiting_body(self) -> bool:
            return self._in_body

        def _may_answer_now(self) -> bool:
            return not self.pipeline

        def on_message_begin(self) -> None:
            if not self._in_head:  # a kept-alive connection starts its next request
                self._in_head = True
                self._arm_head_timer()
            super().on_message_begin()

        def on_headers_complete(self) -> None:
            self._in_head = False
            self._in_body = True  # until on_message_complete, which comes at once for a bodiless request
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

        def on_message_complete(self) -> None:
            self._in_body = False
            super().on_message_complete()


class GuardedH11Protocol(_HeadGuard, H11Protocol):
    """uvicorn's h11 protocol with a bounded request head, a head timeout, a body deadline and
    connection caps."""

    def connection_made(self, transport: asyncio.Transport) -> None:  # type: ignore[override]
        super().connection_made(transport)
        self._take_over_the_cap()
        if self._admit_peer():
            self._arm_head_timer()

    def connection_lost(self, exc: Exception | None) -> None:
        self._leave_http()
        super().connection_lost(exc)

    def handle_websocket_upgrade(self, event: h11.Request) -> None:
        self._leave_http()
        super().handle_websocket_upgrade(event)

    def _awaiting_head(self) -> bool:
        return self.conn.their_state is h11.IDLE

    def _awaiting_body(self) -> bool:
        return self.conn.their_state is h11.SEND_BODY

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
        # Also run when an answer completes, for a request that was waiting behind it: its body is
        # watched from there too.
        if not self._over_capacity():
            super().handle_events()
        else:
            app, self.app = self.app, _unavailable
            try:
                super().handle_events()
            finally:
                self.app = app
        if not self.transport.is_closing():
            self._watch_body()


def guarded_protocol(settings: Settings) -> type[asyncio.Protocol]:
    """Returns the HTTP protocol class `dotfight serve` runs, with the settings' limits built in (one
    count of connections per peer for the process)."""
    use_h11 = settings.http_implementation == "h11" or (
        settings.http_implementation == "auto" and HttpToolsProtocol is None
    )
    cap = settings.http_max_connections_per_peer
    limits: dict[str, Any] = {
        "head_timeout": settings.http_head_timeout,
        "body_timeout": settings.http_body_timeout,
        "max_connections": settings.max_connections,
        "max_head_bytes": settings.http_max_head_bytes,
        "peers": PeerConnections(cap, settings.forwarded_allow_ips),
        "over_peer_cap": too_many_connections(cap),
    }
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
      generator's frame for the life of the connection, so its headers are emptied as well;
    - a frame serialised once for all a page's sockets written straight to the transport
      (`write_frame`, found in the scope under `FRAME_SINK_KEY`): a message to a page's sockets cost,
      per socket, a task, the ASGI `send` and websockets' framing of the same bytes again.

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
        self.scope[SCOPE_KEY] = SocketLag()  # type: ignore[literal-required]
        self.scope[FRAME_SINK_KEY] = self  # type: ignore[literal-required]
        if self.handshake_complete:  # refused by websockets itself (not a valid handshake)
            self.response = None  # type: ignore[assignment]

    def handle_pong(self, event: Any) -> None:
        # The keep-alive ping's round trip is the socket's lag sample (socket_lag.py): no client message.
        waiting = self.pending_ping_payload is not None
        super().handle_pong(event)
        lag = self.scope.get(SCOPE_KEY) if waiting and self.pending_ping_payload is None else None
        if isinstance(lag, SocketLag):
            lag.measured(self.last_ping_rtt)

    def write_frame(self, frame: bytes) -> bool:
        """Writes whole text frames serialised beforehand (`wire.text_frame`; several joined, as a held
        connection's are, go in one write) when the socket takes them now: accepted, open, not closing,
        writable, and with no extension (which would change a frame's bytes). Returns False, having
        written nothing, otherwise: the caller then sends the messages through the ASGI `send`, which
        waits for the socket to drain or refuses as uvicorn does."""
        conn = self.conn
        if (
            not self.handshake_complete
            or self.close_sent
            or self.disconnected
            or self.initial_response is not None
            or not self.writable.is_set()
            or conn.state is not State.OPEN
            or conn.expect_continuation_frame
            or conn.extensions
            or self.transport.is_closing()
        ):
            return False
        self.transport.write(frame)
        return True

    def connection_lost(self, exc: Exception | None) -> None:
        # The scope refers back to this protocol (`FRAME_SINK_KEY`): the cycle is broken at the end.
        super().connection_lost(exc)
        if getattr(self, "scope", None) is not None:
            self.scope.pop(FRAME_SINK_KEY, None)  # type: ignore[misc]

    def start_keepalive(self) -> None:
        # Called once, right after the accepting response was sent: the response is not needed again.
        self.response = None  # type: ignore[assignment]
        super().start_keepalive()
