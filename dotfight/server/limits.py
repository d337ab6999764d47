"""Limits on what clients may send: request body size, and token buckets against floods."""

from __future__ import annotations

import json
import time
from collections.abc import Callable

from starlette.types import ASGIApp, Message, Receive, Scope, Send

from dotfight.server.cache import LruCache


class TokenBucket:
    """Allows `rate` events a second on average and bursts of up to `burst`."""

    __slots__ = ("_burst", "_clock", "_last", "_rate", "_tokens")

    def __init__(self, rate: float, burst: int, clock: Callable[[], float] = time.monotonic) -> None:
        self._rate = rate
        self._burst = float(burst)
        self._tokens = float(burst)
        self._clock = clock
        self._last = clock()

    def take(self) -> bool:
        """Spends one token; returns False (spending nothing) when the bucket is empty."""
        return self.take_or_wait() == 0.0

    def take_or_wait(self) -> float:
        """Spends one token and returns 0, or, when the bucket is empty, returns the seconds until the
        next token (spending nothing)."""
        now = self._clock()
        self._tokens = min(self._burst, self._tokens + (now - self._last) * self._rate)
        self._last = now
        if self._tokens < 1.0:
            return (1.0 - self._tokens) / self._rate
        self._tokens -= 1.0
        return 0.0


class RateLimiter:
    """One token bucket per client key (an address), remembering the most recent clients."""

    def __init__(self, rate: float, burst: int, clients: int = 10_000) -> None:
        self._rate = rate
        self._burst = burst
        self._buckets: LruCache[str, TokenBucket] = LruCache(clients)

    def wait(self, key: str) -> float:
        """Counts one request of this client and returns 0, or, when it is over its limit, the seconds
        until it may make the next one."""
        bucket = self._buckets.get(key)
        if bucket is None:
            bucket = TokenBucket(self._rate, self._burst)
            self._buckets.put(key, bucket)
        return bucket.take_or_wait()


def _error_body(code: str, message: str) -> bytes:
    return json.dumps({"error": {"code": code, "message": message}}).encode()


_TOO_LARGE_BODY = _error_body("too_large", "the request body is too large")
_BAD_LENGTH_BODY = _error_body("bad_request", "the Content-Length header is not a number")


class BodySizeLimit:
    """ASGI middleware refusing HTTP bodies over `max_bytes` with 413 too_large.

    It checks Content-Length first, then counts the streamed body (chunked uploads have no length),
    reading it whole before the app runs; bodies here are small, so buffering them costs nothing.
    """

    def __init__(self, app: ASGIApp, max_bytes: int) -> None:
        self._app = app
        self._max_bytes = max_bytes

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self._app(scope, receive, send)
            return
        declared = dict(scope["headers"]).get(b"content-length")
        if declared is not None and not declared.isdigit():
            await self._refuse(send, 400, _BAD_LENGTH_BODY)
            return
        if declared is not None and int(declared) > self._max_bytes:
            await self._refuse(send, 413, _TOO_LARGE_BODY)
            return
        chunks: list[bytes] = []
        size = 0
        while True:
            message = await receive()
            if message["type"] != "http.request":
                await self._app(scope, _replay([message]), send)
                return
            chunk = message.get("body", b"")
            size += len(chunk)
            if size > self._max_bytes:
                await self._refuse(send, 413, _TOO_LARGE_BODY)
                return
            chunks.append(chunk)
            if not message.get("more_body", False):
                break
        body_message: Message = {"type": "http.request", "body": b"".join(chunks), "more_body": False}
        await self._app(scope, _replay([body_message], then=receive), send)

    @staticmethod
    async def _refuse(send: Send, status: int, body: bytes) -> None:
        await send(
            {
                "type": "http.response.start",
                "status": status,
                "headers": [
                    (b"content-type", b"application/json"),
                    (b"content-length", str(len(body)).encode()),
                    (b"connection", b"close"),
                ],
            }
        )
        await send({"type": "http.response.body", "body": body})


def _replay(messages: list[Message], then: Receive | None = None) -> Receive:
    """Returns a receive callable that hands out `messages` first, then defers to `then`."""
    pending = list(messages)

    async def receive() -> Message:
        if pending:
            return pending.pop(0)
        if then is not None:
            return await then()
        return {"type": "http.disconnect"}

    return receive
