"""`GET /p/{id}` and `GET /`: the web app, with the page's own link preview (Open Graph and Twitter tags),
or on the cover the game's.

A link pasted in a chat is fetched by the chat's robot, which runs no script: the preview it shows comes
from these tags alone — the page's title, a line about the war so far and its card (the 1.91:1 PNG of
`routes/card.py`: the whole page beside its score, at an absolute URL on the configured public base,
versioned so a preview of a page still in play is not stuck on an old picture). Anything wrong with
the page (unknown, expired, database down) serves the app without them: the app then says so in words.
"""

from __future__ import annotations

import hashlib
import html
import logging
from pathlib import Path

from fastapi import APIRouter, Request, Response
from fastapi.responses import HTMLResponse

from dotfight.engine import State
from dotfight.server.card import CARD_SIZE
from dotfight.server.deps import ServicesDep
from dotfight.server.errors import ApiError
from dotfight.server.page_view import LoadedPage
from dotfight.server.pages.errors import PageError
from dotfight.server.routes.pages import PageId, public_base
from dotfight.store.records import StoreUnavailable

logger = logging.getLogger(__name__)
router = APIRouter()

# How each way of playing reads after "A Quick page …" (the app's words for modes, in a sentence).
MODE_PHRASES = {
    "local": "played on one phone",
    "bot": "against Dawood-bot",
    "link": "played by a shared link",
    "live": "played live",
}
# The page's size as the app names it (web/js/words.js); Dawood's own reads as a size of his.
PRESET_PHRASES = {
    "quick": "A Quick page",
    "classic": "A Classic page",
    "custom": "A Custom page",
    "dawood": "A page of Dawood's own size",
}
PRESET_NAMES = {"quick": "Quick", "classic": "Classic", "custom": "Custom", "dawood": "Dawood's own"}
MODE_NAMES = {
    "local": "on one phone",
    "bot": "against Dawood-bot",
    "link": "by a shared link",
    "live": "live",
}

COVER_TITLE = "Dotfight — the pen-and-paper war game"
COVER_DESCRIPTION = (
    "The war game from the back pages of school exercise books, on your phone: draw bases full of "
    "soldiers, flick one a turn to snipe through the enemy or lunge along the line. On one phone, "
    "against Dawood-bot or by a shared link."
)
COVER_IMAGE = ("/icons/icon-512.png", 512, 512)


def _count(number: int, word: str) -> str:
    return f"{number} {word}" + ("" if number == 1 else "s")


def preview_heading(state: State) -> str:
    """Returns what the page is now, in a few words: who won, a war in progress, or a page being set up."""
    if state.phase == "over":
        return f"{state.winner.capitalize()} wins!" if state.winner else "A finished page"
    return "A war in progress" if state.phase == "play" else "A page being set up"


def preview_kind(page: LoadedPage) -> str:
    """Returns the page's size and way of playing, as the card names them: "Quick · against Dawood-bot"."""
    meta = page.meta
    return f"{PRESET_NAMES.get(meta.preset, meta.preset)} · {MODE_NAMES.get(meta.mode, meta.mode)}"


def preview_text(page: LoadedPage) -> tuple[str, str]:
    """Returns the (title, description) of a page's link preview, in the game's words.

    >>> from datetime import UTC, datetime
    >>> from dotfight.engine import RuleSet, apply, new_page
    >>> from dotfight.store.records import PageRecord
    >>> state, _ = apply(new_page(RuleSet.preset("quick"), seed=7), "blue", {"type": "quick_setup"})
    >>> meta = PageRecord("abc", "bot", "quick", {}, "0" * 32, "0" * 64, None, datetime.now(UTC))
    >>> preview_text(LoadedPage(meta, state))
    ('Dotfight — a page being set up', 'A Quick page against Dawood-bot: blue 24 soldiers standing, red 24.')
    """
    state = page.state
    standing = {side: sum(s.side == side and s.alive for s in state.soldiers) for side in ("blue", "red")}
    lines = len(state.ink)
    heading = preview_heading(state)
    title = f"Dotfight — {heading if heading.endswith('!') else heading[0].lower() + heading[1:]}"
    meta = page.meta
    size = PRESET_PHRASES.get(meta.preset, f"A {meta.preset} page")
    mode = MODE_PHRASES.get(meta.mode, meta.mode)
    war = f"blue {_count(standing['blue'], 'soldier')} standing, red {standing['red']}"
    ink = f", after {_count(lines, 'line')} of ink" if lines else ""
    return title, f"{size} {mode}: {war}{ink}."


def _meta_tags(
    card: str, title: str, description: str, url: str, image: tuple[str, int, int], alt: str
) -> str:
    """The Open Graph and Twitter `<meta>` tags of one link preview (`card`: the Twitter card's kind)."""
    src, width, height = image
    properties = [
        ("og:type", "website"),
        ("og:site_name", "Dotfight"),
        ("og:title", title),
        ("og:description", description),
        ("og:url", url),
        ("og:image", src),
        ("og:image:type", "image/png"),
        ("og:image:width", str(width)),
        ("og:image:height", str(height)),
        ("og:image:alt", alt),
    ]
    names = [
        ("twitter:card", card),
        ("twitter:title", title),
        ("twitter:description", description),
        ("twitter:image", src),
        ("twitter:image:alt", alt),
    ]
    tags = [f'<meta property="{key}" content="{html.escape(value)}">' for key, value in properties]
    tags += [f'<meta name="{key}" content="{html.escape(value)}">' for key, value in names]
    return "\n  ".join(tags)


def preview_tags(page: LoadedPage, base: str) -> str:
    """Returns the `<meta>` tags of a page's link preview; `base` is the public URL without a slash.

    The image is the page's card (`card.py`, 1.91:1 as `summary_large_image` shows it), not the
    portrait picture a chat app would crop.
    """
    title, description = preview_text(page)
    page_id = page.meta.id
    width, height = CARD_SIZE
    image = (f"{base}/api/pages/{page_id}/card.png?v={page.state.version}", width, height)
    alt = f"The page drawn in blue and red ballpoint, beside its score. {description}"
    return _meta_tags("summary_large_image", title, description, f"{base}/p/{page_id}", image, alt)


def cover_tags(base: str) -> str:
    """Returns the `<meta>` tags of the cover's link preview: the game in a line and its icon (a square
    `summary` card, the shape of the icon)."""
    path, width, height = COVER_IMAGE
    alt = "A ring of blue soldier dots, a line of ink and a red soldier crossed out, in ballpoint."
    return _meta_tags(
        "summary", COVER_TITLE, COVER_DESCRIPTION, f"{base}/", (f"{base}{path}", width, height), alt
    )


def with_tags(document: str, tags: str) -> str:
    """Puts the tags at the end of the document's head (after its title when it has no closing head).

    >>> with_tags("<head><title>T</title></head><body>", "<meta>")
    '<head><title>T</title>  <meta>\\n</head><body>'
    """
    lower = document.lower()
    for marker, after in (("</head>", False), ("</title>", True)):
        at = lower.find(marker)
        if at >= 0:
            at += len(marker) if after else 0
            return f"{document[:at]}  {tags}\n{document[at:]}"
    return f"{tags}\n{document}"


def _index(request: Request, services: ServicesDep) -> str:
    index: Path = services.settings.web_dir / "index.html"
    if not index.is_file():
        raise ApiError("not_found", "the web app is not installed")
    return index.read_text(encoding="utf-8")


def _revalidated(request: Request, document: str) -> Response:
    """Answers a document with `no-cache` and an ETag of its bytes (304 when the client holds them),
    as the web app's static files are served (`static.py`)."""
    etag = f'"{hashlib.sha256(document.encode()).hexdigest()[:16]}"'
    headers = {"Cache-Control": "no-cache", "ETag": etag}
    wanted = request.headers.get("if-none-match", "")
    if etag in (tag.strip().removeprefix("W/") for tag in wanted.split(",")):
        return Response(status_code=304, headers=headers)
    return HTMLResponse(document, headers=headers)


@router.get("/", include_in_schema=False)
async def cover_app(request: Request, services: ServicesDep) -> Response:
    """Serves the web app's cover with the game's own link preview in its head."""
    document = with_tags(_index(request, services), cover_tags(public_base(services.settings, request)))
    return _revalidated(request, document)


@router.get("/p/{page_id}", include_in_schema=False)
async def page_app(page_id: PageId, request: Request, services: ServicesDep) -> HTMLResponse:
    """Serves the web app for a page link, with the page's link preview in its head."""
    document = _index(request, services)
    try:
        page = await services.authority.page(page_id)
    except (PageError, StoreUnavailable) as error:
        logger.debug("page %s: no link preview (%s)", page_id, error)
    else:
        document = with_tags(document, preview_tags(page, public_base(services.settings, request)))
    # The preview changes with every move: a shared link's HTML is never served from a stale cache.
    return HTMLResponse(document, headers={"Cache-Control": "no-cache"})
