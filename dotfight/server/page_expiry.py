"""The sweep for expired pages: every `page_expiry_sweep_seconds`, pages never played past setup whose
last action is older than `page_setup_ttl_days` are deleted (a tombstone keeps their id, so their link
answers 410 page_expired), and sockets still open on them are told so and closed with 4410."""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import Callable
from datetime import timedelta

from sqlalchemy import Engine

from dotfight.server.settings import Settings
from dotfight.store import expiry
from dotfight.store.database import make_session_factory
from dotfight.store.models import utc_now

logger = logging.getLogger(__name__)

# Pages deleted per transaction: a sweep never holds the database for long.
SWEEP_BATCH = 500


class PageExpirySweeper:
    """Runs the sweep in the background; `on_expired(page_id)` is called for each page deleted."""

    def __init__(self, settings: Settings, database: Engine, on_expired: Callable[[str], None]) -> None:
        self._ttl = timedelta(days=settings.page_setup_ttl_days)
        self._every = settings.page_expiry_sweep_seconds
        self._sessions = make_session_factory(database)
        self._on_expired = on_expired
        self._task: asyncio.Task[None] | None = None

    def start(self) -> None:
        """Starts sweeping now and then every interval."""
        self._task = asyncio.create_task(self._run())

    async def stop(self) -> None:
        """Stops sweeping."""
        if self._task is not None:
            self._task.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self._task

    async def sweep(self) -> list[str]:
        """Deletes every page expired by now; returns their ids."""
        expired: list[str] = []
        while True:
            batch = await asyncio.to_thread(self._sweep_batch)
            expired += batch
            for page_id in batch:
                self._on_expired(page_id)
            if len(batch) < SWEEP_BATCH:
                return expired

    def _sweep_batch(self) -> list[str]:
        with self._sessions() as session:
            page_ids = expiry.expire_idle_setup_pages(session, utc_now() - self._ttl, SWEEP_BATCH)
            session.commit()
        return page_ids

    async def _run(self) -> None:
        while True:
            try:
                expired = await self.sweep()
                if expired:
                    logger.info("expired %d pages never played past setup", len(expired))
            except Exception:  # e.g. the database is busy: the next sweep tries again
                logger.warning("the sweep for expired pages failed", exc_info=True)
            await asyncio.sleep(self._every)
