"""The link preview's card over HTTP: `GET /api/pages/{id}/card.png` (see `card.py`).

Cached like the page's picture (`routes/picture.py`): by the page's id and version, in memory and in the
client (its ETag names the card's and the picture's formats, the id and the version). Cards are made
in a worker thread, one at a time, so a burst of link previews cannot take the server's cores.
"""

from __future__ import annotations

import asyncio
from functools import partial
from typing import Annotated

from fastapi import APIRouter, Depends, Request, Response
from starlette.requests import HTTPConnection

from dotfight.server.cache import LruCache
from dotfight.server.card import CARD_FORMAT, CARD_SIZE, card_svg, card_words
from dotfight.server.deps import ServicesDep
from dotfight.server.errors import ApiError
from dotfight.server.page_view import LoadedPage
from dotfight.server.picture import PictureUnavailable, svg_to_png
from dotfight.server.routes.page_html import preview_heading, preview_kind
from dotfight.server.routes.pages import PageId
from dotfight.server.routes.picture import _answer

router = APIRouter(prefix="/api")

CACHED_CARDS = 32


def draw_card(page: LoadedPage) -> bytes:
    """Draws a page's card as a PNG (raises PictureUnavailable without a rasteriser)."""
    words = card_words(page.state, preview_heading(page.state), preview_kind(page))
    return svg_to_png(card_svg(page.state, page.meta.id, words), CARD_SIZE)


class Cards:
    """The cards of recent pages at their latest versions, drawn once each, one at a time."""

    def __init__(self) -> None:
        self._pngs: LruCache[tuple[str, int], bytes] = LruCache(CACHED_CARDS)
        self._rendering = asyncio.Semaphore(1)

    async def png(self, page: LoadedPage) -> bytes:
        """Returns the page's card at its version (drawn off the event loop)."""
        key = (page.meta.id, page.state.version)
        png = self._pngs.get(key)
        if png is None:
            async with self._rendering:
                png = self._pngs.get(key)
                if png is None:
                    try:
                        png = await asyncio.to_thread(draw_card, page)
                    except PictureUnavailable as error:
                        raise ApiError("unavailable", str(error)) from None
                    self._pngs.put(key, png)
        return png


def get_cards(connection: HTTPConnection) -> Cards:
    """Returns the app's card cache (made on first use)."""
    state = connection.app.state
    cards: Cards | None = getattr(state, "cards", None)
    if cards is None:
        cards = Cards()
        state.cards = cards
    return cards


CardsDep = Annotated[Cards, Depends(get_cards)]


@router.get("/pages/{page_id}/card.png")
async def page_card(page_id: PageId, request: Request, services: ServicesDep, cards: CardsDep) -> Response:
    """Answers the page's link-preview card: the whole page beside its score, 1200 × 630."""
    page = await services.master.page(page_id)
    return await _answer(request, page, f"card{CARD_FORMAT}.", "image/png", partial(cards.png, page))
