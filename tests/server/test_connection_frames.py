"""A page socket's messages written at once while nothing waits before them and the socket takes bytes,
framed once for all the sockets of a page, queued in order behind anything waiting, and the slow socket's
limit as before."""

from __future__ import annotations

import asyncio
import json
from typing import Any

from starlette.websockets import WebSocketState
from websockets.frames import Frame, Opcode

from dotfight.server.pages.wire import text_frame
from dotfight.server.rooms import Connection
from dotfight.server.rooms.connection import CLOSE_TOO_SLOW
from dotfight.server.rooms.room import Room


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
        self.heard.append(json.loads(Frame(frame[0] & 0x0F, frame[2:]).data))  # type: ignore[arg-type]
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
