"""The FastAPI app: `create_app(settings)` wires storage, the page authority, the rooms and the web app."""

from __future__ import annotations

import asyncio
import gc
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from functools import partial

from fastapi import FastAPI
from fastapi.middleware.cors import CORSMiddleware
from fastapi.middleware.gzip import GZipMiddleware
from sqlalchemy import Engine
from starlette.types import Receive, Scope, Send

import dotfight
from dotfight.server import arrival, collector
from dotfight.server.bot_runner import BotRunner
from dotfight.server.broadcast import Broadcast, LocalBroadcast, PostgresBroadcast, notify_in_transaction
from dotfight.server.budgets import ActionBudget
from dotfight.server.errors import ApiError, install_error_handlers
from dotfight.server.headers import HeadAsGet, SecurityHeaders
from dotfight.server.heartbeat import Heartbeat
from dotfight.server.limits import BodySizeLimit, RateLimiter
from dotfight.server.live import CLOSE_PAGE_EXPIRED, error_message
from dotfight.server.offers import Offers
from dotfight.server.page_expiry import PageExpirySweeper
from dotfight.server.pages.authority import Capacity, PageAuthority
from dotfight.server.pages.notice import PendingNotices
from dotfight.server.push import PushService
from dotfight.server.rooms import Rooms
from dotfight.server.routes import card, fallback, health, page_html, pages, people, picture, push, ws
from dotfight.server.services import Services
from dotfight.server.settings import Settings
from dotfight.server.static import WebFiles
from dotfight.server.timeouts import TimeOuts
from dotfight.server.workers.bot import load_bot_pool
from dotfight.store.database import make_engine
from dotfight.store.migrations import upgrade_to_head
from dotfight.store.sql_pages import ActionNotify, SqlPageStore

# At shutdown every WebSocket is closed with 1012 "service restart" (what uvicorn itself sends to the
# sockets it closes): the client reconnects and resumes from its version.
CLOSE_SERVICE_RESTART = 1012


def open_pages(
    settings: Settings, database: Engine, notify: ActionNotify | None = None
) -> tuple[SqlPageStore, PageAuthority]:
    """Builds the database's page store (its writer, its views; `notify` makes every action's NOTIFY on
    PostgreSQL, sent by the action's own statement) and the page authority on it."""
    store = SqlPageStore(
        database,
        busy_timeout_s=settings.db_busy_timeout_s,
        min_free_bytes=settings.db_min_free_bytes,
        view_threads=settings.db_threads,
        notify=notify,
    )
    authority = PageAuthority(
        store,
        Capacity(
            readers=settings.db_threads,
            engine_threads=settings.engine_threads,
            engine_processes=settings.engine_processes,
            engine_timeout_s=settings.engine_timeout_s,
            cache_pages=settings.state_cache_pages,
        ),
    )
    return store, authority


def close_pages(store: SqlPageStore, authority: PageAuthority) -> None:
    """Stops the engine's threads and processes, then the store's writer (finishing what was submitted)
    and its views."""
    authority.close()
    store.close()


class DotfightApp(FastAPI):
    """The FastAPI app with the page socket served in front of its router (`routes/ws.py`): a socket held
    open for as long as a page is keeps only this frame and its handler, not the router's and the
    middlewares' (issue 12). Every other request goes through FastAPI as usual."""

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        page_id = ws.page_socket_id(scope)
        if page_id is None:
            services = getattr(self.state, "services", None)
            if scope["type"] == "http" and services is not None:
                arrival.stamp(scope, services.authority.now)  # an action's clock counts from here
            await super().__call__(scope, receive, send)
            return
        scope["app"] = self
        await ws.page_socket(scope, receive, send, page_id)


def create_app(settings: Settings | None = None) -> FastAPI:
    """Builds the app; on start it migrates the database to the newest schema, on stop it closes all."""
    settings = settings or Settings()

    @asynccontextmanager
    async def lifespan(app: FastAPI) -> AsyncIterator[None]:
        # Connections for every thread that may use the database at once, plus the health check's.
        connections = settings.db_threads + settings.engine_threads + 2
        database = make_engine(settings.database_url, settings.db_busy_timeout_s, connections)
        await asyncio.to_thread(upgrade_to_head, database, settings.alembic_dir)
        # Several processes may serve a PostgreSQL database: they hear each other's commits (announced
        # by a NOTIFY inside each action's write transaction).
        postgres = database.dialect.name == "postgresql"
        broadcast: Broadcast
        notices = notify = None
        if postgres:
            # This process's own notices are told apart by the backend that sent them (the store's writer)
            # and are sent only when another process follows the page (its id against the followers').
            broadcast = postgres_broadcast = PostgresBroadcast(
                database, own_sender=lambda: store.writer_backend_pid
            )
            notices = PendingNotices()  # each action's NOTIFY carries its move
            notify = partial(notify_in_transaction, notices=notices, sender=postgres_broadcast.process_id)
        else:
            broadcast = LocalBroadcast()
        store, authority = open_pages(settings, database, notify)
        authority.notices = notices
        rooms = Rooms(
            authority,
            broadcast,
            max_per_page=settings.ws_max_sockets_per_page,
            max_per_address=settings.ws_max_sockets_per_address,
            presence_delay=settings.ws_presence_delay,
            moves=store.views,
            absence_grace_s=settings.live_absence_grace_s,
        )
        await broadcast.start()
        authority.add_listener(rooms.committed)  # before the bot: people hear a move before its answer
        app.state.pictures = pictures = picture.Pictures(settings)
        app.state.push = push = PushService(settings, database, rooms)
        authority.add_listener(push.announce)  # only queues: the pushes go out off the move's path
        pool = load_bot_pool(settings)
        if pool is not None:
            pool.warm_up()
        bots = BotRunner(authority, store, pool, settings.bot_retry_max_s, settings.bot_lease_s)
        limiter = RateLimiter(settings.http_requests_per_second, settings.http_request_burst)
        creations = RateLimiter(settings.page_creations_per_minute / 60, settings.page_creation_burst)
        rematches = RateLimiter(settings.rematches_per_minute / 60, settings.rematch_burst)
        app.state.services = Services(
            settings,
            authority,
            store,
            rooms,
            bots,
            limiter,
            creations,
            ActionBudget(settings),
            broadcast,
            offers := Offers(authority, store, rooms, push, bots, rematches),
        )

        def expired(page_id: str) -> None:
            error = ApiError("page_expired", "this page expired: nobody played it past setup in time")
            rooms.close_page(page_id, error_message(error), CLOSE_PAGE_EXPIRED, error.message)

        sweeper = PageExpirySweeper(settings, database, expired)
        sweeper.start()
        # Clocks (issue 19): any downtime is credited to the running clocks before the first action,
        # then one alarm ends the pages whose time is up.
        heartbeat = Heartbeat(store, authority, settings.heartbeat_s)
        await heartbeat.start()
        app.state.timeouts = timeouts = TimeOuts(
            authority,
            store,
            settings.time_out_poll_s,
            trusted=lambda: heartbeat.trusted,
            remind=push.remind,
            offer_ended=offers.offer_ended,
        )
        authority.add_listener(timeouts.committed)
        authority.on_late_move = timeouts.late_move
        authority.on_write_unsure = rooms.write_unsure
        authority.on_created = timeouts.created
        await timeouts.start()
        # In the background: start-up does not wait for the pages a restart left at the bot's move.
        bots.resume_waiting_pages()
        # What start-up made lives as long as the process: frozen out of the garbage collector's passes.
        # A full pass walks every tracked object, and with a thousand live pages the modules, routes and
        # schemas made it a stall of every socket for hundreds of milliseconds (issue 12).
        gc.collect()
        gc.freeze()
        collector.pace_for_a_server()
        try:
            yield
        finally:
            timeouts.stop()
            await heartbeat.stop()
            await sweeper.stop()
            await bots.stop()
            await push.close()
            if pool is not None:
                pool.close()
            pictures.close()
            rooms.stop()
            await broadcast.close()
            await rooms.close_all(CLOSE_SERVICE_RESTART)
            close_pages(store, authority)
            database.dispose()

    app = DotfightApp(title="Dotfight", version=dotfight.__version__, lifespan=lifespan)
    install_error_handlers(app)
    app.add_middleware(BodySizeLimit, max_bytes=settings.max_body_bytes)
    # The web app's scripts and the snapshots shrink several times over; tiny answers stay as they are.
    app.add_middleware(GZipMiddleware, minimum_size=1024)
    if settings.allowed_origins:
        app.add_middleware(
            CORSMiddleware,
            allow_origins=settings.allowed_origins,
            allow_methods=["GET", "POST", "DELETE"],
            allow_headers=["Authorization", "Content-Type"],
        )
    # Outermost (added last): every answer, whichever route, mount or refusal made it, gets them.
    app.add_middleware(HeadAsGet)
    app.add_middleware(SecurityHeaders)
    app.include_router(health.router)
    app.include_router(pages.router)
    app.include_router(people.router)
    app.include_router(picture.router)
    app.include_router(card.router)
    app.include_router(push.router)
    fallback.install(app)  # after every API route

    app.include_router(page_html.router)  # /p/{id}: the app, with the page's link preview
    app.mount("/", WebFiles(settings.web_dir), name="web")
    return app
