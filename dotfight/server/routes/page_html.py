"""`GET /p/{id}`: the web app's page, with the page's own link preview (Open Graph and Twitter tags).

A link pasted in a chat is fetched by the chat's robot, which runs no script: the preview it shows comes
from these tags alone — the page's title, a line about the war so far and its picture (the PNG of
`routes/picture.py`, at an absolute URL on the configured public base, versioned so a preview of a page
still in play is not stuck on an old picture). Anything wrong with the page (unknown, expired, database
down) serves the app without them: the app then says so in words.
"""

from __future__ import annotations

import html
import logging
from pathlib import Path

from fastapi import APIRouter, Request
from fastapi.responses import HTMLResponse

from dotfight.server.deps import ServicesDep
from dotfight.server.errors import ApiError
from dotfight.server.page_view import LoadedPage
from dotfight.server.picture import png_size
from dotfight.server.routes.pages import PageId, public_base

logger = logging.getLogger(__name__)
router = APIRouter()

MODE_WORDS = {
    "local": "pass one phone",
    "bot": "against Dawood-bot",
    "link": "a shared link",
    "live": "live",
}


def _count(number: int, word: str) -> str:
    return f"{number} {word}" + ("" if number == 1 else "s")


def preview_text(page: LoadedPage) -> tuple[str, str]:
    """Returns the (title, description) of a page's link preview, in the game's words.

    >>> from datetime import UTC, datetime
    >>> from dotfight.engine import RuleSet, apply, new_page
    >>> from dotfight.server.page_view import PageMeta
    >>> state, _ = apply(new_page(RuleSet.preset("quick"), seed=7), "blue", {"type": "quick_setup"})
    >>> meta = PageMeta("abc", "link", "quick", {}, "0" * 32, "0" * 64, None, datetime.now(UTC))
    >>> preview_text(LoadedPage(meta, state))
    ('Dotfight — a page being set up', 'A quick page on a shared link: blue 24 soldiers standing, red 24.')
    """
    state = page.state
    standing = {side: sum(s.side == side and s.alive for s in state.soldiers) for side in ("blue", "red")}
    lines = len(state.ink)
    if state.phase == "over":
        winner = state.winner
        title = f"Dotfight — {winner.capitalize()} wins!" if winner else "Dotfight — a finished page"
    elif state.phase == "play":
        title = "Dotfight — a war in progress"
    else:
        title = "Dotfight — a page being set up"
    mode = MODE_WORDS.get(page.meta.mode, page.meta.mode)
    war = f"blue {_count(standing['blue'], 'soldier')} standing, red {standing['red']}"
    ink = f", after {_count(lines, 'line')} of ink" if lines else ""
    return title, f"A {page.meta.preset} page on {mode}: {war}{ink}."


def preview_tags(page: LoadedPage, base: str) -> str:
    """Returns the `<meta>` tags of a page's link preview; `base` is the public URL without a slash."""
    title, description = preview_text(page)
    page_id = page.meta.id
    width, height = png_size(page.state.rules)
    image = f"{base}/api/pages/{page_id}/picture.png?v={page.state.version}"
    properties = [
        ("og:type", "website"),
        ("og:site_name", "Dotfight"),
        ("og:title", title),
        ("og:description", description),
        ("og:url", f"{base}/p/{page_id}"),
        ("og:image", image),
        ("og:image:type", "image/png"),
        ("og:image:width", str(width)),
        ("og:image:height", str(height)),
        ("og:image:alt", f"The page drawn in blue and red ballpoint. {description}"),
    ]
    names = [
        ("twitter:card", "summary_large_image"),
        ("twitter:title", title),
        ("twitter:description", description),
        ("twitter:image", image),
    ]
    tags = [f'<meta property="{key}" content="{html.escape(value)}">' for key, value in properties]
    tags += [f'<meta name="{key}" content="{html.escape(value)}">' for key, value in names]
    return "\n  ".join(tags)


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


@router.get("/p/{page_id}", include_in_schema=False)
async def page_app(page_id: PageId, request: Request, services: ServicesDep) -> HTMLResponse:
    """Serves the web app for a page link, with the page's link preview in its head."""
    document = _index(request, services)
    try:
        page = await services.master.page(page_id)
    except ApiError as error:
        logger.debug("page %s: no link preview (%s)", page_id, error.code)
    else:
        document = with_tags(document, preview_tags(page, public_base(services.settings, request)))
    # The preview changes with every move: a shared link's HTML is never served from a stale cache.
    return HTMLResponse(document, headers={"Cache-Control": "no-cache"})
