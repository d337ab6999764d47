"""A stand-in for a Web Push service on loopback, and browsers' push subscriptions whose keys the test
holds (so it can read what the server sent, as only that browser could)."""

from __future__ import annotations

import base64
import json
import os
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

import http_ece
from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric import ec


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
    """A local HTTP server standing in for a push service: records every POST; paths under /gone/
    answer 410 (an expired subscription); while `hold` is clear, every request waits for it."""

    server: ThreadingHTTPServer
    received: list[Received] = field(default_factory=list)
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
            body = self.rfile.read(int(self.headers.get("Content-Length", "0")))
            service.hold.wait(10)
            with service.arrived:
                headers = {name.lower(): value for name, value in self.headers.items()}
                service.received.append(Received(self.path, headers, body))
                service.arrived.notify_all()
            self.send_response(410 if self.path.startswith("/gone/") else 201)
            self.send_header("Content-Length", "0")
            self.end_headers()

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
