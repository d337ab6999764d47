"""The health check: 200 only when the server and its database answer."""

from __future__ import annotations

from fastapi import APIRouter

import dotfight
from dotfight.server.deps import ServicesDep
from dotfight.server.errors import ApiError
from dotfight.server.schemas import Health

router = APIRouter(prefix="/api")


@router.get("/health")
async def health(services: ServicesDep) -> Health:
    """Answers `{status: "ok", version}` when the database answers, else 503 unavailable."""
    if not await services.master.healthy():
        raise ApiError("unavailable", "the database does not answer")
    return Health(status="ok", version=dotfight.__version__)
