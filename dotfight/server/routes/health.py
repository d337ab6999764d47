"""The health check: 200 only when the server's database answers and can take a write."""

from __future__ import annotations

from fastapi import APIRouter

import dotfight
from dotfight.server.deps import ServicesDep
from dotfight.server.errors import ApiError
from dotfight.server.schemas import Health

router = APIRouter(prefix="/api")


@router.get("/health")
async def health(services: ServicesDep) -> Health:
    """Answers `{status: "ok", version}` when the database answers and is writable, else 503 unavailable
    saying why (it does not answer; its file is gone or replaced; its disk is full; another writer holds
    its write lock)."""
    problem = await services.store.views.health_problem()
    if problem is not None:
        raise ApiError("unavailable", problem)
    return Health(status="ok", version=dotfight.__version__)
