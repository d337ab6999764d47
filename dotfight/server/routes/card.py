"""The link preview's card over HTTP: `GET /api/pages/{id}/card.png` (see `card.py`).

A card is a picture like the page's own (`routes/picture.py`): drawn by the same worker processes within
the same time and size budgets, cached in the same byte-bounded memory, counted against the same
per-address limit, and cached in the client by an ETag naming the card's and the picture's formats, the
id and the version.
"""

from __future__ import annotations

from fastapi import APIRouter, Request, Response

from dotfight.server.card import CARD_FORMAT, card_words
from dotfight.server.deps import ServicesDep
from dotfight.server.routes.page_html import preview_heading, preview_kind
from dotfight.server.routes.pages import PageId
from dotfight.server.routes.picture import PicturesDep, picture_headers

router = APIRouter(prefix="/api")


@router.get("/pages/{page_id}/card.png")
async def page_card(
    page_id: PageId, request: Request, services: ServicesDep, pictures: PicturesDep
) -> Response:
    """Answers the page's link-preview card: the whole page beside its score, 1200 × 630."""
    page = await services.authority.page(page_id)
    headers, held = picture_headers(request, page, f"card{CARD_FORMAT}.")
    if held:
        return Response(status_code=304, headers=headers)
    words = card_words(page.state, preview_heading(page.state), preview_kind(page))
    return Response(await pictures.card(page, words), media_type="image/png", headers=headers)
