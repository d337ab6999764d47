"""Browser-facing headers on every HTTP answer, and HEAD wherever GET works (ASGI middlewares).

They wrap the whole app, so the web app's files, the page links' HTML (`/p/{id}`), the API and every
error answer carry them, whichever route or mount produced the answer. The headers that only a document
reads (its policy, framing, referrer) go on every answer but the ones a browser never shows as a
document: the app's scripts, style sheets, icons and manifest (a module or a style sheet runs under its
document's policy, not its own). The service worker's scripts, which run under their own policy, get it
from the static files (`static.py`).
"""

from __future__ import annotations

import mimetypes

from starlette.types import ASGIApp, Message, Receive, Scope, Send

# Exactly what the web app uses: its own scripts, styles, fetches and WebSocket ('self' covers ws/wss of
# the same host), its manifest and service worker, and the data:/blob: images it draws itself (the
# favicon, the share picture). Nothing else loads, nothing may frame it (a framed game could be clicked
# into resigning), no <base> or form can point elsewhere.
CONTENT_SECURITY_POLICY = "; ".join(
    [
        "default-src 'none'",
        "script-src 'self'",
        "style-src 'self'",
        "img-src 'self' data: blob:",
        "connect-src 'self'",
        "manifest-src 'self'",
        "worker-src 'self'",
        "base-uri 'none'",
        "form-action 'none'",
        "frame-ancestors 'none'",
    ]
)

CSP = (b"content-security-policy", CONTENT_SECURITY_POLICY.encode())
# Seat tokens live in the URL fragment, which is never sent; no-referrer keeps even the path home. A
# module's imports inherit its document's policy, so the scripts need no copy of it.
REFERRER_POLICY = (b"referrer-policy", b"no-referrer")
# What a worker's script sets for the worker: its policy and its fetches' referrer (no framing).
WORKER_HEADERS: list[tuple[bytes, bytes]] = [CSP, REFERRER_POLICY]
# What a document reads of its own answer.
DOCUMENT_HEADERS: list[tuple[bytes, bytes]] = [
    *WORKER_HEADERS,
    (b"x-frame-options", b"DENY"),  # for browsers older than frame-ancestors
]
# Every answer: nothing is taken for another type than it says (a script, a style sheet, JSON alike).
EVERY_ANSWER: list[tuple[bytes, bytes]] = [(b"x-content-type-options", b"nosniff")]
# A year, without includeSubDomains or preload: the server cannot know its neighbours' TLS.
HSTS = (b"strict-transport-security", b"max-age=31536000")
# Answers a browser only ever runs or shows inside a document, never as one: no document headers. Any
# other type (HTML, JSON, SVG, plain text, none) keeps them, so an answer opened by its address is
# still under the policy.
SUBRESOURCE_TYPES = frozenset(
    {
        "text/javascript",
        "application/javascript",
        "text/css",
        "application/manifest+json",
        "image/png",
        "image/x-icon",
        "font/woff2",
    }
)


def is_subresource(headers: list[tuple[bytes, bytes]], path: str) -> bool:
    """Whether an answer is a script, style sheet, icon or manifest by its Content-Type, or, when it has
    none (a 304, whose stored answer keeps the headers it came with), by its path's type.

    >>> is_subresource([(b"content-type", b"text/css; charset=utf-8")], "/app.css")
    True
    >>> is_subresource([(b"content-type", b"text/html; charset=utf-8")], "/p/abc")
    False
    >>> is_subresource([], "/js/main.js"), is_subresource([], "/")
    (True, False)
    """
    declared = next((value for name, value in headers if name.lower() == b"content-type"), None)
    if declared is not None:
        media_type = declared.decode("latin-1").split(";", 1)[0].strip().lower()
    else:
        media_type = mimetypes.guess_type(path)[0] or ""
    return media_type in SUBRESOURCE_TYPES


class SecurityHeaders:
    """Adds the security headers to every HTTP answer (a header the route set itself is kept): nosniff
    to all, the document headers to all but scripts, style sheets, icons and the manifest, and HSTS
    when the request came over TLS: directly, or through a trusted proxy saying `X-Forwarded-Proto:
    https` (uvicorn sets the scheme from it only for `--forwarded-allow-ips`)."""

    def __init__(self, app: ASGIApp) -> None:
        self._app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self._app(scope, receive, send)
            return
        every = [*EVERY_ANSWER, HSTS] if scope.get("scheme") == "https" else EVERY_ANSWER

        async def send_with_headers(message: Message) -> None:
            if message["type"] == "http.response.start":
                headers = list(message.get("headers", []))
                present = {name.lower() for name, _ in headers}
                extra = every if is_subresource(headers, scope["path"]) else [*every, *DOCUMENT_HEADERS]
                headers += [(name, value) for name, value in extra if name not in present]
                message = {**message, "headers": headers}
            await send(message)

        await self._app(scope, receive, send_with_headers)


class HeadAsGet:
    """Answers HEAD wherever GET is answered: the request goes in as GET, the answer goes out without
    its body (status and headers, Content-Length included, as GET would have them; RFC 9110 §9.3.2)."""

    def __init__(self, app: ASGIApp) -> None:
        self._app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http" or scope["method"] != "HEAD":
            await self._app(scope, receive, send)
            return

        async def send_without_body(message: Message) -> None:
            if message["type"] == "http.response.body":
                if message.get("more_body", False):
                    return
                message = {"type": "http.response.body", "body": b"", "more_body": False}
            await send(message)

        await self._app({**scope, "method": "GET"}, receive, send_without_body)
