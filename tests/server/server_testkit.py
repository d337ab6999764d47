"""Helpers of the server tests: a simple player that picks legal actions from a snapshot, and a server
process started on loopback."""

from __future__ import annotations

import asyncio
import json
import math
import os
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import httpx

REPO_ROOT = Path(__file__).resolve().parents[2]
# Turns after which the simple player gives up (resigns) so that no test can run forever.
MAX_ACTIONS = 1500


def simple_action(snapshot: dict[str, Any]) -> dict[str, Any]:
    """Picks a legal action for the side to act: quick setup, accept the jotting, then full-power snipes
    from the soldier nearest to an enemy at that enemy."""
    phase = snapshot["phase"]
    if phase == "bases":
        return {"type": "quick_setup"}
    if phase == "positioning":
        return {"type": "ready"}
    if snapshot["version"] >= MAX_ACTIONS:
        return {"type": "resign"}
    side = snapshot["side_to_act"]
    turn = snapshot["turn"]
    if turn.get("chain"):
        return {"type": "stop"}
    living = [soldier for soldier in snapshot["soldiers"] if soldier["alive"]]
    shooters = [s for s in living if s["side"] == side and not s["on_road"]]
    targets = [s for s in living if s["side"] != side]
    shooter, target = min(
        ((a, b) for a in shooters for b in targets),
        key=lambda pair: math.hypot(pair[0]["x"] - pair[1]["x"], pair[0]["y"] - pair[1]["y"]),
    )
    dx, dy = target["x"] - shooter["x"], target["y"] - shooter["y"]
    length = math.hypot(dx, dy) or 1.0
    pull = float(snapshot["rules"]["pull_max"])
    return {
        "type": "flick",
        "soldier": shooter["id"],
        "kind": "snipe",
        "vector": [dx / length * pull, dy / length * pull],
    }


def free_port() -> int:
    """Returns a TCP port free on loopback right now."""
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port: int = probe.getsockname()[1]
        return port


class ServerProcess:
    """`python3 -m dotfight.cli serve` on loopback, on an SQLite file, as a subprocess."""

    def __init__(self, workdir: Path, extra_env: dict[str, str] | None = None) -> None:
        self.database = workdir / "pages.sqlite3"
        self.log_path = workdir / "server.log"
        self.port = free_port()
        self.extra_env = extra_env or {}
        self.process: subprocess.Popen[bytes] | None = None
        # One client for all requests: a fresh httpx client per request costs ~20 ms of TLS set-up.
        self.http = httpx.Client(base_url=self.base_url, timeout=10)

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def ws_url(self, page_id: str) -> str:
        return f"ws://127.0.0.1:{self.port}/api/pages/{page_id}/ws"

    def start(self) -> None:
        env = {**os.environ, "DOTFIGHT_DATABASE_URL": f"sqlite:///{self.database}", **self.extra_env}
        command = [
            sys.executable,
            "-m",
            "dotfight.cli",
            "serve",
            "--host",
            "127.0.0.1",
            "--port",
            str(self.port),
        ]
        with self.log_path.open("ab") as log:
            self.process = subprocess.Popen(
                command, cwd=REPO_ROOT, env=env, stdout=log, stderr=subprocess.STDOUT
            )
        deadline = time.monotonic() + 30
        while time.monotonic() < deadline:
            if self.process.poll() is not None:
                raise RuntimeError(f"the server exited: {self.log_path.read_text()[-2000:]}")
            try:
                if self.http.get("/api/health", timeout=1).status_code == 200:
                    return
            except httpx.HTTPError:
                pass
            time.sleep(0.1)
        raise RuntimeError("the server did not become healthy")

    def kill(self) -> None:
        """Kills the server with SIGKILL (no chance to clean up)."""
        assert self.process is not None
        self.process.send_signal(signal.SIGKILL)
        self.process.wait(10)

    def stop(self) -> None:
        self.http.close()
        if self.process is None or self.process.poll() is not None:
            return
        self.process.terminate()
        try:
            self.process.wait(10)
        except subprocess.TimeoutExpired:
            self.process.kill()
            self.process.wait(10)

    def log_text(self) -> str:
        return self.log_path.read_text(errors="replace")


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
