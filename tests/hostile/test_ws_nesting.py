"""Deeply nested JSON on the WebSocket is a `bad_request` error frame (as on HTTP), not a crash: no
traceback in the log, no 1011 close, and the socket goes on serving."""

from __future__ import annotations

import asyncio
import json
from typing import Any

from websockets.asyncio.client import connect

from tests.hostile.conftest import StartServer

DEPTH = 1500  # a 3 KB frame, well under the 8 KB frame limit


async def receive_json(ws: Any) -> dict[str, Any]:
    message: dict[str, Any] = json.loads(await asyncio.wait_for(ws.recv(), timeout=10))
    return message


async def next_of_type(ws: Any, kind: str) -> dict[str, Any]:
    for _ in range(20):
        message = await receive_json(ws)
        if message["type"] == kind:
            return message
    raise AssertionError(f"no {kind} message")


def test_deeply_nested_frames_are_refused_as_bad_request(start_server: StartServer) -> None:
    server = start_server()
    created = server.http.post("/api/pages", json={"mode": "live"}).json()
    token = created["seats"]["blue"]
    frames = [
        "[" * DEPTH + "]" * DEPTH,
        '{"a":' * (DEPTH // 2) + "1" + "}" * (DEPTH // 2),
        '{"type":"action","move_id":"m1","version":0,"action":{"x":' + "[" * DEPTH + "]" * DEPTH + "}}",
        '{"type":"hello","token":' + "[" * DEPTH + "]" * DEPTH + "}",
    ]

    async def scenario() -> None:
        async with connect(server.ws_url(created["id"])) as ws:
            await ws.send(json.dumps({"type": "hello", "token": token, "version": None}))
            assert (await next_of_type(ws, "state"))["seat"] == "blue"
            for frame in frames:
                assert len(frame) < 8192
                await ws.send(frame)
                error = await next_of_type(ws, "error")
                assert error["code"] == "bad_request"
            # The socket still serves: a resync hello is answered.
            await ws.send(json.dumps({"type": "hello", "token": token, "version": None}))
            assert (await next_of_type(ws, "state"))["seat"] == "blue"

    asyncio.run(scenario())
    log = server.log_text()
    assert "RecursionError" not in log
    assert "Traceback" not in log
    # The HTTP route answers the same frame the same way.
    answer = server.http.post(
        f"/api/pages/{created['id']}/actions",
        content=frames[2],
        headers={"Authorization": f"Bearer {token}", "Content-Type": "application/json"},
    )
    assert answer.status_code == 400
    assert answer.json()["error"]["code"] == "bad_request"
