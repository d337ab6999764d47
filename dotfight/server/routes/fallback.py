"""The last route under /api: a path that exists with another method answers 405, any other 404.

Without it the web app's static mount at "/" would take every unmatched /api request (a GET of an
action path would answer 404, a PUT anywhere the static files' own 405 without an `Allow` header).
"""

from __future__ import annotations

from fastapi import FastAPI, Request
from starlette.routing import Match, Mount

from dotfight.server.errors import ApiError

EVERY_METHOD = ["GET", "HEAD", "POST", "PUT", "PATCH", "DELETE", "OPTIONS"]


def methods_allowed(request: Request) -> set[str]:
    """Returns the methods the app's other routes take on this request's path (each method is tried
    on every route: FastAPI wraps included routers, so their methods cannot simply be listed)."""
    allowed: set[str] = set()
    for method in EVERY_METHOD:
        probe = {**request.scope, "method": method}
        for route in request.app.router.routes:
            # Not itself, nor the web app's mount (it takes every path).
            if isinstance(route, Mount) or getattr(route, "endpoint", None) is api_fallback:
                continue
            match, _ = route.matches(probe)
            if match == Match.FULL:
                allowed.add(method)
                break
    return allowed


async def api_fallback(request: Request) -> None:
    """Refuses a request no API route takes: method_not_allowed (with `Allow`) or not_found."""
    allowed = methods_allowed(request)
    if allowed:
        headers = {"Allow": ", ".join(sorted(allowed))}
        raise ApiError("method_not_allowed", "this path does not take this method", headers=headers)
    raise ApiError("not_found", "nothing here")


def install(app: FastAPI) -> None:
    """Adds the fallback to `app`, after every API route (added directly, so it can tell itself apart)."""
    app.add_api_route("/api/{rest:path}", api_fallback, methods=EVERY_METHOD, include_in_schema=False)
