"""The page socket: one client's live conversation with a page (PROTOCOL.md) — hello and catch-up,
actions with acks and their refusals as error messages, presence, and the flood guards. The route
(routes/ws.py) checks the handshake and hands the accepted socket here; the page authority decides every
action (its refusals turned into the API's by `errors.api_error`), and the page's room (`rooms/`) tells
every socket of the page what was committed.
"""

from __future__ import annotations

import asyncio
import logging
from typing import Any

from fastapi import WebSocket
from starlette.types import Receive

from dotfight.server.claims import answer_claim, is_claim
from dotfight.server.client_message import QuickAction, RefusedMessage, parse_client_message
from dotfight.server.deps import client_key
from dotfight.server.errors import REFUSALS, ApiError, api_error
from dotfight.server.limits import TokenBucket
from dotfight.server.pages.authority import Applied, Arrival, Seat
from dotfight.server.pages.wire import frame_sink_of
from dotfight.server.rooms import CLOSE_TOO_MANY_SOCKETS, Connection, events_message
from dotfight.server.schemas import ActionMessage, HelloMessage, SayMessage
from dotfight.server.services import Services
from dotfight.server.socket_lag import allowance_of

logger = logging.getLogger(__name__)

CLOSE_POLICY = 1008  # flood, refused hello, bad origin
CLOSE_TOO_BIG = 1009
CLOSE_TRY_LATER = 1013
CLOSE_PAGE_EXPIRED = 4410  # 4000 + HTTP 410 (CONTRACTS.md C5)
# A client further behind than this many actions gets the whole snapshot instead of the events.
MAX_CATCH_UP_ACTIONS = 200


def error_message(error: ApiError, move_id: str | None = None) -> dict[str, Any]:
    """Builds the `{type: "error", code, message, move_id?, reason?}` message (stale: with the snapshot)."""
    message: dict[str, Any] = {"type": "error", **error.error_body(), **error.extra}
    if move_id is not None:
        message["move_id"] = move_id
    return message


def refused_hello_close(error: ApiError) -> tuple[int, str]:
    """Returns the close code (and reason) after a refused hello: a database outage is worth retrying
    (1013 "try again later"), a full page is 4429, anything else is refused for good (1008)."""
    if error.code == "unavailable":
        return CLOSE_TRY_LATER, ""
    if error.code == "too_many_sockets":
        return CLOSE_TOO_MANY_SOCKETS, error.message
    if error.code == "page_expired":
        return CLOSE_PAGE_EXPIRED, error.message
    return CLOSE_POLICY, ""


class PageSocket:
    """One client's conversation with a page."""

    # One per open socket, for as long as the page is open on a phone: no dictionary of its own.
    __slots__ = (
        "_address",
        "_bucket",
        "_connection",
        "_greeted",
        "_hello_timer",
        "_joined",
        "_page_id",
        "_seat",
        "_services",
    )

    def __init__(self, services: Services, page_id: str, connection: Connection, address: str) -> None:
        self._services = services
        self._page_id = page_id
        self._connection = connection
        # The client's address (`deps.client_key`), whose action budget each action spends: one socket's
        # never changes, so it is read once, not per action.
        self._address = address
        self._seat: Seat | None = None
        self._joined = False
        self._greeted = False  # a readable hello arrived (it may still be refused)
        settings = services.settings
        self._bucket = TokenBucket(settings.ws_messages_per_second, settings.ws_message_burst)
        # A socket that never says hello would hold a connection for nothing: it is closed in time.
        self._hello_timer: asyncio.TimerHandle | None = asyncio.get_running_loop().call_later(
            settings.ws_hello_timeout, self._hello_overdue
        )

    def _stop_hello_timer(self) -> None:
        if self._hello_timer is not None:
            self._hello_timer.cancel()
            self._hello_timer = None

    def _hello_overdue(self) -> None:
        if self._greeted:
            return
        error = ApiError("bad_request", "no hello in time")
        self._connection.send_json(error_message(error))
        self._connection.close_soon(CLOSE_POLICY)

    async def serve(self, receive: Receive) -> None:
        """Reads messages (from the socket's ASGI `receive`) until the client leaves or is closed."""
        limit = self._services.settings.ws_max_message_bytes
        while True:
            message = await receive()
            # The action's arrival for its clock: taken as the frame is read, before any work on it.
            arrived_at = self._services.authority.now()
            if message["type"] == "websocket.disconnect":
                return
            text = message.get("text")
            if text is None:
                size = len(message.get("bytes") or b"")
            elif len(text) * 4 <= limit:  # UTF-8 takes at most 4 bytes a character: no need to encode
                size = len(text)
            else:
                size = len(text.encode("utf-8"))
            if size > limit:
                await self._connection.close_now(CLOSE_TOO_BIG)
                return
            if not self._bucket.take():
                await self._connection.close_now(CLOSE_POLICY)
                return
            if text is None:
                self._connection.send_json(error_message(ApiError("bad_request", "send JSON text frames")))
                continue
            try:
                parsed = parse_client_message(text)
            except RefusedMessage as refused:
                self._connection.send_json(error_message(refused.error))
                if refused.hello:  # like every refused hello: the socket is closed
                    self._connection.close_soon(CLOSE_POLICY)
                    return
                continue
            if isinstance(parsed, HelloMessage):
                if not await self._hello(parsed):
                    return
            elif isinstance(parsed, SayMessage):
                await self._say(parsed)
            else:
                await self._action(parsed, arrived_at)

    async def _hello(self, hello: HelloMessage) -> bool:
        self._greeted = True
        self._stop_hello_timer()  # not needed any more: the loop lets its timer go now, not at its time
        authority = self._services.authority
        rooms = self._services.rooms
        connection = self._connection
        try:
            seat = await authority.seat(self._page_id, hello.token) if hello.token else None
            # Holding the page's room, no commit reaches its sockets between what this client is told
            # and its joining them (one committed meanwhile waits in the room): it misses nothing and
            # hears nothing twice.
            async with rooms.entering(self._page_id) as room:
                remote = await rooms.remote_seats(room)
                page = await authority.page(self._page_id)
                await rooms.read_absence(room, page)  # a live page's first presence carries claim_at
                if rooms.page_full(self._page_id, connection):
                    raise ApiError("too_many_sockets", f"this page has {rooms.max_per_page} sockets open")
                # The page's sockets here first hear what was committed up to this version.
                await room.bring_up_to(page)
                version = page.state.version
                since = hello.version or 0
                if 1 <= since <= version <= since + MAX_CATCH_UP_ACTIONS and not page.over:
                    batches = await authority.events_since(self._page_id, since, version)
                    sent = (Applied.sent(page.state, since + 1 + n, batch) for n, batch in enumerate(batches))
                    caught_up = [event for one in sent for event in one.events]
                    connection.send(events_message(version, caught_up, page.clock_view()))
                else:
                    snapshot = page.public_snapshot()
                    label = seat.label if seat else None
                    connection.send_json({"type": "state", "snapshot": snapshot, "seat": label})
                self._seat = seat
                connection.seat = seat.label if seat else None
                # Joins (or, on a resync hello, updates its seat) and hears the presence.
                rooms.join(room, connection, page, remote)
                self._joined = True
        except REFUSALS as refusal:
            error = api_error(refusal)
            connection.send_json(error_message(error))
            connection.close_soon(*refused_hello_close(error))
            return False
        self._services.bots.wake(page)
        return True

    async def _action(self, message: ActionMessage | QuickAction, arrived_at: float) -> None:
        connection = self._connection
        if not self._joined:
            error = ApiError("bad_request", "say hello first")
            connection.send_json(error_message(error, message.move_id))
            return
        if self._seat is None:
            error = ApiError("bad_token", "this link can only watch")
            connection.send_json(error_message(error, message.move_id))
            return
        # The action's events (told to the page's sockets, this one too, once committed) and its ack
        # go out to this socket in one write.
        connection.hold()
        try:
            try:
                self._services.actions.spend(self._page_id, self._seat.label, self._address)
                if is_claim(message.action):
                    applied = await answer_claim(
                        self._services, self._page_id, self._seat, message.version, message.move_id
                    )
                else:
                    arrival = Arrival(arrived_at, allowance_of(connection.websocket.scope))
                    applied = await self._services.authority.act(
                        self._page_id, self._seat, message.action, message.version, message.move_id, arrival
                    )
            except REFUSALS as refusal:
                connection.send_json(error_message(api_error(refusal), message.move_id))
                return
            ack: dict[str, Any] = {"type": "ack", "move_id": message.move_id, "version": applied.version}
            if applied.duplicate:
                ack["duplicate"] = True
            connection.send_json(ack)
        finally:
            connection.release()

    async def _say(self, message: SayMessage) -> None:
        """A phrase for the page (issue 19): every socket of it hears `said`; a refusal is answered here."""
        connection = self._connection
        # Like an action: a phrase needs a hello first, and a seat (a watcher says nothing).
        if not self._joined:
            connection.send_json(error_message(ApiError("bad_request", "say hello first")))
            return
        if self._seat is None:
            connection.send_json(error_message(ApiError("bad_token", "only a seat may say something")))
            return
        try:
            await self._services.offers.say(self._page_id, self._seat, message.phrase)
        except REFUSALS as refusal:
            connection.send_json(error_message(api_error(refusal)))

    async def leave(self) -> None:
        """Removes the client from the page and tells the others."""
        self._stop_hello_timer()
        if self._joined:
            self._services.rooms.leave(self._page_id, self._connection)
        await self._connection.finish()


async def serve_page_socket(
    services: Services, websocket: WebSocket, page_id: str, receive: Receive | None = None
) -> None:
    """Serves one accepted WebSocket of a page until it leaves (PROTOCOL.md: hello, state/events, action,
    ack, presence): the sockets per address are capped; an unexpected failure closes it with 1011.

    Messages are read from the ASGI `receive` itself when given (the page socket's entrance gives it):
    Starlette's `WebSocket.receive` only tracks the client's state, which nothing reads once the socket is
    accepted (reading ends at the disconnect), and it is one more suspended frame for every idle socket
    and one more call for every message."""
    connection = Connection(websocket, services.settings.ws_send_queue, frame_sink_of(websocket.scope))
    address = client_key(websocket)
    if not services.rooms.admit(address):
        limit = services.rooms.max_per_address
        error = ApiError("too_many_sockets", f"this address has {limit} sockets open")
        connection.send_json(error_message(error))
        connection.close_soon(CLOSE_TOO_MANY_SOCKETS, error.message)
        await connection.finish()
        return
    socket = PageSocket(services, page_id, connection, address)
    try:
        await socket.serve(receive or websocket.receive)
    except Exception:
        logger.exception("page %s: a WebSocket failed", page_id)
        await connection.close_now(1011)
    finally:
        services.rooms.release(address)
        await socket.leave()
