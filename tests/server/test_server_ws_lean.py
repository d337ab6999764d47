"""The page socket's lean path (issue 12): uvicorn's WebSocket protocol holding less per open socket,
and its receive queue and writable flag, driven as uvicorn drives them."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest
from fastapi.testclient import TestClient
from starlette.websockets import WebSocketDisconnect
from uvicorn.config import Config
from uvicorn.server import ServerState
from websockets.frames import Frame, Opcode

from dotfight.server.pages.wire import frame_sink_of, text_frame
from dotfight.server.transport import LeanWebSocketProtocol, _Inbox, _Writable

# As uvicorn's HTTP protocol hands an upgrade on: the request line and the headers, names in lower case.
HANDSHAKE = (
    b"GET /api/pages/abc/ws HTTP/1.1\r\nhost: 127.0.0.1:8000\r\nupgrade: websocket\r\n"
    b"connection: Upgrade\r\nsec-websocket-key: dGhlIHNhbXBsZSBub25jZQ==\r\nsec-websocket-version: 13\r\n"
    b"origin: http://127.0.0.1:8000\r\nuser-agent: a phone\r\n\r\n"
)


class FakeTransport:
    """What uvicorn's WebSocket protocol asks of an asyncio transport, recording what it writes."""

    def __init__(self) -> None:
        self.written = bytearray()
        self.closed = False

    def get_extra_info(self, name: str, default: Any = None) -> Any:
        return {"sockname": ("127.0.0.1", 8000), "peername": ("127.0.0.1", 50000)}.get(name, default)

    def write(self, data: bytes) -> None:
        self.written += data

    def close(self) -> None:
        self.closed = True

    def is_closing(self) -> bool:
        return self.closed

    def pause_reading(self) -> None:
        pass

    def resume_reading(self) -> None:
        pass


async def test_an_open_socket_keeps_no_dictionary_and_no_handshake() -> None:
    heard: list[Any] = []
    scopes: list[dict[str, Any]] = []

    async def app(scope: Any, receive: Any, send: Any) -> None:
        scopes.append(scope)
        assert (await receive())["type"] == "websocket.connect"
        await send({"type": "websocket.accept"})
        heard.append(await receive())
        await send({"type": "websocket.send", "text": "back"})
        heard.append(await receive())

    config = Config(app=app, ws=LeanWebSocketProtocol, ws_ping_interval=None, log_level="warning")
    config.load()
    protocol = LeanWebSocketProtocol(config=config, server_state=ServerState(), app_state={})
    transport = FakeTransport()
    protocol.connection_made(transport)  # type: ignore[arg-type]
    protocol.data_received(HANDSHAKE)
    await asyncio.sleep(0.05)
    assert bytes(transport.written).startswith(b"HTTP/1.1 101")
    # The app saw the handshake's headers; the protocol let go of the request and the response.
    assert (b"user-agent", b"a phone") in scopes[0]["headers"]
    assert protocol.request is None and protocol.response is None
    assert vars(protocol) == {}  # every attribute uvicorn sets is in a slot
    transport.written.clear()
    protocol.data_received(Frame(Opcode.TEXT, b"hello").serialize(mask=True))
    await asyncio.sleep(0.05)
    assert heard == [{"type": "websocket.receive", "text": "hello"}]
    assert b"back" in transport.written
    protocol.connection_lost(None)
    await asyncio.sleep(0.05)
    assert heard[-1] == {"type": "websocket.disconnect", "code": 1005}


async def test_the_inbox_hands_out_in_order_and_wakes_its_reader() -> None:
    inbox = _Inbox()
    assert inbox.empty()
    inbox.put_nowait(1)
    inbox.put_nowait(2)
    assert not inbox.empty() and inbox.qsize() == 2
    assert [await inbox.get(), await inbox.get()] == [1, 2]
    reader = asyncio.create_task(inbox.get())
    await asyncio.sleep(0)
    inbox.put_nowait(3)
    assert await asyncio.wait_for(reader, 1) == 3
    assert inbox.empty()


async def test_an_item_woken_for_a_cancelled_reader_goes_to_the_next() -> None:
    inbox = _Inbox()
    first = asyncio.create_task(inbox.get())
    second = asyncio.create_task(inbox.get())
    await asyncio.sleep(0)
    inbox.put_nowait("move")
    first.cancel()  # woken, but cancelled before it ran
    assert await asyncio.wait_for(second, 1) == "move"
    with pytest.raises(asyncio.CancelledError):
        await first


async def test_the_writable_flag_holds_a_sender_until_the_transport_drains() -> None:
    writable = _Writable()
    assert writable.is_set() and await writable.wait()
    writable.clear()
    waiting = asyncio.create_task(writable.wait())
    await asyncio.sleep(0.01)
    assert not waiting.done()
    writable.set()
    assert await asyncio.wait_for(waiting, 1)
    writable.clear()
    cancelled = asyncio.create_task(writable.wait())
    await asyncio.sleep(0.01)
    cancelled.cancel()
    with pytest.raises(asyncio.CancelledError):
        await cancelled
    writable.set()
    assert writable.is_set()


def test_the_page_socket_entrance_refuses_and_serves_as_the_route_did(client: TestClient) -> None:
    page = client.post("/api/pages", json={"preset": "quick", "mode": "live"}).json()
    with client.websocket_connect(f"/api/pages/{page['id']}/ws") as socket:  # served in front of the router
        socket.send_json({"type": "hello", "version": 0})
        assert socket.receive_json()["type"] == "state"
    # refused before accepting
    with (
        pytest.raises(WebSocketDisconnect) as bad_id,
        client.websocket_connect("/api/pages/not%20an%20id/ws"),
    ):
        pass
    assert bad_id.value.code == 1008
    foreign = {"origin": "http://evil.example"}
    path = f"/api/pages/{page['id']}/ws"
    with pytest.raises(WebSocketDisconnect) as bad_origin, client.websocket_connect(path, headers=foreign):
        pass
    assert bad_origin.value.code == 1008
    # any other WebSocket path still meets FastAPI's router
    with pytest.raises(WebSocketDisconnect), client.websocket_connect(f"/api/pages/{page['id']}/other"):
        pass
    with client.websocket_connect("/api/pages/nosuchpage/ws") as unknown:
        unknown.send_json({"type": "hello", "version": 0})
        assert unknown.receive_json()["code"] == "not_found"


async def test_a_frame_made_once_is_written_as_websockets_writes_it_while_the_socket_takes_it() -> None:
    scopes: list[dict[str, Any]] = []
    closing = asyncio.Event()

    async def app(scope: Any, receive: Any, send: Any) -> None:
        scopes.append(scope)
        assert (await receive())["type"] == "websocket.connect"
        await send({"type": "websocket.accept"})
        await send({"type": "websocket.send", "text": '{"type":"ack"}'})
        await closing.wait()
        await send({"type": "websocket.close", "code": 1000})
        await receive()

    config = Config(app=app, ws=LeanWebSocketProtocol, ws_ping_interval=None, log_level="warning")
    config.load()
    protocol = LeanWebSocketProtocol(config=config, server_state=ServerState(), app_state={})
    transport = FakeTransport()
    protocol.connection_made(transport)  # type: ignore[arg-type]
    assert protocol.write_frame(text_frame("early")) is False  # no handshake yet
    protocol.data_received(HANDSHAKE)
    await asyncio.sleep(0.05)
    assert frame_sink_of(scopes[0]) is protocol
    head, _, sent_by_websockets = bytes(transport.written).partition(b"\r\n\r\n")
    assert head.startswith(b"HTTP/1.1 101")
    transport.written.clear()
    # The same bytes websockets framed for the ASGI send, written at once.
    assert protocol.write_frame(text_frame('{"type":"ack"}')) is True
    assert bytes(transport.written) == sent_by_websockets
    protocol.pause_writing()  # the transport's buffer is full: the caller must queue and wait
    assert protocol.write_frame(text_frame("later")) is False
    protocol.resume_writing()
    assert protocol.write_frame(text_frame("later")) is True
    closing.set()
    await asyncio.sleep(0.05)
    assert protocol.close_sent
    written = bytes(transport.written)
    assert protocol.write_frame(text_frame("after the close")) is False
    assert bytes(transport.written) == written
    protocol.connection_lost(None)
    await asyncio.sleep(0.05)
    assert frame_sink_of(scopes[0]) is None  # the scope no longer holds the protocol
