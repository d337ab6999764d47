"""HTTP routes of pages: create, read, log, act and the exercise book's summaries."""

from __future__ import annotations

import contextlib
import re
import secrets
from typing import Annotated, Any

from fastapi import APIRouter, Path, Query, Request
from fastapi.responses import JSONResponse, Response

from dotfight.server.arrival import arrived_at
from dotfight.server.claims import answer_claim, is_claim
from dotfight.server.deps import (
    BearerToken,
    CreationRateLimited,
    JsonBody,
    RateLimited,
    ReaderToken,
    ServicesDep,
    client_key,
)
from dotfight.server.errors import ApiError
from dotfight.server.page_view import BOT_SEED_BITS, log_with_cross_sides
from dotfight.server.pages.authority import Arrival
from dotfight.server.pages.errors import BadToken
from dotfight.server.schemas import (
    MAX_STORED_INT,
    ActionIn,
    ActionResult,
    PageCreate,
    PageCreated,
    PageSummary,
)
from dotfight.server.settings import Settings
from dotfight.store.views import LogSlice

router = APIRouter(prefix="/api")

PAGE_ID_PATTERN = r"^[A-Za-z0-9_-]{1,32}$"
PageId = Annotated[str, Path(pattern=PAGE_ID_PATTERN)]


def public_base(settings: Settings, request: Request) -> str:
    """Returns the base of absolute links: the configured public URL, else the request's own."""
    base = settings.public_url or str(request.base_url)
    return base.rstrip("/")


@router.post("/pages", status_code=201, dependencies=[RateLimited, CreationRateLimited, JsonBody])
async def create_page(body: PageCreate, request: Request, services: ServicesDep) -> PageCreated:
    """Creates a page and answers its seats, links, seed commitment and first snapshot."""
    bot_seed = None
    if body.mode == "bot":
        if not services.bots.available:
            raise ApiError("mode_unavailable", "Dawood-bot cannot play on this server yet")
        bot_seed = secrets.randbits(BOT_SEED_BITS)
    created = await services.authority.create(body.command(bot_seed))
    services.bots.wake(created.page)
    page_id = created.page.meta.id
    base = public_base(services.settings, request)
    links: dict[str, Any] = {
        side: None if token is None else f"{base}/p/{page_id}#seat={token}"
        for side, token in created.seats.items()
    }
    links["watch"] = f"{base}/p/{page_id}"
    snapshot = created.page.public_snapshot()
    return PageCreated.model_validate(
        {
            "id": page_id,
            "seats": created.seats,
            "links": links,
            "seed_sha256": created.page.meta.seed_sha256,
            "snapshot": snapshot,
        }
    )


@router.get("/pages")
async def page_summaries(
    services: ServicesDep, ids: Annotated[str, Query(max_length=2000)]
) -> list[PageSummary]:
    """Answers short summaries of the pages named (unknown ids are skipped)."""
    wanted = list(dict.fromkeys(part.strip() for part in ids.split(",") if part.strip()))
    limit = services.settings.max_summary_ids
    if len(wanted) > limit:
        raise ApiError("bad_request", f"ask for at most {limit} pages at once")
    wanted = [page_id for page_id in wanted if re.fullmatch(PAGE_ID_PATTERN, page_id)]
    rows = await services.store.views.summaries(wanted)
    return [PageSummary.model_validate(row) for row in rows]


@router.get("/pages/{page_id}")
async def page_snapshot(page_id: PageId, services: ServicesDep, token: ReaderToken) -> JSONResponse:
    """Answers the page's snapshot to anyone; with a seat token, also which seat it holds (`seat`)."""
    page = await services.authority.page(page_id)
    snapshot = page.public_snapshot()
    if token is not None:
        # Any holder of the id may read the page: a token that holds no seat here just adds nothing.
        with contextlib.suppress(BadToken):
            snapshot["seat"] = (await services.authority.seat(page_id, token)).label
    services.bots.wake(page)  # e.g. after a restart while it was the bot's move
    return JSONResponse(snapshot)


@router.get("/pages/{page_id}/log")
async def page_log(
    page_id: PageId,
    services: ServicesDep,
    start: Annotated[int, Query(alias="from", ge=1, le=MAX_STORED_INT)] = 1,
    limit: Annotated[int | None, Query(ge=1, le=MAX_STORED_INT)] = None,
) -> Response:
    """Answers the page's actions with their events, in order, from version `from` (default 1), at most
    `limit` of them (default and maximum: settings), and `next`: the `from` of the following stretch,
    or null at the page's end (the seed once the page is over)."""
    settings = services.settings
    size = min(limit or settings.log_page_default, settings.log_page_max)
    # The log is read after the page: entries newer than the page's version are left out, so the seed
    # is never shown beside a log that does not end the page.
    page = await services.authority.page(page_id)
    meta = page.meta
    head = {
        "id": meta.id,
        "mode": meta.mode,
        "preset": meta.preset,
        "rules": meta.rules,
        "seed_sha256": meta.seed_sha256,
        "seed": page.revealed_seed(),
    }
    text = await services.store.views.log(head, page.state.version, LogSlice(start, size))
    # The crosses' colours as on every other road to the browser (page_view.with_cross_sides).
    return Response(log_with_cross_sides(page.state, text), media_type="application/json")


@router.post("/pages/{page_id}/actions", response_model=ActionResult, dependencies=[RateLimited, JsonBody])
async def page_action(
    page_id: PageId, body: ActionIn, request: Request, services: ServicesDep, token: BearerToken
) -> ActionResult | JSONResponse:
    """Applies one action for the seat of the bearer token at the version the client saw; on a page with
    a clock the answer carries its `clock`, and the action is charged from when the request began."""
    arrival = Arrival(arrived_at(request.scope, services.authority.now))
    if token is None:
        raise ApiError("bad_token", "acting needs a seat token ('Authorization: Bearer <token>')")
    seat = await services.authority.seat(page_id, token)
    services.actions.spend(page_id, seat.label, client_key(request))
    if is_claim(body.action):
        applied = await answer_claim(services, page_id, seat, body.version, body.move_id)
    else:
        applied = await services.authority.act(
            page_id, seat, body.action, body.version, body.move_id, arrival
        )
    if applied.clock is not None:
        return JSONResponse({"version": applied.version, "events": applied.events, "clock": applied.clock})
    return ActionResult(version=applied.version, events=applied.events)
