"""The page as a picture over HTTP: `GET /api/pages/{id}/picture.svg` and `.png`.

A picture is a function of the page's id and version, so it is cached by both, in memory and in the
client: its ETag names them (a matching `If-None-Match` is answered 304), an open page's picture is
revalidated on every use (`no-cache`), a finished page's is kept for a day. PNGs are made in a worker
thread, at most two at a time, so a burst of link previews cannot take the server's cores.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable
from functools import partial
from typing import Annotated

from fastapi import APIRouter, Depends, Request, Response
from starlette.requests import HTTPConnection

from dotfight.server.cache import LruCache
from dotfight.server.deps import ServicesDep
from dotfight.server.errors import ApiError
from dotfight.server.page_view import LoadedPage
from dotfight.server.picture import PICTURE_FORMAT, PictureUnavailable, page_svg, png_size, svg_to_png
from dotfight.server.routes.pages import PageId

router = APIRouter(prefix="/api")

# Pictures kept in memory (SVGs are a few hundred KB before gzip, PNGs about 150 KB).
CACHED_PICTURES = 32
PNG_RENDERS_AT_ONCE = 2
FINISHED_MAX_AGE = 86_400
PICTURE_HEADERS = {"Content-Security-Policy": "default-src 'none'", "X-Content-Type-Options": "nosniff"}


class Pictures:
    """The pictures of recent pages at their latest versions, drawn once each."""

    def __init__(self) -> None:
        self._svgs: LruCache[tuple[str, int], str] = LruCache(CACHED_PICTURES)
        self._pngs: LruCache[tuple[str, int], bytes] = LruCache(CACHED_PICTURES)
        self._rendering = asyncio.Semaphore(PNG_RENDERS_AT_ONCE)

    def svg(self, page: LoadedPage) -> str:
        """Returns the page's SVG at its version."""
        key = (page.meta.id, page.state.version)
        svg = self._svgs.get(key)
        if svg is None:
            svg = page_svg(page.state, page.meta.id)
            self._svgs.put(key, svg)
        return svg

    async def png(self, page: LoadedPage) -> bytes:
        """Returns the page's PNG at its version (rasterised off the event loop)."""
        key = (page.meta.id, page.state.version)
        png = self._pngs.get(key)
        if png is None:
            async with self._rendering:
                png = self._pngs.get(key)
                if png is None:
                    svg = self.svg(page)
                    try:
                        png = await asyncio.to_thread(svg_to_png, svg, png_size(page.state.rules))
                    except PictureUnavailable as error:
                        raise ApiError("unavailable", str(error)) from None
                    self._pngs.put(key, png)
        return png


def get_pictures(connection: HTTPConnection) -> Pictures:
    """Returns the app's picture cache (made on first use)."""
    state = connection.app.state
    pictures: Pictures | None = getattr(state, "pictures", None)
    if pictures is None:
        pictures = Pictures()
        state.pictures = pictures
    return pictures


PicturesDep = Annotated[Pictures, Depends(get_pictures)]


def picture_etag(page: LoadedPage, kind: str) -> str:
    """Returns the ETag of a page's picture: its drawing format, id, version and kind."""
    return f'"{kind}{PICTURE_FORMAT}-{page.meta.id}-{page.state.version}"'


async def _answer(
    request: Request, page: LoadedPage, kind: str, media_type: str, draw: Callable[[], Awaitable[str | bytes]]
) -> Response:
    """Answers a picture with its caching headers, or 304 when the client already holds it."""
    etag = picture_etag(page, kind)
    control = f"public, max-age={FINISHED_MAX_AGE}" if page.over else "public, no-cache"
    # The picture is drawn by the server alone, but an SVG opened by itself is a document: it may load
    # nothing and run nothing.
    headers = {"ETag": etag, "Cache-Control": control, **PICTURE_HEADERS}
    wanted = request.headers.get("if-none-match", "")
    if etag in (tag.strip().removeprefix("W/") for tag in wanted.split(",")):
        return Response(status_code=304, headers=headers)
    return Response(await draw(), media_type=media_type, headers=headers)


@router.get("/pages/{page_id}/picture.svg")
async def picture_svg(
    page_id: PageId, request: Request, services: ServicesDep, pictures: PicturesDep
) -> Response:
    """Answers the page drawn as an SVG in the pen style of the web app."""
    page = await services.master.page(page_id)

    async def draw() -> str:
        return pictures.svg(page)

    return await _answer(request, page, "svg", "image/svg+xml", draw)


@router.get("/pages/{page_id}/picture.png")
async def picture_png(
    page_id: PageId, request: Request, services: ServicesDep, pictures: PicturesDep
) -> Response:
    """Answers the page drawn as a PNG (the SVG rasterised; the preview of a shared link)."""
    page = await services.master.page(page_id)
    return await _answer(request, page, "png", "image/png", partial(pictures.png, page))
