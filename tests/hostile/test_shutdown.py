"""Shutdown closes every WebSocket with the close code docs/SERVER.md names, promptly."""

from __future__ import annotations

import asyncio
import json
import re
import signal
import time
from pathlib import Path

from websockets.asyncio.client import ClientConnection, connect

from tests.hostile.conftest import StartServer

SERVER_MD = Path(__file__).resolve().parents[2] / "docs" / "SERVER.md"


def documented_shutdown_code() -> int:
    match = re.search(r"(\d{4}) server shutdown", SERVER_MD.read_text())
    assert match, "docs/SERVER.md names no close code for a server shutdown"
    return int(match.group(1))


def test_shutdown_closes_sockets_with_the_documented_code(start_server: StartServer) -> None:
    server = start_server()
    created = server.http.post("/api/pages", json={"mode": "live"}).json()
    tokens = [created["seats"]["blue"], created["seats"]["red"], None]

    async def scenario() -> list[int | None]:
        sockets: list[ClientConnection] = []
        for token in tokens:
            ws = await connect(server.ws_url(created["id"]))
            await ws.send(json.dumps({"type": "hello", "token": token, "version": None}))
            await asyncio.wait_for(ws.recv(), timeout=10)  # the state: it has joined
            sockets.append(ws)
        assert server.process is not None
        server.process.send_signal(signal.SIGTERM)
        started = time.monotonic()
        await asyncio.gather(*(asyncio.wait_for(ws.wait_closed(), timeout=10) for ws in sockets))
        assert time.monotonic() - started < 5
        return [ws.close_code for ws in sockets]

    codes = asyncio.run(scenario())
    assert codes == [documented_shutdown_code()] * len(tokens)
    assert server.process is not None
    # uvicorn exits by re-raising the signal it caught, after its graceful shutdown.
    assert server.process.wait(10) in (0, -signal.SIGTERM)
