"""The FastAPI app: `create_app(settings)` wires storage, the page authority, the hub and the web app."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager

from fastapi import FastAPI
from fastapi.middleware.cors import CORSMiddleware
from fastapi.middleware.gzip import GZipMiddleware
from fastapi.responses import FileResponse
from fastapi.staticfiles import StaticFiles

import dotfight
from dotfight.server.bot_runner import BotRunner, load_bot_pool
from dotfight.server.budgets import ActionBudget
from dotfight.server.errors import ApiError, install_error_handlers
from dotfight.server.hub import Hub, events_message
from dotfight.server.limits import BodySizeLimit, RateLimiter
from dotfight.server.master import Applied, Master
from dotfight.server.page_view import LoadedPage
from dotfight.server.routes import fallback, health, pages, ws
from dotfight.server.services import Services
from dotfight.server.settings import Settings
from dotfight.store.database import make_engine
from dotfight.store.migrations import upgrade_to_head

CLOSE_GOING_AWAY = 1001


def create_app(settings: Settings | None = None) -> FastAPI:
    """Builds the app; on start it migrates the database to the newest schema, on stop it closes all."""
    settings = settings or Settings()

    @asynccontextmanager
    async def lifespan(app: FastAPI) -> AsyncIterator[None]:
        # Connections for every thread that may use the database at once, plus the health check's.
        connections = settings.db_threads + settings.engine_threads + 2
        database = make_engine(settings.database_url, settings.db_busy_timeout_s, connections)
        await asyncio.to_thread(upgrade_to_head, database, settings.alembic_dir)
        master = Master(settings, database)
        hub = Hub()

        def announce(page: LoadedPage, applied: Applied) -> None:
            hub.broadcast(page.meta.id, events_message(applied.version, applied.events))

        master.add_listener(announce)  # before the bot, so people hear a move before the bot answers it
        pool = load_bot_pool(settings)
        if pool is not None:
            pool.warm_up()
        bots = BotRunner(master, pool, settings.bot_retry_max_s)
        limiter = RateLimiter(settings.http_requests_per_second, settings.http_request_burst)
        app.state.services = Services(settings, master, hub, bots, limiter, ActionBudget(settings))
        # In the background: start-up does not wait for the pages a restart left at the bot's move.
        bots.resume_waiting_pages()
        try:
            yield
        finally:
            await bots.stop()
            if pool is not None:
                pool.close()
            await hub.close_all(CLOSE_GOING_AWAY)
            master.close()
            database.dispose()

    app = FastAPI(title="Dotfight", version=dotfight.__version__, lifespan=lifespan)
    install_error_handlers(app)
    app.add_middleware(BodySizeLimit, max_bytes=settings.max_body_bytes)
    # The web app's scripts and the snapshots shrink several times over; tiny answers stay as they are.
    app.add_middleware(GZipMiddleware, minimum_size=1024)
    if settings.allowed_origins:
        app.add_middleware(
            CORSMiddleware,
            allow_origins=settings.allowed_origins,
            allow_methods=["GET", "POST"],
            allow_headers=["Authorization", "Content-Type"],
        )
    app.include_router(health.router)
    app.include_router(pages.router)
    app.include_router(ws.router)
    fallback.install(app)  # after every API route

    index = settings.web_dir / "index.html"

    @app.get("/p/{page_id}", include_in_schema=False)
    async def page_app(page_id: pages.PageId) -> FileResponse:
        """Serves the web app for a page link (the app reads the id from the path, the seat from the #)."""
        if not index.is_file():
            raise ApiError("not_found", "the web app is not installed")
        return FileResponse(index, media_type="text/html")

    app.mount("/", StaticFiles(directory=settings.web_dir, html=True, check_dir=False), name="web")
    return app
