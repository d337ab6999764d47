"""The page socket's entrance: a plain ASGI handler in front of FastAPI's router. It checks the handshake
(page id, Origin) and hands the accepted socket to `dotfight.server.live`.

A page socket lives as long as the page is open on a phone, and every coroutine on its way in stays
alive with it. Through FastAPI's router that was a dozen frames per socket (the middleware stack, the
router, the route's exception and exit-stack wrappers, the dependency solver: about 13 KB of the ≈ 35 KB
each socket held, issue 12); served here it is `DotfightApp.__call__` and this handler. None of those
layers did anything for a WebSocket: the middlewares answer HTTP only, and the socket's errors are its
own close codes.

>>> page_socket_id({"type": "websocket", "path": "/api/pages/abc123/ws", "root_path": ""})
'abc123'
>>> page_socket_id({"type": "http", "path": "/api/pages/abc123/ws", "root_path": ""}) is None
True
"""

from __future__ import annotations

import re
from urllib.parse import urlsplit

from starlette.datastructures import Headers
from starlette.types import Receive, Scope, Send
from starlette.websockets import WebSocket

from dotfight.server.deps import get_services
from dotfight.server.live import CLOSE_POLICY, serve_page_socket
from dotfight.server.routes.pages import PAGE_ID_PATTERN
from dotfight.server.settings import Settings

# The page socket's path; the id in it is checked against PAGE_ID_PATTERN once the socket is in.
PAGE_SOCKET_PATH = re.compile(r"/api/pages/([^/]+)/ws")


def origin_allowed(headers: Headers, settings: Settings) -> bool:
    """Allows non-browser clients (no Origin), the server's own host, and the configured origins."""
    origin = headers.get("origin")
    if origin is None:
        return True
    if origin in settings.allowed_origins:
        return True
    parts = urlsplit(origin)
    host = headers.get("host", "")
    return parts.scheme in ("http", "https") and bool(host) and parts.netloc.lower() == host.lower()


def page_socket_id(scope: Scope) -> str | None:
    """Returns the page id of a WebSocket handshake to a page socket's path, or None for anything else."""
    if scope["type"] != "websocket":
        return None
    path: str = scope["path"]
    root: str = scope.get("root_path", "")
    if root and path.startswith(root):
        path = path[len(root) :]
    match = PAGE_SOCKET_PATH.fullmatch(path)
    return match.group(1) if match else None


async def page_socket(scope: Scope, receive: Receive, send: Send, page_id: str) -> None:
    """Serves one WebSocket client of a page (PROTOCOL.md: hello, state/events, action, ack, presence).

    A bad page id or a foreign Origin is refused before accepting (the handshake answers 403)."""
    websocket = WebSocket(scope, receive, send)
    services = get_services(websocket)
    allowed = origin_allowed(Headers(scope=scope), services.settings)
    if not re.fullmatch(PAGE_ID_PATTERN, page_id) or not allowed:
        await websocket.close(code=CLOSE_POLICY)
        return
    await websocket.accept()
    # Nothing reads the handshake's headers after this, and the server keeps the scope for as long as
    # the socket lives: they are let go (a phone's handshake is a dozen headers, about 1 KB).
    scope["headers"] = []
    await serve_page_socket(services, websocket, page_id, receive)
