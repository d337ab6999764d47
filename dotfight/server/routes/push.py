"""Web Push over HTTP: the server's public key, and subscribing a seat of a page (see `push.py`).

- `GET /api/push/key` → `{key}`: the VAPID public key (base64url), the browser's `applicationServerKey`.
- `POST /api/pages/{id}/push` with the seat token and a `PushSubscription` as the browser writes it
  (`{endpoint, keys: {p256dh, auth}, expirationTime?}`) → 201 `{page, side}`; 400 `bad_request` for keys
  that cannot be encrypted to, or (reason `push_endpoint`) an endpoint the server does not post to (see
  `push_endpoint.py`); 503 `unavailable` when the endpoint's host cannot be resolved for now.
- `DELETE /api/pages/{id}/push` with the seat token and `{endpoint}` → 200 `{removed: bool}`.
"""

from __future__ import annotations

from typing import Annotated

from fastapi import APIRouter, Depends
from fastapi.responses import JSONResponse
from pydantic import Field, StringConstraints
from starlette.requests import HTTPConnection

from dotfight.server.deps import BearerToken, JsonBody, RateLimited, ServicesDep
from dotfight.server.errors import ApiError
from dotfight.server.push import PushService
from dotfight.server.routes.pages import PageId
from dotfight.server.schemas import Incoming
from dotfight.server.services import Services

router = APIRouter(prefix="/api")

Base64Url = r"^[A-Za-z0-9_-]+={0,2}$"
# A P-256 public point is 65 bytes (87 characters), the auth secret 16 bytes (22): a little room for padding.
P256dh = Annotated[str, StringConstraints(min_length=80, max_length=100, pattern=Base64Url)]
AuthSecret = Annotated[str, StringConstraints(min_length=20, max_length=32, pattern=Base64Url)]
# Its host, port and addresses are checked by `push_endpoint.check_endpoint` (issue 18).
Endpoint = Annotated[str, StringConstraints(min_length=10, max_length=1024)]


class PushKeysIn(Incoming):
    """The subscription's encryption keys."""

    p256dh: P256dh
    auth: AuthSecret


class PushSubscriptionIn(Incoming):
    """A browser's `PushSubscription.toJSON()`."""

    endpoint: Endpoint
    keys: PushKeysIn
    expirationTime: float | None = Field(default=None)


class PushEndpointIn(Incoming):
    """Which subscription to forget."""

    endpoint: Endpoint


def get_push(connection: HTTPConnection) -> PushService:
    """Returns the push service built at start-up."""
    push: PushService = connection.app.state.push
    return push


PushDep = Annotated[PushService, Depends(get_push)]


async def _seat_side(services: Services, page_id: str, token: str | None) -> str:
    """Returns the side of the seat token (pushes are per seat: a pass-one-phone token holds none)."""
    if token is None:
        raise ApiError("bad_token", "subscribing needs a seat token ('Authorization: Bearer <token>')")
    seat = await services.authority.seat(page_id, token)
    if seat.side is None:
        raise ApiError("bad_request", "pushes are for pages on a shared link or live", reason="no_push")
    return seat.side


@router.get("/push/key")
async def push_key(push: PushDep) -> JSONResponse:
    """Answers the server's VAPID public key."""
    keys = await push.keys()
    return JSONResponse({"key": keys.public_key}, headers={"Cache-Control": "public, max-age=86400"})


@router.post("/pages/{page_id}/push", status_code=201, dependencies=[RateLimited, JsonBody])
async def subscribe(
    page_id: PageId, body: PushSubscriptionIn, services: ServicesDep, push: PushDep, token: BearerToken
) -> JSONResponse:
    """Keeps a browser's subscription for the token's seat: it is pushed to when that seat's move comes."""
    side = await _seat_side(services, page_id, token)
    page = await services.authority.page(page_id)
    await push.subscribe(page, side, body.endpoint, body.keys.p256dh, body.keys.auth)
    return JSONResponse({"page": page_id, "side": side}, status_code=201)


@router.delete("/pages/{page_id}/push", dependencies=[RateLimited, JsonBody])
async def unsubscribe(
    page_id: PageId, body: PushEndpointIn, services: ServicesDep, push: PushDep, token: BearerToken
) -> JSONResponse:
    """Forgets a browser's subscription for the token's seat."""
    side = await _seat_side(services, page_id, token)
    return JSONResponse({"removed": await push.unsubscribe(page_id, side, body.endpoint)})
