"""The route of the page socket: checks the handshake (page id, Origin) and hands the socket to
`dotfight.server.live`."""

from __future__ import annotations

import re
from urllib.parse import urlsplit

from fastapi import APIRouter, WebSocket
from starlette.datastructures import Headers

from dotfight.server.deps import get_services
from dotfight.server.live import CLOSE_POLICY, serve_page_socket
from dotfight.server.routes.pages import PAGE_ID_PATTERN
from dotfight.server.settings import Settings

router = APIRouter()


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


@router.websocket("/api/pages/{page_id}/ws")
async def page_socket(websocket: WebSocket, page_id: str) -> None:
    """Serves one WebSocket client of a page (PROTOCOL.md: hello, state/events, action, ack, presence)."""
    services = get_services(websocket)
    if not re.fullmatch(PAGE_ID_PATTERN, page_id) or not origin_allowed(websocket.headers, services.settings):
        await websocket.close(code=CLOSE_POLICY)  # before accepting: the handshake is refused (403)
        return
    await websocket.accept()
    await serve_page_socket(services, websocket, page_id)
