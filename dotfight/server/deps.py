"""FastAPI dependencies: the shared services, the seat token of a request, and the rate limit."""

from __future__ import annotations

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


def client_key(connection: HTTPConnection) -> str:
    """Returns the address a request comes from (behind a trusted proxy: the forwarded one)."""
    return connection.client.host if connection.client else "unknown"


def rate_limit(connection: HTTPConnection, services: ServicesDep) -> None:
    """Refuses a client that sends too many requests with 429 rate_limited."""
    if not services.http_limiter.allow(client_key(connection)):
        raise ApiError("rate_limited", "too many requests; wait a moment")


RateLimited = Depends(rate_limit)
