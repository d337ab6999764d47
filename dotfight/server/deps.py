"""FastAPI dependencies: the shared services, the seat token of a request, and the rate limit."""

from __future__ import annotations

import math
from typing import Annotated

from fastapi import Depends, Header
from starlette.requests import HTTPConnection

from dotfight.server.errors import ApiError
from dotfight.server.services import Services


def get_services(connection: HTTPConnection) -> Services:
    """Returns the services built at start-up."""
    services: Services = connection.app.state.services
    return services


ServicesDep = Annotated[Services, Depends(get_services)]


def bearer_token(authorization: Annotated[str | None, Header()] = None) -> str | None:
    """Returns the token of an `Authorization: Bearer <token>` header, or None when there is none."""
    if authorization is None:
        return None
    scheme, _, token = authorization.partition(" ")
    if scheme.lower() != "bearer" or not token.strip():
        raise ApiError("bad_token", "send the seat token as 'Authorization: Bearer <token>'")
    return token.strip()


BearerToken = Annotated[str | None, Depends(bearer_token)]


def reader_token(authorization: Annotated[str | None, Header()] = None) -> str | None:
    """Returns the token of an `Authorization: Bearer <token>` header, or None for any other header:
    reading needs no token, so a wrong one is ignored rather than refused."""
    try:
        return bearer_token(authorization)
    except ApiError:
        return None


ReaderToken = Annotated[str | None, Depends(reader_token)]


def client_key(connection: HTTPConnection) -> str:
    """Returns the address a request comes from (behind a trusted proxy: the forwarded one)."""
    return connection.client.host if connection.client else "unknown"


def refuse_if_waiting(wait: float, message: str) -> None:
    """Refuses with 429 rate_limited and a Retry-After when a limiter says to wait `wait` seconds."""
    if wait > 0:
        retry_after = str(max(1, math.ceil(wait)))
        raise ApiError("rate_limited", message, headers={"Retry-After": retry_after})


def rate_limit(connection: HTTPConnection, services: ServicesDep) -> None:
    """Refuses a client that sends too many requests with 429 rate_limited and a Retry-After."""
    wait = services.http_limiter.wait(client_key(connection))
    refuse_if_waiting(wait, "too many requests; wait a moment")


RateLimited = Depends(rate_limit)


def creation_limit(connection: HTTPConnection, services: ServicesDep) -> None:
    """Refuses a client that creates pages faster than `page_creations_per_minute` (after a burst of
    `page_creation_burst`) with 429 rate_limited and a Retry-After."""
    wait = services.creation_limiter.wait(client_key(connection))
    refuse_if_waiting(wait, "too many new pages from this address; wait a moment")


CreationRateLimited = Depends(creation_limit)


def json_body(content_type: Annotated[str | None, Header()] = None) -> None:
    """Refuses a body declared as anything but JSON (`application/json`, `…+json`) with 415
    unsupported_media_type; a body without a Content-Type is left to the body's own validation."""
    if content_type is None:
        return
    media_type = content_type.partition(";")[0].strip().lower()
    if media_type != "application/json" and not media_type.endswith("+json"):
        raise ApiError("unsupported_media_type", "send the body as JSON ('Content-Type: application/json')")


JsonBody = Depends(json_body)
