"""A page socket's messages written at once while nothing waits before them and the socket takes bytes,
framed once for all the sockets of a page, queued in order behind anything waiting, and the slow socket's
limit as before."""

from __future__ import annotations

import asyncio
import json
import time
from collections.abc import Callable
from typing import Any

from fastapi.testclient import TestClient
from starlette.websockets import WebSocketState
from websockets.frames import Frame, Opcode

from dotfight.server.app import create_app
from dotfight.server.pages.wire import FRAME_SINK_KEY, text_frame
from dotfight.server.rooms import Connection
from dotfight.server.rooms.connection import CLOSE_TOO_SLOW
from dotfight.server.rooms.room import Room
from dotfight.server.settings import Settings


def texts_of(frames: bytes) -> list[str]:
    """The texts of the unmasked text frames written in one go (7- and 16-bit lengths, as the tests')."""
    texts = []
    while frames:
        assert frames[0] == 0x80 | Opcode.TEXT.value
        length, start = frames[1], 2
        if length == 126:
            length, start = int.from_bytes(frames[2:4], "big"), 4
        texts.append(frames[start : start + length].decode())
        frames = frames[start + length :]
    return texts


class Phone:
    """A socket taking frames at once while `open`, and ASGI sends (queued messages) always; what
    reaches it, in order, is `heard`."""

    application_state = WebSocketState.CONNECTED

    def __init__(self) -> None:
        self.open = True
        self.heard: list[Any] = []
        self.frames: list[bytes] = []
        self.closed_with: int | None = None

    def write_frame(self, frame: bytes) -> bool:
        if not self.open:
            return False
        self.frames.append(frame)
        self.heard += [json.loads(text) for text in texts_of(frame)]
        return True

    async def send_text(self, text: str) -> None:
        self.heard.append(json.loads(text))

    async def close(self, code: int, reason: str = "") -> None:
        self.closed_with = code


def connect(phone: Phone, queue_size: int = 8) -> Connection:
    return Connection(phone, queue_size, sink=phone)  # type: ignore[arg-type]


async def test_a_message_is_written_at_once_while_the_socket_takes_it() -> None:
    phone = Phone()
    connection = connect(phone)
    connection.send_json({"n": 1})
    connection.send('{"n":2}')
    assert phone.heard == [{"n": 1}, {"n": 2}]  # in the caller's turn: no task, no await
    assert phone.frames == [text_frame('{"n":1}'), text_frame('{"n":2}')]


async def test_a_message_waits_behind_what_is_queued_and_the_order_holds() -> None:
    phone = Phone()
    connection = connect(phone)
    phone.open = False  # the transport's buffer is full
    connection.send('{"n":1}')
    phone.open = True
    connection.send('{"n":2}')  # the socket would take it, but {"n":1} waits: it goes behind
    connection.send('{"n":3}')
    assert phone.heard == []
    await asyncio.sleep(0)
    await asyncio.sleep(0)
    assert phone.heard == [{"n": 1}, {"n": 2}, {"n": 3}]
    assert phone.frames == []
    connection.send('{"n":4}')  # nothing waits any more: written at once again
    assert phone.heard[-1] == {"n": 4} and phone.frames == [text_frame('{"n":4}')]


async def test_a_socket_that_takes_nothing_is_still_dropped_when_its_queue_fills() -> None:
    phone = Phone()
    phone.open = False
    connection = connect(phone, queue_size=2)
    for n in range(3):
        connection.send(json.dumps({"n": n}))
    assert connection.close_code == CLOSE_TOO_SLOW
    await connection.finish()
    assert phone.closed_with == CLOSE_TOO_SLOW


async def test_a_broadcast_is_framed_once_for_every_socket_of_the_page() -> None:
    room = Room("page0001", None, 0.01, lambda page_id, seats: None)  # type: ignore[arg-type]
    phones = [Phone() for _ in range(3)]
    for phone in phones:
        room.connections[connect(phone)] = None
    room.broadcast('{"type":"events","version":1,"events":[]}')
    frames = [phone.frames[0] for phone in phones]
    assert frames[0] == text_frame('{"type":"events","version":1,"events":[]}')
    assert all(frame is frames[0] for frame in frames)  # one bytes object, not one a socket


def test_a_text_frame_is_what_websockets_makes_at_every_length_encoding() -> None:
    # Each side of the 7-bit, 16-bit and 64-bit lengths (RFC 6455 5.2), and text that is not ASCII (the
    # length is the UTF-8 bytes', not the characters').
    for text in ["", "a" * 125, "a" * 126, "é" * 63, "é" * 64, "a" * 65535, "a" * 65536, "€" * 30000]:
        made = Frame(Opcode.TEXT, text.encode()).serialize(mask=False, extensions=[])
        assert text_frame(text) == made, len(text.encode())


async def test_what_a_held_connection_is_sent_goes_out_in_one_write_in_order() -> None:
    # The socket's own action: its events (broadcast to the page) and its ack, one write (one system
    # call, one wake-up of the phone) instead of two.
    phone = Phone()
    connection = connect(phone)
    connection.hold()
    connection.send('{"type":"events","version":1}', text_frame('{"type":"events","version":1}'))
    connection.send_json({"type": "ack", "version": 1})
    assert phone.frames == []  # kept until the action is answered
    connection.release()
    assert phone.frames == [
        text_frame('{"type":"events","version":1}') + text_frame('{"type":"ack","version":1}')
    ]
    connection.send('{"n":3}')  # released: written at once again, on its own
    assert phone.frames[-1] == text_frame('{"n":3}')


async def test_one_held_message_is_written_as_it_would_have_been() -> None:
    phone = Phone()
    connection = connect(phone)
    connection.hold()
    connection.send_json({"type": "error", "code": "stale_version"})
    connection.release()
    assert phone.frames == [text_frame('{"type":"error","code":"stale_version"}')]
    connection.release()  # nothing held: nothing more
    assert len(phone.frames) == 1


async def test_held_messages_the_socket_cannot_take_are_queued_in_order() -> None:
    phone = Phone()
    connection = connect(phone)
    connection.hold()
    connection.send('{"n":1}')
    connection.send('{"n":2}')
    phone.open = False  # the transport's buffer filled meanwhile
    connection.release()
    phone.open = True
    connection.send('{"n":3}')  # behind the two queued
    await asyncio.sleep(0)
    await asyncio.sleep(0)
    assert phone.heard == [{"n": 1}, {"n": 2}, {"n": 3}]
    assert phone.frames == []


async def test_a_held_connection_closed_soon_sends_what_it_kept_first() -> None:
    phone = Phone()
    connection = connect(phone)
    connection.hold()
    connection.send_json({"type": "error", "code": "bad_request"})
    connection.close_soon(1008)
    connection.release()  # the close released it already
    await connection.finish()
    assert phone.heard == [{"type": "error", "code": "bad_request"}]
    assert phone.closed_with == 1008


async def test_a_held_connection_closed_now_drops_what_it_kept() -> None:
    phone = Phone()
    connection = connect(phone)
    connection.hold()
    connection.send('{"n":1}')
    await connection.close_now(1013)
    connection.release()
    assert phone.heard == [] and phone.closed_with == 1013


def test_a_sockets_own_action_reaches_it_as_events_and_ack_in_one_write(
    make_settings: Callable[..., Settings],
) -> None:
    # The app served with a frame sink in every socket's scope, as `LeanWebSocketProtocol` puts itself
    # there under uvicorn: each call is one write to the socket's transport.
    writes: list[list[Any]] = []

    class Transport:
        def write_frame(self, frame: bytes) -> bool:
            writes.append([json.loads(text) for text in texts_of(frame)])
            return True

    app = create_app(make_settings())

    async def with_a_sink(scope: Any, receive: Any, send: Any) -> None:
        if scope["type"] == "websocket":
            scope[FRAME_SINK_KEY] = Transport()
        await app(scope, receive, send)

    def written(count: int) -> None:
        deadline = time.monotonic() + 10
        while len(writes) < count and time.monotonic() < deadline:
            time.sleep(0.01)

    with TestClient(with_a_sink) as client:
        created = client.post("/api/pages", json={"preset": "quick", "mode": "live"}).json()
        with client.websocket_connect(f"/api/pages/{created['id']}/ws") as socket:
            socket.send_json({"type": "hello", "token": created["seats"]["blue"], "version": 0})
            written(2)  # the state, then the presence
            assert [message["type"] for write in writes for message in write] == ["state", "presence"]
            before = len(writes)
            action = {"type": "action", "action": {"type": "quick_setup"}, "version": 0, "move_id": "m1"}
            socket.send_json(action)
            written(before + 1)
            time.sleep(0.2)  # anything else the action would write comes now (a presence may follow)
            of_the_action = [
                [message["type"] for message in write if message["type"] in ("events", "ack")]
                for write in writes[before:]
            ]
            assert [types for types in of_the_action if types] == [["events", "ack"]]  # one write
            events, ack = writes[before]
            assert events["type"] == "events" and events["version"] == 1
            assert ack == {"type": "ack", "move_id": "m1", "version": 1}
