"""Browser-facing headers on every HTTP answer, and HEAD wherever GET works (ASGI middlewares).

They wrap the whole app, so the web app's files, the page links' HTML (`/p/{id}`), the API and every
error answer carry them, whichever route or mount produced the answer.
"""

from __future__ import annotations

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

SECURITY_HEADERS: list[tuple[bytes, bytes]] = [
    (b"content-security-policy", CONTENT_SECURITY_POLICY.encode()),
    (b"x-content-type-options", b"nosniff"),
    # Seat tokens live in the URL fragment, which is never sent; no-referrer keeps even the path home.
    (b"referrer-policy", b"no-referrer"),
    (b"x-frame-options", b"DENY"),  # for browsers older than frame-ancestors
]
# A year, without includeSubDomains or preload: the server cannot know its neighbours' TLS.
HSTS = (b"strict-transport-security", b"max-age=31536000")


class SecurityHeaders:
    """Adds the security headers to every HTTP answer (a header the route set itself is kept), and HSTS
    when the request came over TLS: directly, or through a trusted proxy saying `X-Forwarded-Proto:
    https` (uvicorn sets the scheme from it only for `--forwarded-allow-ips`)."""

    def __init__(self, app: ASGIApp) -> None:
        self._app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self._app(scope, receive, send)
            return
        extra = [*SECURITY_HEADERS, HSTS] if scope.get("scheme") == "https" else SECURITY_HEADERS

        async def send_with_headers(message: Message) -> None:
            if message["type"] == "http.response.start":
                headers = list(message.get("headers", []))
                present = {name.lower() for name, _ in headers}
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
