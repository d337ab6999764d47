"""Presence is O(sockets): watchers arriving on a page cause no presence broadcast (each is told once),
a seat arriving or leaving causes one; sockets are capped per page and per address, with close 4429."""

from __future__ import annotations

import asyncio
import json
from typing import Any

from websockets.asyncio.client import ClientConnection, connect
from websockets.exceptions import ConnectionClosed

from tests.hostile.conftest import StartServer
from tests.support.server_process import ServerProcess

WATCHERS = 300


async def hello(ws: ClientConnection, token: str | None = None) -> None:
    await ws.send(json.dumps({"type": "hello", "token": token, "version": None}))


async def drain(ws: ClientConnection, seconds: float) -> list[dict[str, Any]]:
    """Every message that arrives within `seconds`."""
    messages: list[dict[str, Any]] = []
    loop = asyncio.get_running_loop()
    deadline = loop.time() + seconds
    while (left := deadline - loop.time()) > 0:
        try:
            messages.append(json.loads(await asyncio.wait_for(ws.recv(), timeout=left)))
        except (TimeoutError, ConnectionClosed):
            break
    return messages


def presences(messages: list[dict[str, Any]]) -> list[tuple[bool, bool]]:
    return [(m["blue"], m["red"]) for m in messages if m["type"] == "presence"]


def live_page(server: ServerProcess) -> dict[str, Any]:
    created: dict[str, Any] = server.http.post("/api/pages", json={"mode": "live"}).json()
    return created


def test_watchers_joining_cause_no_presence_storm(start_server: StartServer) -> None:
    server = start_server(extra_env={"DOTFIGHT_WS_MAX_SOCKETS_PER_ADDRESS": "1000"})
    created = live_page(server)
    url = server.ws_url(created["id"])

    async def scenario() -> None:
        watchers: list[ClientConnection] = []
        try:
            for _ in range(WATCHERS // 50):
                batch = await asyncio.gather(*(connect(url) for _ in range(50)))
                await asyncio.gather(*(hello(ws) for ws in batch))
                watchers += batch
            received = await asyncio.gather(*(drain(ws, 3.0) for ws in watchers))
            # Each watcher: its state and one presence (nobody is here). Today: one presence per later
            # joiner as well, 45,150 presence messages for 300 watchers.
            total = sum(len(presences(messages)) for messages in received)
            assert total == WATCHERS, f"{total} presence messages for {WATCHERS} watchers"
            assert all(presences(messages) == [(False, False)] for messages in received)
            # Blue arrives: every watcher hears it once; blue leaves: once more.
            async with connect(url) as blue:
                await hello(blue, created["seats"]["blue"])
                assert presences(await drain(blue, 1.0))[-1] == (True, False)
                heard = await asyncio.gather(*(drain(ws, 2.0) for ws in watchers))
                assert all(presences(messages) == [(True, False)] for messages in heard)
            heard = await asyncio.gather(*(drain(ws, 2.0) for ws in watchers))
            assert all(presences(messages) == [(False, False)] for messages in heard)
            # A burst of seat sockets coming and going is gathered: far fewer messages than changes.
            flaps = []
            for _ in range(10):
                ws = await connect(url)
                await hello(ws, created["seats"]["red"])
                flaps.append(ws)
            for ws in flaps:
                await ws.close()
            heard = await asyncio.gather(*(drain(ws, 2.0) for ws in watchers[:20]))
            assert all(len(presences(messages)) <= 4 for messages in heard)
            # Red came and went within one gathering: nothing or red's arrival and leaving, ending absent.
            assert all(presences(messages)[-1:] in ([], [(False, False)]) for messages in heard)
        finally:
            await asyncio.gather(*(ws.close() for ws in watchers))

    asyncio.run(scenario())


def test_sockets_are_capped_per_page_and_per_address_with_4429(start_server: StartServer) -> None:
    server = start_server(
        extra_env={"DOTFIGHT_WS_MAX_SOCKETS_PER_PAGE": "5", "DOTFIGHT_WS_MAX_SOCKETS_PER_ADDRESS": "8"}
    )
    first, second = live_page(server), live_page(server)

    async def scenario() -> None:
        on_first = [await connect(server.ws_url(first["id"])) for _ in range(5)]
        for ws in on_first:
            await hello(ws)
            await drain(ws, 0.3)
        extra = await connect(server.ws_url(first["id"]))
        await hello(extra)
        messages = await drain(extra, 2.0)
        assert messages[0]["type"] == "error"
        assert messages[0]["code"] == "too_many_sockets"
        assert "page" in messages[0]["message"]
        await asyncio.wait_for(extra.wait_closed(), 5)
        assert extra.close_code == 4429
        # Three more on another page fill the address (5 + 3 = 8); the ninth is refused at once.
        on_second = [await connect(server.ws_url(second["id"])) for _ in range(3)]
        ninth = await connect(server.ws_url(second["id"]))
        messages = await drain(ninth, 2.0)
        assert messages[0]["code"] == "too_many_sockets"
        assert "address" in messages[0]["message"]
        await asyncio.wait_for(ninth.wait_closed(), 5)
        assert ninth.close_code == 4429
        # Room again once a socket leaves.
        await on_first[0].close()
        await asyncio.sleep(0.3)
        again = await connect(server.ws_url(first["id"]))
        await hello(again)
        assert [m["type"] for m in await drain(again, 1.0)][:2] == ["state", "presence"]
        for ws in [*on_first, *on_second, again]:
            await ws.close()

    asyncio.run(scenario())
