"""Helpers of the server tests: the simple player with a turn cap, and a WebSocket client of one page.
The server process itself is tests.support.server_process.ServerProcess."""

from __future__ import annotations

import asyncio
import json
from typing import Any

from tests.support.players import nearest_snipe_action

# Turns after which the simple player gives up (resigns) so that no test can run forever.
MAX_ACTIONS = 1500


def simple_action(snapshot: dict[str, Any]) -> dict[str, Any]:
    """Picks a legal action for the side to act (see `nearest_snipe_action`), resigning at MAX_ACTIONS."""
    return nearest_snipe_action(snapshot, resign_from_version=MAX_ACTIONS)


def as_stored(events: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Events as the log stores them: without the `options` the server adds to `turn` events it sends."""
    return [{key: value for key, value in event.items() if key != "options"} for event in events]


class SocketClient:
    """A WebSocket client of one page that reads messages in order, setting presence aside."""

    def __init__(self, connection: Any) -> None:
        self.connection = connection
        self.presence: list[dict[str, Any]] = []

    async def send(self, message: dict[str, Any]) -> None:
        await self.connection.send(json.dumps(message))

    async def receive(self, timeout: float = 10.0) -> dict[str, Any]:
        """Returns the next message that is not a presence update."""
        while True:
            message: dict[str, Any] = json.loads(await asyncio.wait_for(self.connection.recv(), timeout))
            if message["type"] != "presence":
                return message
            self.presence.append(message)

    async def receive_presence(self, timeout: float = 10.0) -> dict[str, Any]:
        """Returns the next presence update (any other message on the way is a test failure)."""
        if self.presence:
            return self.presence.pop(0)
        message: dict[str, Any] = json.loads(await asyncio.wait_for(self.connection.recv(), timeout))
        assert message["type"] == "presence", message
        return message

    async def hello(self, token: str | None, version: int | None = None) -> dict[str, Any]:
        body: dict[str, Any] = {"type": "hello", "version": version}
        if token is not None:
            body["token"] = token
        await self.send(body)
        return await self.receive()

    async def act(self, action: dict[str, Any], version: int, move_id: str) -> None:
        await self.send({"type": "action", "action": action, "version": version, "move_id": move_id})
