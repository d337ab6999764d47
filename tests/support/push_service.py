"""A stand-in for a Web Push service on loopback, a silent one (it takes connections and never answers),
and browsers' push subscriptions whose keys the test holds (so it can read what the server sent, as
only that browser could)."""

from __future__ import annotations

import base64
import json
import os
import socket
import sqlite3
import threading
import time
from collections.abc import Iterator
from contextlib import closing, contextmanager
from dataclasses import dataclass, field
from datetime import UTC, datetime
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

import http_ece
from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric import ec

from tests.support.server_process import ServerProcess


def b64url(data: bytes) -> str:
    return base64.urlsafe_b64encode(data).rstrip(b"=").decode("ascii")


def unb64url(text: str) -> bytes:
    return base64.urlsafe_b64decode(text + "=" * (-len(text) % 4))


@dataclass
class Received:
    """One push as the push service received it."""

    path: str
    headers: dict[str, str]  # names in lower case
    body: bytes


@dataclass
class PushService:
    """A local HTTP server standing in for a push service: records every request (a push is a POST);
    paths under /gone/ answer 410 (an expired subscription), paths under /redirect/ 307 to `redirect_to`;
    while `hold` is clear, every request waits for it."""

    server: ThreadingHTTPServer
    received: list[Received] = field(default_factory=list)
    redirect_to: str = ""
    # Requests being answered right now, and the most there ever were at once.
    open_requests: int = 0
    most_open: int = 0
    hold: threading.Event = field(default_factory=threading.Event)
    arrived: threading.Condition = field(default_factory=threading.Condition)

    @property
    def base(self) -> str:
        host, port = self.server.server_address[:2]
        return f"http://{host}:{port}"

    def wait_for(self, count: int, timeout: float = 10.0) -> list[Received]:
        """Waits until `count` pushes have arrived in all; returns them."""
        deadline = time.monotonic() + timeout
        with self.arrived:
            while len(self.received) < count:
                left = deadline - time.monotonic()
                assert left > 0, f"{len(self.received)} pushes arrived, expected {count}"
                self.arrived.wait(left)
            return list(self.received)


@contextmanager
def push_service_on_loopback() -> Iterator[PushService]:
    """Runs a stand-in push service on a free loopback port for the duration of the block."""
    service: PushService

    class Handler(BaseHTTPRequestHandler):
        def do_POST(self) -> None:
            with service.arrived:
                service.open_requests += 1
                service.most_open = max(service.most_open, service.open_requests)
            try:
                self.answer()
            finally:
                with service.arrived:
                    service.open_requests -= 1

        def answer(self) -> None:
            body = self.rfile.read(int(self.headers.get("Content-Length", "0")))
            service.hold.wait(60)  # longer than any test holds it: `hold` is set again at the end
            with service.arrived:
                headers = {name.lower(): value for name, value in self.headers.items()}
                service.received.append(Received(self.path, headers, body))
                service.arrived.notify_all()
            if self.path.startswith("/redirect/"):
                self.send_response(307)
                self.send_header("Location", service.redirect_to)
            else:
                self.send_response(410 if self.path.startswith("/gone/") else 201)
            self.send_header("Content-Length", "0")
            self.end_headers()

        # A redirect followed as a GET (or anything else) is recorded too.
        do_GET = do_PUT = do_DELETE = do_HEAD = do_POST

        def log_message(self, *args: Any) -> None:
            pass

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    service = PushService(server)
    service.hold.set()
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield service
    finally:
        service.hold.set()
        server.shutdown()
        server.server_close()


@dataclass
class SilentService:
    """A loopback listener that takes every connection and never reads nor answers (a push service that
    hangs); it counts the connections it was offered."""

    listener: socket.socket
    connections: list[socket.socket] = field(default_factory=list)

    @property
    def base(self) -> str:
        host, port = self.listener.getsockname()[:2]
        return f"http://{host}:{port}"


@contextmanager
def silent_service_on_loopback() -> Iterator[SilentService]:
    """Runs a silent push service on a free loopback port for the duration of the block."""
    listener = socket.create_server(("127.0.0.1", 0), backlog=512)
    listener.settimeout(0.2)
    service = SilentService(listener)
    stopping = threading.Event()

    def take() -> None:
        while not stopping.is_set():
            try:
                connection, _ = listener.accept()
            except TimeoutError:
                continue
            except OSError:
                return
            service.connections.append(connection)  # held open, never read

    thread = threading.Thread(target=take, daemon=True)
    thread.start()
    try:
        yield service
    finally:
        stopping.set()
        thread.join(5)
        for connection in service.connections:
            connection.close()
        listener.close()


@dataclass
class Browser:
    """A browser's push subscription: its endpoint and its own keys (to read what it receives)."""

    endpoint: str
    private_key: ec.EllipticCurvePrivateKey
    auth: bytes

    @classmethod
    def at(cls, endpoint: str) -> Browser:
        return cls(endpoint, ec.generate_private_key(ec.SECP256R1()), os.urandom(16))

    def subscription(self) -> dict[str, Any]:
        """The subscription as a browser's `PushSubscription.toJSON()` writes it."""
        point = self.private_key.public_key().public_bytes(
            serialization.Encoding.X962, serialization.PublicFormat.UncompressedPoint
        )
        keys = {"p256dh": b64url(point), "auth": b64url(self.auth)}
        return {"endpoint": self.endpoint, "expirationTime": None, "keys": keys}

    def read(self, push: Received) -> dict[str, Any]:
        """Decrypts a push as the browser would (aes128gcm); fails for a push meant for another."""
        plain = http_ece.decrypt(
            push.body, private_key=self.private_key, auth_secret=self.auth, version="aes128gcm"
        )
        message: dict[str, Any] = json.loads(plain)
        return message


# --------------------------------------------------------------------------------------------------
# seats of a real server (tests/hostile)


def subscribe_seat(
    server: ServerProcess,
    page: dict[str, Any],
    side: str,
    subscription: dict[str, Any],
    timeout: float = 10.0,
) -> Any:
    """Subscribes a seat of a page on a real server; returns the answer, whatever it is."""
    return server.http.post(
        f"/api/pages/{page['id']}/push",
        json=subscription,
        headers={"Authorization": f"Bearer {page['seats'][side]}"},
        timeout=timeout,
    )


def make_it_reds_move(server: ServerProcess, page: dict[str, Any]) -> None:
    """Blue sets up a new quick page and is ready: it is red's move (red's seat is told)."""
    for version, action in enumerate(({"type": "quick_setup"}, {"type": "ready"})):
        answer = server.http.post(
            f"/api/pages/{page['id']}/actions",
            json={"action": action, "version": version},
            headers={"Authorization": f"Bearer {page['seats']['blue']}"},
        )
        assert answer.status_code == 200, answer.text


def stored_endpoints(server: ServerProcess, page_id: str) -> list[str]:
    """The endpoints the server's SQLite database holds for a page, oldest first."""
    path = server.database_url.removeprefix("sqlite:///")
    with closing(sqlite3.connect(path)) as database:
        rows = database.execute(
            "SELECT endpoint FROM push_subscriptions WHERE page_id = ? ORDER BY id", (page_id,)
        ).fetchall()
    return [row[0] for row in rows]


def store_subscriptions(
    server: ServerProcess, page_id: str, side: str, subscriptions: list[dict[str, Any]]
) -> None:
    """Writes subscriptions straight into the server's SQLite database, unchecked, as a database of a
    server from before the checks holds them."""
    path = server.database_url.removeprefix("sqlite:///")
    moment = datetime.now(UTC).isoformat(sep=" ")
    rows = [
        (page_id, side, item["endpoint"], item["keys"]["p256dh"], item["keys"]["auth"], moment)
        for item in subscriptions
    ]
    with closing(sqlite3.connect(path, timeout=30)) as database, database:
        database.executemany(
            "INSERT INTO push_subscriptions (page_id, side, endpoint, p256dh, auth, created_at) "
            "VALUES (?, ?, ?, ?, ?, ?)",
            rows,
        )
