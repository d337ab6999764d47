"""The page as a picture over HTTP: `GET /api/pages/{id}/picture.svg` and `.png`.

A picture is a function of the page's id and version, so it is cached by both, in memory and in the
client: its ETag names them (a matching `If-None-Match` is answered 304), an open page's picture is
revalidated on every use (`no-cache`), a finished page's is kept for a day.

Nothing of a drawing runs on the event loop: pictures are drawn in worker processes (`picture_worker`),
one per free worker at a time, each within a time budget, an SVG within a size budget; past either the
answer is 503 `unavailable` with a stable reason, never a stall. The SVG is kept and sent gzipped as the
worker made it. The memory cache is bounded in bytes, and each client address may fetch only so many
pictures a second (docs/SERVER.md, "The page as a picture").
"""

from __future__ import annotations

import asyncio
import gzip
from collections.abc import Callable
from functools import partial
from typing import Annotated

from fastapi import APIRouter, Depends, Request, Response
from starlette.requests import HTTPConnection

from dotfight.server.cache import LruCache
from dotfight.server.card import CardWords
from dotfight.server.deps import ServicesDep, client_key, refuse_if_waiting
from dotfight.server.errors import ApiError
from dotfight.server.limits import RateLimiter
from dotfight.server.page_view import LoadedPage
from dotfight.server.picture import PICTURE_FORMAT, PictureTooLarge, PictureUnavailable
from dotfight.server.picture_worker import Drawn, draw_by_value, draw_card_by_value
from dotfight.server.routes.pages import PageId
from dotfight.server.settings import Settings
from dotfight.server.workers import WorkerFailed, WorkerPool, WorkerTimeout

router = APIRouter(prefix="/api")

FINISHED_MAX_AGE = 86_400
PICTURE_HEADERS = {"Content-Security-Policy": "default-src 'none'", "X-Content-Type-Options": "nosniff"}
# Entries besides the byte bound (a page's SVG and PNG at one version are two), and refusals remembered
# (too large, or over the time budget: a version's drawing does not change) so asking again costs nothing.
CACHED_PICTURES = 4096
REMEMBERED_REFUSALS = 4096
# Drawings waiting or running per worker process; past them a new picture is refused at once (a wait
# bounded by a count, as a server's accept queue is, rather than by a timer on the queue).
QUEUED_PER_WORKER = 8

Key = tuple[str, int, str]  # page id, version, "svg", "png" or "card"


class Pictures:
    """The pictures of recent pages at their latest versions, each drawn once, off the event loop."""

    def __init__(self, settings: Settings) -> None:
        self._cache: LruCache[Key, bytes] = LruCache(
            CACHED_PICTURES, max_bytes=settings.picture_cache_bytes, size=len
        )
        self._refused: LruCache[Key, Callable[[], ApiError]] = LruCache(REMEMBERED_REFUSALS)
        self._pool = WorkerPool(
            "pictures",
            settings.picture_processes,
            settings.picture_timeout_s,
            preload=["dotfight.server.picture_worker"],
        )
        self._slots = asyncio.Semaphore(settings.picture_processes)
        self._queue = settings.picture_processes * QUEUED_PER_WORKER
        self._max_bytes = settings.picture_max_bytes
        self._drawing: dict[Key, asyncio.Future[bytes]] = {}
        self.limiter = RateLimiter(settings.pictures_per_address_per_second, settings.picture_burst)

    @property
    def cached_bytes(self) -> int:
        """The bytes of pictures held in memory now."""
        return self._cache.bytes

    async def svg_gzip(self, page: LoadedPage) -> bytes:
        """Returns the page's SVG at its version, gzipped."""
        return await self._picture(page, "svg")

    async def png(self, page: LoadedPage) -> bytes:
        """Returns the page's PNG at its version."""
        return await self._picture(page, "png")

    async def card(self, page: LoadedPage, words: CardWords) -> bytes:
        """Returns the page's link-preview card (a PNG) at its version: drawn, budgeted, cached and
        refused like the pictures, by the same workers."""
        return await self._picture(page, "card", words)

    async def _picture(self, page: LoadedPage, kind: str, words: CardWords | None = None) -> bytes:
        key = (page.meta.id, page.state.version, kind)
        cached = self._cache.get(key)
        if cached is not None:
            return cached
        refused = self._refused.get(key)
        if refused is not None:
            raise refused()
        # Clients asking for the same picture at once share one drawing.
        drawing = self._drawing.get(key)
        if drawing is None:
            if len(self._drawing) >= self._queue:
                raise ApiError(
                    "unavailable",
                    "the server is busy drawing other pictures; try again in a moment",
                    reason="pictures_busy",
                    headers={"Retry-After": "1"},
                )
            drawing = asyncio.ensure_future(self._draw(page, kind, words))
            self._drawing[key] = drawing
            drawing.add_done_callback(partial(self._drawn, key))
        return await asyncio.shield(drawing)

    def _drawn(self, key: Key, drawing: asyncio.Future[bytes]) -> None:
        self._drawing.pop(key, None)
        if not drawing.cancelled():
            drawing.exception()  # retrieved: every waiter may have gone

    async def _draw(self, page: LoadedPage, kind: str, words: CardWords | None) -> bytes:
        await self._slots.acquire()
        try:
            # The state goes to the worker by value (pickled by the pool's own thread, not this loop).
            if words is not None:
                card: bytes = await self._pool.run(
                    draw_card_by_value, page.state, page.meta.id, words, self._max_bytes
                )
                self._cache.put((page.meta.id, page.state.version, kind), card)
                return card
            drawn: Drawn = await self._pool.run(
                draw_by_value, page.state, page.meta.id, kind == "png", self._max_bytes
            )
        except PictureTooLarge:
            for other in ("svg", "png", "card"):  # the PNG and the card are made from the SVG
                self._refused.put((page.meta.id, page.state.version, other), _too_large)
            raise _too_large() from None
        except PictureUnavailable as error:
            raise ApiError("unavailable", str(error), reason="no_rasteriser") from None
        except WorkerTimeout:
            self._refused.put((page.meta.id, page.state.version, kind), _too_slow)
            raise _too_slow() from None
        except WorkerFailed:
            raise ApiError("unavailable", "drawing this picture failed", reason="picture_failed") from None
        finally:
            self._slots.release()
        self._cache.put((page.meta.id, page.state.version, "svg"), drawn.svg_gzip)
        if drawn.png is not None:
            self._cache.put((page.meta.id, page.state.version, "png"), drawn.png)
        return drawn.png if kind == "png" and drawn.png is not None else drawn.svg_gzip

    def close(self) -> None:
        """Stops the worker processes (at shutdown)."""
        self._pool.close()


def _too_large() -> ApiError:
    return ApiError("unavailable", "this page is too large to draw as a picture", reason="picture_too_large")


def _too_slow() -> ApiError:
    # Remembered for this version: the page's next move may be drawn again.
    return ApiError(
        "unavailable",
        "drawing this picture took too long; it is drawn again once the page moves on",
        reason="picture_timeout",
        headers={"Retry-After": "10"},
    )


def get_pictures(connection: HTTPConnection) -> Pictures:
    """Returns the app's pictures (made at start-up), after spending one of the client's picture tokens."""
    pictures: Pictures = connection.app.state.pictures
    wait = pictures.limiter.wait(client_key(connection))
    refuse_if_waiting(wait, "too many pictures from this address; wait a moment")
    return pictures


PicturesDep = Annotated[Pictures, Depends(get_pictures)]


def picture_etag(page: LoadedPage, kind: str) -> str:
    """Returns the ETag of a page's picture: its drawing format, id, version and kind."""
    return f'"{kind}{PICTURE_FORMAT}-{page.meta.id}-{page.state.version}"'


def picture_headers(request: Request, page: LoadedPage, kind: str) -> tuple[dict[str, str], bool]:
    """Returns a picture's caching headers, and whether the client already holds it (its ETag)."""
    etag = picture_etag(page, kind)
    control = f"public, max-age={FINISHED_MAX_AGE}" if page.over else "public, no-cache"
    # The picture is drawn by the server alone, but an SVG opened by itself is a document: it may load
    # nothing and run nothing.
    headers = {"ETag": etag, "Cache-Control": control, **PICTURE_HEADERS}
    wanted = request.headers.get("if-none-match", "")
    held = etag in (tag.strip().removeprefix("W/") for tag in wanted.split(","))
    return headers, held


@router.get("/pages/{page_id}/picture.svg")
async def picture_svg(
    page_id: PageId, request: Request, services: ServicesDep, pictures: PicturesDep
) -> Response:
    """Answers the page drawn as an SVG in the pen style of the web app (gzipped when the client takes
    it, as the worker made it; unzipped here only for a client that does not)."""
    page = await services.authority.page(page_id)
    headers, held = picture_headers(request, page, "svg")
    if held:
        return Response(status_code=304, headers=headers)
    body = await pictures.svg_gzip(page)
    if "gzip" in request.headers.get("accept-encoding", ""):
        # An answer with its Content-Encoding passes the gzip middleware untouched, Vary and all.
        zipped = {**headers, "Content-Encoding": "gzip", "Vary": "Accept-Encoding"}
        return Response(body, media_type="image/svg+xml", headers=zipped)
    # The gzip middleware adds the Vary of a plain answer (an SVG is always over its 1 KB minimum).
    return Response(gzip.decompress(body), media_type="image/svg+xml", headers=headers)


@router.get("/pages/{page_id}/picture.png")
async def picture_png(
    page_id: PageId, request: Request, services: ServicesDep, pictures: PicturesDep
) -> Response:
    """Answers the page drawn as a PNG (the SVG rasterised; the preview of a shared link)."""
    page = await services.authority.page(page_id)
    headers, held = picture_headers(request, page, "png")
    if held:
        return Response(status_code=304, headers=headers)
    return Response(await pictures.png(page), media_type="image/png", headers=headers)
