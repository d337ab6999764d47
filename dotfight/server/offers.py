"""Rematch offers and phrases of finished and running pages (issue 19, items 5 and 6): the service
between the routes (`routes/people.py`, the page socket's `say`) and the pure model (`people.rematch`,
`people.phrases`), the store (`PeopleStore`: the offer, the accept that makes the new page in the same
transaction, the phrase cap), every socket of the page on every process (`Rooms.tell`) and Web Push.

The store decides every race: two seats offering at once, or one seat's accept sent to two processes,
are put in line by its row lock, and the loser decides again on what the winner committed (an offer met
by the other's becomes an accept; a second accept is answered with the page the first made). A page thus
has at most one rematch.

Each seat gets its own seat on the new page and only through its own old token. A rematch's new tokens
are drawn at random (`secrets`), as any seat's, and kept as every seat token is, as their sha256 (the new
page's seats). The seat that offered is not there when the other accepts, so its new token is drawn with
its offer, and each new token is also kept **sealed** (AES-GCM) under a key only its old token gives
(`seal_key`: an HMAC keyed by the old token itself, which the server never stores): `GET …/rematch` with
an old token opens that seat's seal again, and nothing in the database — not the old seats' hashes, not
the seals — gives a new token to anyone without that old token. Rematches made before the seals were
kept (migration 0009) keep the tokens derived from the old seats' hashes (`legacy_rematch_token`).

When a standing offer's lifetime ends, the process's one alarm (timeouts.py, from the store's earliest
offers' ends) calls `offer_ended`, which tells this process's sockets of the page that it ran out.
"""

from __future__ import annotations

import asyncio
import base64
import hashlib
import hmac
import secrets
import time
from collections.abc import Callable
from dataclasses import dataclass
from datetime import UTC, datetime
from functools import partial
from typing import Any, Protocol, cast

from cryptography.exceptions import InvalidTag
from cryptography.hazmat.primitives.ciphers.aead import AESGCM

from dotfight.engine import Side, other_side
from dotfight.server import tokens
from dotfight.server.bot_runner import BotRunner
from dotfight.server.errors import ApiError
from dotfight.server.limits import RateLimiter
from dotfight.server.page_view import BOT_SEED_BITS, LoadedPage
from dotfight.server.pages.authority import CreatePage, PageAuthority, Seat, engine_refusal
from dotfight.server.pages.errors import BadToken
from dotfight.server.pages.wire import compact_json
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
    OfferEnd,
    PageStore,
    PeopleStore,
    Phrase,
    PhraseCapReached,
    Rematch,
    RematchRefused,
    SealedSeat,
)

# A race lost to another seat or process is decided again on what it committed; after this many the
# request is answered with the rematch as it stands (each try follows a commit of someone else's).
DECIDE_TRIES = 4
# Phrases are said by the two people of a page; on one phone or against Dawood-bot nobody would hear.
PHRASE_MODES = frozenset({"link", "live"})


class OffersStore(PageStore, PeopleStore, Protocol):
    """The store as the offers use it: its seats (a page's, read at a rematch) and its people's parts."""


def legacy_rematch_token(old_seat_hash: str, old_page_id: str) -> str:
    """Returns the token a rematch made before migration 0009 gave the holder of an old seat (known by its
    stored hash): derived, so the same each time it is worked out. New rematches draw theirs.

    >>> token = legacy_rematch_token(tokens.token_hash("old"), "p1")
    >>> again, other = (legacy_rematch_token(tokens.token_hash(t), "p1") for t in ("old", "other"))
    >>> len(token), token == again, token == other
    (22, True, False)
    """
    message = f"dotfight rematch of {old_page_id}".encode()
    digest = hmac.new(bytes.fromhex(old_seat_hash), message, hashlib.sha256).digest()
    return base64.urlsafe_b64encode(digest[:16]).rstrip(b"=").decode("ascii")


# The AES-GCM nonce of a seal (drawn for each; a key seals at most a few tokens, one per offer).
SEAL_NONCE_BYTES = 12


def seal_key(old_token: str, old_page_id: str) -> bytes:
    """The key a seat's new token is sealed under: an HMAC keyed by its old token itself (the server keeps
    only the old token's sha256, which gives nothing of it)."""
    return hmac.new(
        old_token.encode(), f"dotfight rematch seal of {old_page_id}".encode(), hashlib.sha256
    ).digest()


def new_sealed_seat(old_token: str, old_page_id: str) -> tuple[str, SealedSeat]:
    """Draws a rematch seat's token for the holder of `old_token`: the token, and how it is kept (its
    sha256 and its seal).

    >>> token, kept = new_sealed_seat("old", "p1")
    >>> len(token), kept.token_hash == tokens.token_hash(token), opened_seal(kept.seal, "old", "p1") == token
    (22, True, True)
    >>> opened_seal(kept.seal, "another", "p1") is None, new_sealed_seat("old", "p1")[0] == token
    (True, False)
    """
    token = tokens.new_token()
    nonce = secrets.token_bytes(SEAL_NONCE_BYTES)
    box = AESGCM(seal_key(old_token, old_page_id)).encrypt(nonce, token.encode(), old_page_id.encode())
    seal = base64.urlsafe_b64encode(nonce + box).rstrip(b"=").decode("ascii")
    return token, SealedSeat(tokens.token_hash(token), seal)


def opened_seal(seal: str, old_token: str, old_page_id: str) -> str | None:
    """Opens a seal with the old token it was made for; None for any other token (or a damaged seal)."""
    try:
        raw = base64.urlsafe_b64decode(seal + "=" * (-len(seal) % 4))
        box = AESGCM(seal_key(old_token, old_page_id))
        return box.decrypt(raw[:SEAL_NONCE_BYTES], raw[SEAL_NONCE_BYTES:], old_page_id.encode()).decode()
    except (InvalidTag, ValueError):
        return None


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

    async def offer(self, page_id: str, seat: Seat, token: str) -> dict[str, Any]:
        """Offers a rematch of a finished page for a seat (`token`: its old token, which seals its new
        one), or accepts the other seat's offer (against Dawood-bot and on one phone: makes it at once);
        answers `{offered_by, page}`. Raises the model's refusals: `illegal_action` for a page in play."""
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
                    await self._make(page, side, now, token)
                elif after != before:
                    await self._offered(page, side, now, token)
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
        offered = rematch.offered_seat
        if seat.side is None or seat.side == rematch.offered_by:
            seal = None if offered is None else offered.seal
        else:
            seal = rematch.accepted_seal
        if seal is None:  # made before the seals were kept: its tokens were derived
            return NewSeat(rematch.page, side, legacy_rematch_token(tokens.token_hash(token), page_id))
        new_token = opened_seal(seal, token, page_id)
        return None if new_token is None else NewSeat(rematch.page, side, new_token)

    async def offer_ended(self, end: OfferEnd) -> None:
        """Tells this process's sockets of the page that its rematch offer ran out, if it still stands as
        it was (not withdrawn, made again or accepted meanwhile). Every process reads the offers' ends
        and tells its own sockets, so nobody hears it twice."""
        rematch = await self._read(end.page_id)
        if (
            rematch is None
            or rematch.page is not None
            or (rematch.offered_by, rematch.expires_at) != (end.offered_by, end.expires_at)
            or rematch.expires_at.timestamp() > self.clock()
        ):
            return
        ended = {"type": "rematch", "offered_by": None, "page": None, "ended": True}
        self._rooms.heard_notice(end.page_id, compact_json(ended))

    @staticmethod
    def _offering_side(seat: Seat) -> Side:
        """The side a seat offers for: its own, or on one phone blue (one token holds both seats)."""
        return "blue" if seat.side is None else cast(Side, seat.side)

    async def _keep_offer(self, page: LoadedPage, side: Side, now: float, token: str) -> Rematch:
        """Keeps a seat's offer in the store, standing for the model's lifetime of the page's mode, with
        the seat's new token drawn now (kept only hashed and sealed; the same side's standing offer keeps
        its own)."""
        lifetime = OFFER_LIFETIME_S.get(page.meta.mode, OFFER_LIFETIME_S["link"])
        until = self._moment(now + lifetime)
        _, seat = new_sealed_seat(token, page.meta.id)
        offering = self._store.offer_rematch(page.meta.id, side, self._moment(now), until, seat)
        return await asyncio.wrap_future(offering)

    async def _offered(self, page: LoadedPage, side: Side, now: float, token: str) -> None:
        """Keeps a seat's new offer, and tells the other seat: its sockets on every process, and a push."""
        await self._keep_offer(page, side, now, token)
        self._rooms.tell(page.meta.id, {"type": "rematch", "offered_by": side, "page": None})
        if self._push is not None:
            self._push.tell(page, rematch_offered_notice(side))

    async def _make(self, page: LoadedPage, side: Side, now: float, token: str) -> None:
        """Makes the rematch for `side`, accepting the other seat's offer (against Dawood-bot and on one
        phone `side`'s own, kept first): the new page and its link in one transaction of the store. The
        offering seat's new seat is the one drawn with its offer; the accepting seat's is drawn now."""
        old_id = page.meta.id
        if page.meta.mode == "bot" and not self._bots.available:
            raise ApiError("mode_unavailable", "Dawood-bot cannot play on this server yet")
        moment = self._moment(now)
        at_once = starts_at_once(page.meta.mode)
        if at_once:
            rematch: Rematch | None = await self._keep_offer(page, side, now, token)
        else:
            rematch = await self._read(old_id)
        if rematch is None:
            raise RematchRefused(old_id, "none")  # withdrawn meanwhile: decided again
        offered_by = cast(Side, rematch.offered_by)
        accepter = other_side(offered_by)
        offered_hash = None if rematch.offered_seat is None else rematch.offered_seat.token_hash
        seats: dict[str, str] = {}
        accepted_seal = None
        if not at_once:  # against Dawood-bot and on one phone, the offering seat is the only one
            seats[accepter], sealed = new_sealed_seat(token, old_id)
            accepted_seal = sealed.seal
        offered_seat_hash = offered_hash or await self._legacy_seat_hash(old_id, offered_by, page.meta.mode)
        # The new page is written by the accept itself: made and linked at once, or not at all.
        accept = partial(
            self._store.accept_rematch,
            old_id,
            accepter,
            moment,
            offered_seat=offered_hash,
            accepted_seal=accepted_seal,
        )
        command = self._command(page, offered_by, offered_seat_hash, seats)
        created = await self._authority.create(command, accept)
        self._bots.wake(created.page)  # Dawood-bot draws first when it now plays blue
        self._rooms.tell(old_id, {"type": "rematch", "offered_by": offered_by, "page": created.page.meta.id})
        if self._push is not None and not at_once:
            self._push.tell(page, rematch_accepted_notice(offered_by))

    async def _legacy_seat_hash(self, old_id: str, offered_by: Side, mode: str) -> str:
        """The new seat's hash of an offer kept before seats were drawn with offers: its derived token's."""
        old_seats = await asyncio.to_thread(self._store.seats, old_id)
        side = None if mode == "local" else offered_by
        old = next(seat for seat in old_seats if seat.side == side)
        return tokens.token_hash(legacy_rematch_token(old.token_hash, old_id))

    def _command(
        self, page: LoadedPage, offered_by: Side, offered_seat_hash: str, accepted: dict[str, str]
    ) -> CreatePage:
        """The new page to create: the model's rematch of the old one, the offering seat known by its new
        token's hash and the accepting seat (`accepted`: old side -> new token), each at its swapped side."""
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

        def new_side(old_side: str) -> str:
            return "both" if meta.mode == "local" else command.new_side[cast(Side, old_side)]

        return CreatePage(
            preset=command.preset,
            rules={name: value for name, value in command.rules.items() if name != "preset"},
            seed=command.seed,
            mode=command.mode,
            bot_side=command.bot_side or "blue",
            bot_strength=command.bot_strength or "normal",
            bot_seed=secrets.randbits(BOT_SEED_BITS),
            clock=meta.clock,
            tokens={new_side(old_side): token for old_side, token in accepted.items()},
            token_hashes={new_side(offered_by): offered_seat_hash},
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
