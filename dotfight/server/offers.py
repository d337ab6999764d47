"""Rematch offers and phrases of finished and running pages (issue 19, items 5 and 6): the service
between the routes (`routes/people.py`, the page socket's `say`) and the pure model (`people.rematch`,
`people.phrases`), the store (`PeopleStore`: the offer, the accept that makes the new page in the same
transaction, the phrase cap), every socket of the page on every process (`Rooms.tell`) and Web Push.

The store decides every race: two seats offering at once, or one seat's accept sent to two processes,
are put in line by its row lock, and the loser decides again on what the winner committed (an offer met
by the other's becomes an accept; a second accept is answered with the page the first made). A page thus
has at most one rematch.

Each seat gets its own seat on the new page and only through its own old token. The server keeps tokens
only as their sha256, and the seat that offered is not there when the other accepts, so a rematch's
tokens are derived, not drawn: `rematch_token(old seat's hash, old page id)`, an HMAC only the server (and
a reader of its database) can work out. `GET …/rematch` with an old token works out that seat's new token
again; nobody holding the other seat's token can.
"""

from __future__ import annotations

import asyncio
import base64
import hashlib
import hmac
import secrets
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from functools import partial
from typing import Any, Protocol, cast

from dotfight.engine import Side, other_side
from dotfight.server import tokens
from dotfight.server.bot_runner import BotRunner
from dotfight.server.errors import ApiError
from dotfight.server.limits import RateLimiter
from dotfight.server.page_view import BOT_SEED_BITS, LoadedPage
from dotfight.server.pages.authority import CreatePage, PageAuthority, Seat, engine_refusal
from dotfight.server.pages.errors import BadToken
from dotfight.server.people.errors import PeopleError
from dotfight.server.people.phrases import PHRASE_CAP_PER_SIDE, TooManyPhrases, parse_phrase
from dotfight.server.people.rematch import (
    OFFER_LIFETIME_S,
    OldPage,
    RematchState,
    made,
    offer,
    rematch_command,
    standing,
    starts_at_once,
    withdraw,
)
from dotfight.server.push import PushService, rematch_accepted_notice, rematch_offered_notice
from dotfight.server.rooms import Rooms
from dotfight.store.records import (
    PageStore,
    PeopleStore,
    Phrase,
    PhraseCapReached,
    Rematch,
    RematchRefused,
    SeatRecord,
)

# A race lost to another seat or process is decided again on what it committed; after this many the
# request is answered with the rematch as it stands (each try follows a commit of someone else's).
DECIDE_TRIES = 4
# Phrases are said by the two people of a page; on one phone or against Dawood-bot nobody would hear.
PHRASE_MODES = frozenset({"link", "live"})


class OffersStore(PageStore, PeopleStore, Protocol):
    """The store as the offers use it: its seats (a page's, read at a rematch) and its people's parts."""


def rematch_token(old_seat_hash: str, old_page_id: str) -> str:
    """Returns the token of the seat a rematch gives the holder of an old seat (known by its stored hash):
    as long and as URL-safe as a drawn one, and the same each time it is worked out.

    >>> token = rematch_token(tokens.token_hash("old"), "p1")
    >>> len(token), token == rematch_token(tokens.token_hash("old"), "p1"), token == rematch_token(
    ...     tokens.token_hash("other"), "p1")
    (22, True, False)
    """
    message = f"dotfight rematch of {old_page_id}".encode()
    digest = hmac.new(bytes.fromhex(old_seat_hash), message, hashlib.sha256).digest()
    return base64.urlsafe_b64encode(digest[:16]).rstrip(b"=").decode("ascii")


def at_text(moment: datetime) -> str:
    """Writes a phrase's moment as ISO 8601 UTC with milliseconds and `Z` (one width, so texts sort).

    >>> at_text(datetime(2026, 12, 1, 23, 0, 5, 120_000, tzinfo=UTC))
    '2026-12-01T23:00:05.120Z'
    """
    return moment.astimezone(UTC).isoformat(timespec="milliseconds").replace("+00:00", "Z")


def said_json(phrase: Phrase) -> dict[str, Any]:
    """A kept phrase as `GET …/said` lists it."""
    return {"side": phrase.side, "phrase": phrase.phrase, "at": at_text(phrase.at), "version": phrase.version}


@dataclass(frozen=True)
class NewSeat:
    """What one old seat gets once the rematch is made: the new page, its side there ("both" on one
    phone) and its token."""

    page: str
    side: str
    token: str


class Offers:
    """Rematches and phrases: `offer`/`withdraw`/`standing`/`new_seat` and `say`/`said`. `rematches`
    limits the rematch requests per client address (the routes spend it); `clock` is the time in seconds
    since the epoch (tests hand in their own)."""

    def __init__(
        self,
        authority: PageAuthority,
        store: OffersStore,
        rooms: Rooms,
        push: PushService | None,
        bots: BotRunner,
        rematches: RateLimiter,
        clock: Callable[[], float] = time.time,
    ) -> None:
        self._authority = authority
        self._store = store
        self._rooms = rooms
        self._push = push
        self._bots = bots
        self.rematches = rematches
        self.clock = clock

    # -- rematch

    async def standing(self, page_id: str) -> dict[str, Any]:
        """Returns `{offered_by, page}`: the offer standing (not expired) and the rematch once made."""
        page = await self._authority.page(page_id)
        return standing(await self._state(page_id), page.meta.mode, self.clock())

    async def offer(self, page_id: str, seat: Seat) -> dict[str, Any]:
        """Offers a rematch of a finished page for a seat, or accepts the other seat's offer (against
        Dawood-bot and on one phone: makes it at once); answers `{offered_by, page}`. Raises the model's
        refusals: `illegal_action` for a page in play."""
        page = await self._authority.page(page_id)
        mode = page.meta.mode
        side = self._offering_side(seat)
        for _ in range(DECIDE_TRIES):
            now = self.clock()
            before = await self._state(page_id)
            try:
                after, make = offer(before, seat=side, mode=mode, finished=page.over, now=now)
            except PeopleError as error:
                raise engine_refusal(error) from None
            try:
                if make:
                    await self._make(page, side, now)
                elif after != before:
                    await self._offered(page, side, now)
            except RematchRefused:
                continue  # the other seat or another process wrote first: decided again on what it wrote
            break
        return await self.standing(page_id)

    async def withdraw(self, page_id: str, seat: Seat) -> dict[str, Any]:
        """Withdraws one's own offer or declines the other's; answers `{offered_by, page}` (a rematch
        made meanwhile stays, and is named). Raises `illegal_action` once the rematch is made."""
        await self._authority.page(page_id)  # an unknown page is not_found before anything is written
        side = self._offering_side(seat)
        try:
            withdraw(await self._state(page_id), seat=side)
        except PeopleError as error:
            raise engine_refusal(error) from None
        if await asyncio.wrap_future(self._store.withdraw_rematch(page_id, self._moment(self.clock()))):
            self._rooms.tell(page_id, {"type": "rematch", "offered_by": None, "page": None})
        return await self.standing(page_id)

    async def new_seat(self, page_id: str, token: str) -> NewSeat | None:
        """Returns the seat the holder of `token` (a seat of the old page) has on its rematch, or None
        (no rematch made yet, or the token holds no seat there). Only that seat's own token is shown."""
        try:
            seat = await self._authority.seat(page_id, token)
        except BadToken:
            return None
        rematch = await self._read(page_id)
        if rematch is None or rematch.page is None:
            return None
        side = "both" if seat.side is None else other_side(cast(Side, seat.side))
        return NewSeat(rematch.page, side, rematch_token(tokens.token_hash(token), page_id))

    @staticmethod
    def _offering_side(seat: Seat) -> Side:
        """The side a seat offers for: its own, or on one phone blue (one token holds both seats)."""
        return "blue" if seat.side is None else cast(Side, seat.side)

    async def _keep_offer(self, page: LoadedPage, side: Side, now: float) -> None:
        """Keeps a seat's offer in the store, standing for the model's lifetime of the page's mode."""
        lifetime = OFFER_LIFETIME_S.get(page.meta.mode, OFFER_LIFETIME_S["link"])
        until = self._moment(now + lifetime)
        await asyncio.wrap_future(self._store.offer_rematch(page.meta.id, side, self._moment(now), until))

    async def _offered(self, page: LoadedPage, side: Side, now: float) -> None:
        """Keeps a seat's new offer, and tells the other seat: its sockets on every process, and a push."""
        await self._keep_offer(page, side, now)
        self._rooms.tell(page.meta.id, {"type": "rematch", "offered_by": side, "page": None})
        if self._push is not None:
            self._push.tell(page, rematch_offered_notice(side))

    async def _make(self, page: LoadedPage, side: Side, now: float) -> None:
        """Makes the rematch for `side`, accepting the other seat's offer (against Dawood-bot and on one
        phone `side`'s own, kept first): the new page and its link in one transaction of the store."""
        old_id = page.meta.id
        if page.meta.mode == "bot" and not self._bots.available:
            raise ApiError("mode_unavailable", "Dawood-bot cannot play on this server yet")
        moment = self._moment(now)
        offered_by: Side = other_side(side)
        if starts_at_once(page.meta.mode):
            offered_by = side
            await self._keep_offer(page, side, now)
        accepter = other_side(offered_by)
        old_seats = await asyncio.to_thread(self._store.seats, old_id)
        # The new page is written by the accept itself: made and linked at once, or not at all.
        accept = partial(self._store.accept_rematch, old_id, accepter, moment)
        created = await self._authority.create(self._command(page, old_seats), accept)
        self._bots.wake(created.page)  # Dawood-bot draws first when it now plays blue
        self._rooms.tell(old_id, {"type": "rematch", "offered_by": offered_by, "page": created.page.meta.id})
        if self._push is not None and not starts_at_once(page.meta.mode):
            self._push.tell(page, rematch_accepted_notice(offered_by))

    def _command(self, page: LoadedPage, old_seats: Sequence[SeatRecord]) -> CreatePage:
        """The new page to create: the model's rematch of the old one, with each old seat's derived token
        at its swapped side."""
        meta = page.meta
        bot = page.bot
        command = rematch_command(
            OldPage(
                preset=meta.preset,
                rules=meta.rules,
                mode=meta.mode,
                bot_side=None if bot is None else cast(Side, bot.side),
                bot_strength=None if bot is None else bot.strength,
            )
        )
        chosen: dict[str, str] = {}
        for seat in old_seats:
            new_side = "both" if seat.side is None else command.new_side[cast(Side, seat.side)]
            chosen[new_side] = rematch_token(seat.token_hash, meta.id)
        return CreatePage(
            preset=command.preset,
            rules={name: value for name, value in command.rules.items() if name != "preset"},
            seed=command.seed,
            mode=command.mode,
            bot_side=command.bot_side or "blue",
            bot_strength=command.bot_strength or "normal",
            bot_seed=secrets.randbits(BOT_SEED_BITS),
            clock=meta.clock,
            tokens=chosen,
        )

    async def _read(self, page_id: str) -> Rematch | None:
        return await asyncio.to_thread(self._store.rematch, page_id)

    async def _state(self, page_id: str) -> RematchState:
        """The page's rematch as the model sees it."""
        rematch = await self._read(page_id)
        if rematch is None:
            return RematchState()
        state = RematchState(cast(Side, rematch.offered_by), rematch.offered_at.timestamp())
        return state if rematch.page is None else made(state, rematch.page)

    @staticmethod
    def _moment(seconds: float) -> datetime:
        return datetime.fromtimestamp(seconds, UTC)

    # -- phrases

    async def say(self, page_id: str, seat: Seat, raw_phrase: object) -> dict[str, Any]:
        """Keeps a phrase of a seat's (one of the model's list) and tells every socket of the page
        `{type: "said", side, phrase, at}`; answers the phrase as kept. The page's version never moves.
        Raises `bad_token` for no seat of its own (a watcher, one phone, Dawood-bot's page),
        `bad_request` for a phrase not on the list, `rate_limited` over the per-side cap."""
        try:
            phrase = parse_phrase(raw_phrase)
        except PeopleError as error:
            raise engine_refusal(error) from None
        page = await self._authority.page(page_id)
        if seat.side is None or page.meta.mode not in PHRASE_MODES:
            raise BadToken("only a seat of a page between two people may say something", reason="no_listener")
        # Whole milliseconds: what is kept, answered, told and read back is the same text.
        moment = self._moment(self.clock())
        at = moment.replace(microsecond=moment.microsecond // 1000 * 1000)
        said = Phrase(page_id, seat.side, phrase, at, page.state.version)
        try:
            kept = await asyncio.wrap_future(self._store.say(said, PHRASE_CAP_PER_SIDE))
        except PhraseCapReached:
            cap = PHRASE_CAP_PER_SIDE
            raise engine_refusal(TooManyPhrases(f"a side may say at most {cap} phrases on a page")) from None
        answer = said_json(kept)
        told = {name: answer[name] for name in ("side", "phrase", "at")}
        self._rooms.tell(page_id, {"type": "said", **told})
        return answer

    async def said(self, page_id: str) -> list[dict[str, Any]]:
        """Returns every phrase said on the page, in the order said (404 for no such page)."""
        await self._authority.page(page_id)
        return [said_json(phrase) for phrase in await asyncio.to_thread(self._store.phrases, page_id)]
