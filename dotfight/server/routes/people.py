"""HTTP routes of what two people of a page do besides moving (issue 19): the rematch (`/rematch`:
offer or accept, withdraw or decline, where it stands) and the phrases (`/say`, `/said`).

A rematch makes a page without the page-creation limit (`CreationRateLimited` is not among its
dependencies: a page has at most one rematch). A rematch of a rematch is a page too, so the rematch
requests of one address have a rate of their own (`RematchRateLimited`, more generous than creation's).
"""

from __future__ import annotations

from typing import Any

from fastapi import APIRouter, Depends, Request
from starlette.requests import HTTPConnection

from dotfight.server.deps import (
    BearerToken,
    JsonBody,
    RateLimited,
    ReaderToken,
    ServicesDep,
    client_key,
    refuse_if_waiting,
)
from dotfight.server.errors import ApiError
from dotfight.server.pages.authority import Seat
from dotfight.server.routes.pages import PageId, public_base
from dotfight.server.schemas import SayIn
from dotfight.server.services import Services

router = APIRouter(prefix="/api")


def rematch_limit(connection: HTTPConnection, services: ServicesDep) -> None:
    """Refuses a client that asks for rematches faster than `rematches_per_minute` (after a burst of
    `rematch_burst`) with 429 rate_limited and a Retry-After."""
    wait = services.offers.rematches.wait(client_key(connection))
    refuse_if_waiting(wait, "too many rematches from this address; wait a moment")


RematchRateLimited = Depends(rematch_limit)


async def seat_of(services: Services, page_id: str, token: str | None, doing: str) -> Seat:
    """The seat of the bearer token on the page; `bad_token` without one (watchers offer and say nothing)."""
    if token is None:
        raise ApiError("bad_token", f"{doing} needs a seat token ('Authorization: Bearer <token>')")
    return await services.authority.seat(page_id, token)


@router.get("/pages/{page_id}/rematch")
async def rematch_standing(
    page_id: PageId, request: Request, services: ServicesDep, token: ReaderToken
) -> dict[str, Any]:
    """Answers `{offered_by, page}`; once the rematch is made, with a seat's token of this page, also that
    seat's own new seat: `side`, `seat` (its token) and `links` (its own link and the watch link)."""
    answer = await services.offers.standing(page_id)
    if token is None or answer["page"] is None:
        return answer
    new_seat = await services.offers.new_seat(page_id, token)
    if new_seat is None:
        return answer
    base = public_base(services.settings, request)
    own = f"{base}/p/{new_seat.page}#seat={new_seat.token}"
    links = {side: own if new_seat.side in (side, "both") else None for side in ("blue", "red")}
    links["watch"] = f"{base}/p/{new_seat.page}"
    return {**answer, "side": new_seat.side, "seat": new_seat.token, "links": links}


@router.post("/pages/{page_id}/rematch", dependencies=[RateLimited, RematchRateLimited])
async def rematch_offer(page_id: PageId, services: ServicesDep, token: BearerToken) -> dict[str, Any]:
    """Offers a rematch of a finished page, or accepts the other seat's offer (against Dawood-bot and on
    one phone it is made at once); answers `{offered_by, page}`."""
    seat = await seat_of(services, page_id, token, "a rematch")
    assert token is not None  # seat_of refuses a request without one
    return await services.offers.offer(page_id, seat, token)


@router.delete("/pages/{page_id}/rematch", dependencies=[RateLimited, RematchRateLimited])
async def rematch_withdraw(page_id: PageId, services: ServicesDep, token: BearerToken) -> dict[str, Any]:
    """Withdraws one's own offer or declines the other seat's; answers `{offered_by, page}`."""
    seat = await seat_of(services, page_id, token, "a rematch")
    return await services.offers.withdraw(page_id, seat)


@router.post("/pages/{page_id}/say", dependencies=[RateLimited, JsonBody])
async def say(page_id: PageId, body: SayIn, services: ServicesDep, token: BearerToken) -> dict[str, Any]:
    """Says one of the fixed phrases to every socket of the page; answers `{side, phrase, at, version}`."""
    seat = await seat_of(services, page_id, token, "saying something")
    return await services.offers.say(page_id, seat, body.phrase)


@router.get("/pages/{page_id}/said")
async def said(page_id: PageId, services: ServicesDep) -> dict[str, Any]:
    """Answers every phrase said on the page, in order: `{said: [{side, phrase, at, version}]}`."""
    return {"said": await services.offers.said(page_id)}
