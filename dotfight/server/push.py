"""Web Push: telling a seat of a shared-link or live page that it is its move, with the tab closed.

The server's VAPID key pair is made once, on first need, and kept in the database (table `vapid_keys`),
so every worker process and every restart signs with the same key and browsers' subscriptions stay
valid. A browser subscribes for one seat (`routes/push.py`, with the seat token): its keys must be a
P-256 point and a 16-byte secret, its endpoint a public push service (`push_endpoint.py`). After every
committed action the page authority tells `PushService.announce`, which decides from the new state and the
action's events whether it just became the other seat's move (or the page just ended) and, if so,
queues a delivery for that seat, never on the move's path (the listener only queues).

A seat has at most one delivery under way and one waiting (a newer notice replaces the waiting one: it
carries the same `Topic`, and the phone would show only the newest). A delivery reads the seat's
subscriptions and pushes to each on its own (`push_message.py` encrypts, `push_sender.py` posts), at
most `seat_concurrency` of them at once and `concurrency` in the whole process, each within its
deadlines: a seat's silent push services hold its own share and nobody else's. An endpoint its push
service says is gone (404, 410), one that no longer resolves to a public address, one whose keys
cannot be encrypted to, and one left unanswered `drop_after` times in a row are forgotten. A seat with
a WebSocket open on the page is not pushed to (its page already shows the move; the tab's title says so).
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import logging
from collections import OrderedDict
from collections.abc import Callable, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from functools import partial
from typing import Any, TypeVar

from sqlalchemy import Engine
from sqlalchemy.exc import IntegrityError, InterfaceError, OperationalError

from dotfight.engine import State, other_side
from dotfight.server.errors import ApiError
from dotfight.server.page_view import LoadedPage
from dotfight.server.pages.authority import Applied
from dotfight.server.push_endpoint import (
    EndpointPolicy,
    EndpointRefused,
    EndpointUnresolved,
    parse_endpoint,
    resolver,
)
from dotfight.server.push_message import BadKeys, VapidKeys, auth_secret, push_message, receiver_key
from dotfight.server.push_sender import Outcome, PushSender, Sent
from dotfight.server.rooms import Rooms
from dotfight.server.settings import PushSettings, Settings
from dotfight.store import push_subscriptions as repository
from dotfight.store.database import make_session_factory

logger = logging.getLogger(__name__)

T = TypeVar("T")

PUSH_MODES = frozenset({"link", "live"})
# Seats with a delivery under way at once; beyond this a push is dropped (and logged) rather than
# queued without end.
MAX_PENDING = 1000
# Endpoints whose unanswered pushes in a row are counted (the least recently failed are forgotten first).
MAX_COUNTED_ENDPOINTS = 10_000
Seat = tuple[str, str]  # (page id, side)


@dataclass(frozen=True)
class Notice:
    """What one seat is told: a title and a line, for the page at a version."""

    side: str
    title: str
    body: str

    def payload(self, page_id: str, version: int) -> dict[str, Any]:
        """Returns the JSON the service worker shows (`web/push-sw.js`)."""
        return {
            "title": self.title,
            "body": self.body,
            "url": f"/p/{page_id}",
            "tag": f"dotfight-{page_id}",
            "page": page_id,
            "side": self.side,
            "version": version,
        }


def _cap(side: str) -> str:
    return side.capitalize()


def _plural(number: int, word: str) -> str:
    return f"{number} {word}" + ("" if number == 1 else "s")


def mover_of(state: State, events: Sequence[dict[str, Any]]) -> str | None:
    """Returns the side whose action made these events (read from the events), or None when they do
    not tell (e.g. a lunge chain stopped with flicks left).

    >>> from dotfight.engine import RuleSet, new_page
    >>> page = new_page(RuleSet.preset("quick"), seed=7)
    >>> mover_of(page, [{"type": "turn", "side": "red", "flicks": 1, "last_stand": False}])
    'blue'
    >>> mover_of(page, [{"type": "game_over", "winner": "red", "reason": "resigned"}]), mover_of(page, [])
    ('blue', None)
    """
    bases = {base.id: base.side for base in state.bases}
    for event in events:
        kind = event.get("type")
        if kind == "base_drawn":
            return str(event["base"]["side"])
        if kind in ("positioned", "ink"):
            return str(event["side"])
        if kind == "send" and event.get("from") in bases:
            return bases[event["from"]]
        if kind == "turn":
            return other_side(event["side"])
        if kind == "game_over" and event.get("reason") == "resigned":
            return other_side(event["winner"])
    return None


def notice_for(state: State, events: Sequence[dict[str, Any]]) -> Notice | None:
    """Returns what to tell the seat that did not move, when this action made it that seat's move or
    ended the page; None otherwise (the mover's own move, a chain going on, setup by one side).

    >>> from dotfight.engine import RuleSet, apply, new_page
    >>> page, events = apply(new_page(RuleSet.preset("quick"), seed=7), "blue", {"type": "quick_setup"})
    >>> notice_for(page, events) is None  # blue set the page up and arranges first: nobody to tell
    True
    >>> page, events = apply(page, "blue", {"type": "ready"})
    >>> notice_for(page, events)
    Notice(side='red', title='Your move — Dotfight', body='Blue is ready. Arrange your soldiers.')
    """
    mover = mover_of(state, events)
    if mover is None:
        return None
    them = other_side(mover)  # type: ignore[arg-type]
    if state.phase == "over":
        winner = state.winner
        if winner is None:
            return Notice(them, "The page is finished — Dotfight", "The war is over.")
        loser = other_side(winner)
        if state.end_reason == "resigned":
            how = f"{_cap(loser)} resigned."
        else:
            how = f"Every {loser} soldier is crossed out."
        return Notice(them, f"{_cap(winner)} wins — Dotfight", how)
    if state.actor != them:
        return None
    title = "Your move — Dotfight"
    if state.phase == "bases":
        return Notice(them, title, f"{_cap(mover)} drew a base. Draw yours.")
    if state.phase == "positioning":
        return Notice(them, title, f"{_cap(mover)} is ready. Arrange your soldiers.")
    mine = {soldier.id for soldier in state.soldiers if soldier.side == them}
    lost = sum(1 for e in events if e.get("type") == "crossed_out" and e.get("soldier") in mine)
    turn = state.turn
    flicks = turn.flicks_left if turn is not None else 0
    said = f"{_cap(mover)} crossed out {_plural(lost, 'soldier')} of yours. " if lost else ""
    stand = " Last stand!" if turn is not None and turn.last_stand else ""
    return Notice(them, title, f"{said}Your turn: {_plural(flicks, 'flick')}.{stand}")


def time_out_notices(events: Sequence[dict[str, Any]]) -> list[Notice | None]:
    """Returns what both seats are told when the page ended on time (issue 19), else nothing.

    >>> blue, red = time_out_notices([{"type": "game_over", "winner": "red", "reason": "time"}])
    >>> blue
    Notice(side='blue', title='Red wins — Dotfight', body="Blue's time ran out.")
    >>> red.side, red.body
    ('red', "Blue's time ran out.")
    """
    for event in events:
        if event.get("type") == "game_over" and event.get("reason") == "time":
            winner = event["winner"]
            title, body = f"{_cap(winner)} wins — Dotfight", f"{_cap(other_side(winner))}'s time ran out."
            return [Notice(side, title, body) for side in ("blue", "red")]
    return []


def reminder_notice(side: str, left_s: float) -> Notice:
    """Returns a link page's reminder: the side to act has a fifth of its time per move left.

    >>> reminder_notice("blue", 4 * 3600 + 60).body
    'A fifth of your time for this move is left: 4 hours.'
    >>> reminder_notice("red", 59 * 60).body
    'A fifth of your time for this move is left: 59 minutes.'
    """
    hours, minutes = int(left_s // 3600), int(left_s % 3600 // 60)
    left = _plural(hours, "hour") if hours else _plural(max(minutes, 1), "minute")
    return Notice(side, "Your move — Dotfight", f"A fifth of your time for this move is left: {left}.")


def rematch_offered_notice(offered_by: str) -> Notice:
    """What the other seat is told when `offered_by` offers a rematch of a finished page.

    >>> rematch_offered_notice("red")
    Notice(side='blue', title='Rematch? — Dotfight', body='Red offers a rematch. Open the page to accept.')
    """
    them = other_side(offered_by)  # type: ignore[arg-type]
    body = f"{_cap(offered_by)} offers a rematch. Open the page to accept."
    return Notice(them, "Rematch? — Dotfight", body)


def rematch_accepted_notice(offered_by: str) -> Notice:
    """What the seat that offered is told once the other accepted (it plays the other colour now).

    >>> rematch_accepted_notice("blue").body
    'Red accepted your rematch: you play red.'
    """
    them = other_side(offered_by)  # type: ignore[arg-type]
    return Notice(offered_by, "Rematch — Dotfight", f"{_cap(them)} accepted your rematch: you play {them}.")


@dataclass
class _SeatDeliveries:
    """A seat's delivery under way, and the newest notice waiting to follow it."""

    waiting: dict[str, Any] | None = None
    task: asyncio.Task[None] | None = field(default=None, repr=False)


class PushService:
    """Keeps the VAPID keys and the seats' subscriptions, and sends the pushes off the moves' path."""

    def __init__(self, settings: Settings, database: Engine, rooms: Rooms) -> None:
        self.settings = PushSettings()
        self._public_url = settings.public_url
        self._sessions = make_session_factory(database)
        self._rooms = rooms
        # The database work of subscribing and of the keys, and that of deliveries, in threads of their
        # own: a subscription is never stored behind a delivery's reads; no thread waits on the network.
        self._storage = ThreadPoolExecutor(2, thread_name_prefix="dotfight-push-store")
        self._delivery_storage = ThreadPoolExecutor(1, thread_name_prefix="dotfight-push-read")
        # Encrypting and signing a push (about 0.5 ms of CPU each) off the event loop.
        self._crypto = ThreadPoolExecutor(1, thread_name_prefix="dotfight-push-crypto")
        # getaddrinfo blocks: one thread per push that may be under way (made only when needed), and
        # a few for checking subscriptions, so that hosts slow to resolve at delivery hold up no subscriber.
        self._lookups = ThreadPoolExecutor(self.settings.concurrency, thread_name_prefix="dotfight-push-dns")
        self._subscribe_lookups = ThreadPoolExecutor(4, thread_name_prefix="dotfight-push-dns-check")
        self.policy = EndpointPolicy(
            insecure=self.settings.insecure_endpoints, allowed_hosts=tuple(self.settings.allowed_hosts)
        )
        self._resolve_subscribed = resolver(
            self.policy, self._subscribe_lookups, self.settings.connect_timeout
        )
        self._sender = PushSender(
            self.policy,
            resolver(self.policy, self._lookups, self.settings.connect_timeout),
            connect_timeout=self.settings.connect_timeout,
            timeout=self.settings.timeout,
        )
        self._slots = asyncio.Semaphore(self.settings.concurrency)
        self._keys: VapidKeys | None = None
        self._keys_lock = asyncio.Lock()
        self._seats: dict[Seat, _SeatDeliveries] = {}
        self._unanswered: OrderedDict[str, int] = OrderedDict()

    @property
    def subject(self) -> str:
        """The VAPID contact sent to push services."""
        if self.settings.subject:
            return self.settings.subject
        if self._public_url and self._public_url.startswith("https://"):
            return self._public_url.rstrip("/")
        return "mailto:dotfight@localhost"

    async def _in_thread(self, threads: ThreadPoolExecutor, work: Callable[..., T], *args: Any) -> T:
        try:
            return await asyncio.get_running_loop().run_in_executor(threads, partial(work, *args))
        except (OperationalError, InterfaceError) as error:
            raise ApiError("unavailable", "the database does not answer; try again in a moment") from error

    # ----------------------------------------------------------------------------------------------
    # keys and subscriptions

    async def keys(self) -> VapidKeys:
        """Returns the server's VAPID keys, made and stored on first need."""
        if self._keys is None:
            async with self._keys_lock:
                if self._keys is None:
                    self._keys = await self._in_thread(self._storage, self._load_or_make_keys)
        assert self._keys is not None
        return self._keys

    def _load_or_make_keys(self) -> VapidKeys:
        with self._sessions() as session:
            row = repository.vapid_key(session)
            if row is not None:
                return VapidKeys(private_pem=row.private_pem, public_key=row.public_key)
            made = VapidKeys.make()
            repository.add_vapid_key(session, made.private_pem, made.public_key)
            try:
                session.commit()
            except IntegrityError:  # another process made them first: use theirs
                session.rollback()
                row = repository.vapid_key(session)
                assert row is not None
                return VapidKeys(private_pem=row.private_pem, public_key=row.public_key)
            logger.info("made the server's VAPID key pair")
            return made

    async def check_endpoint(self, endpoint: str) -> None:
        """Refuses (bad_request) an endpoint the server must not post to: not https on port 443 of a
        public named host (of the allow-list, if set), or whose host resolves to any address that is not
        public; `unavailable` when its host cannot be resolved for now."""
        try:
            await self._resolve_subscribed(parse_endpoint(endpoint, self.policy))
        except EndpointRefused as error:
            raise ApiError("bad_request", str(error), reason="push_endpoint") from error
        except EndpointUnresolved as error:
            if error.missing:
                message = "a push endpoint's host must exist (it does not resolve)"
                raise ApiError("bad_request", message, reason="push_endpoint") from error
            message = "the push endpoint's host cannot be resolved now; try again in a moment"
            raise ApiError("unavailable", message) from error

    async def subscribe(self, page: LoadedPage, side: str, endpoint: str, p256dh: str, auth: str) -> None:
        """Keeps a subscription for a seat of a shared-link or live page (refusing other pages, keys that
        cannot be encrypted to and endpoints the server must not post to)."""
        if page.meta.mode not in PUSH_MODES:
            raise ApiError("bad_request", "pushes are for pages on a shared link or live", reason="no_push")
        try:
            receiver_key(p256dh)
            auth_secret(auth)
        except BadKeys as error:
            raise ApiError("bad_request", f"the subscription's keys are not usable: {error}") from error
        await self.check_endpoint(endpoint)
        subscribe = partial(repository.subscribe, keep=self.settings.per_seat)
        # The same subscription sent twice at once: the other request stored it.
        with contextlib.suppress(IntegrityError):
            await self._in_thread(
                self._storage, self._write, subscribe, page.meta.id, side, endpoint, p256dh, auth
            )

    async def unsubscribe(self, page_id: str, side: str, endpoint: str) -> bool:
        """Forgets a seat's subscription; tells whether there was one."""
        removed = await self._in_thread(
            self._storage, self._write, repository.unsubscribe, page_id, side, endpoint
        )
        return bool(removed)

    def _write(self, work: Callable[..., T], *args: Any) -> T:
        with self._sessions() as session:
            result = work(session, *args)
            session.commit()
            return result

    def _subscriptions(self, page_id: str, side: str) -> list[tuple[str, str, str]]:
        with self._sessions() as session:
            rows = repository.subscriptions(session, page_id, side)
            return [(row.endpoint, row.p256dh, row.auth) for row in rows]

    # ----------------------------------------------------------------------------------------------
    # pushing

    def announce(self, page: LoadedPage, applied: Applied) -> None:
        """The authority's listener: queues a push when this move made it the other seat's move (never
        waits; called under the page lock)."""
        if page.meta.mode not in PUSH_MODES:
            return
        # Presence first: with both seats on the page (nearly every live move) there is nobody to push
        # to, and working out the notice's text would be wasted on the event loop.
        presence = self._rooms.presence(page.meta.id)
        if presence["blue"] and presence["red"]:
            return
        ending = time_out_notices(applied.events)
        for notice in ending or [notice_for(page.state, applied.events)]:
            if notice is not None and not presence.get(notice.side):
                self._queue(page.meta.id, notice.side, notice.payload(page.meta.id, applied.version))

    async def remind(self, page: LoadedPage, side: str, left_s: float) -> None:
        """Queues a link page's reminder to the side to act (`left_s` of its move left), unless it has the
        page open on any process (issue 19: as lichess's correspondence alarm)."""
        if page.meta.mode not in PUSH_MODES:
            return
        blue, red = await self._rooms.seats_anywhere(page.meta.id)
        if blue if side == "blue" else red:
            return
        notice = reminder_notice(side, left_s)
        self._queue(page.meta.id, side, notice.payload(page.meta.id, page.state.version))

    def tell(self, page: LoadedPage, notice: Notice) -> None:
        """Queues a push of `notice` to its seat of a shared-link or live page, unless that seat has the
        page open here (a rematch offered or accepted: its page shows it already). Never waits."""
        if page.meta.mode not in PUSH_MODES or self._rooms.presence(page.meta.id).get(notice.side):
            return
        self._queue(page.meta.id, notice.side, notice.payload(page.meta.id, page.state.version))

    def _queue(self, page_id: str, side: str, payload: dict[str, Any]) -> None:
        """Queues a push to a seat (never waits): the newest replaces one waiting behind a delivery."""
        seat = (page_id, side)
        deliveries = self._seats.get(seat)
        if deliveries is not None:
            deliveries.waiting = payload  # sent when the one under way is done; replaces an older one
            return
        if len(self._seats) >= MAX_PENDING:
            logger.warning("page %s: too many pushes waiting; this one is dropped", page_id)
            return
        deliveries = self._seats[seat] = _SeatDeliveries()
        deliveries.task = asyncio.get_running_loop().create_task(self._serve_seat(seat, deliveries, payload))

    async def _serve_seat(self, seat: Seat, deliveries: _SeatDeliveries, payload: dict[str, Any]) -> None:
        """Delivers a seat's notice, then each newer one that came meanwhile, one at a time."""
        try:
            next_payload: dict[str, Any] | None = payload
            while next_payload is not None:
                await self._deliver(seat, next_payload)
                next_payload, deliveries.waiting = deliveries.waiting, None
        finally:
            del self._seats[seat]

    async def _deliver(self, seat: Seat, payload: dict[str, Any]) -> None:
        page_id, side = seat
        try:
            subscriptions = await self._in_thread(self._delivery_storage, self._subscriptions, page_id, side)
            if not subscriptions:
                return
            keys = await self.keys()
        except Exception:  # a failed push must never reach the moves
            logger.exception("page %s: pushing to %s failed", page_id, side)
            return
        data = json.dumps(payload, separators=(",", ":")).encode()
        seat_slots = asyncio.Semaphore(self.settings.seat_concurrency)
        # Each subscription on its own: one that fails (bad keys, a dead push service) costs the seat's
        # other devices nothing.
        await asyncio.gather(
            *(self._push(seat, seat_slots, keys, subscription, data) for subscription in subscriptions),
            return_exceptions=True,
        )

    async def _push(
        self,
        seat: Seat,
        seat_slots: asyncio.Semaphore,
        keys: VapidKeys,
        subscription: tuple[str, str, str],
        data: bytes,
    ) -> None:
        page_id, side = seat
        endpoint, p256dh, auth = subscription
        try:
            async with seat_slots, self._slots:
                try:
                    target = self._sender.check(endpoint)
                except EndpointRefused as error:
                    await self._settle(seat, endpoint, Sent(Outcome.REFUSED, detail=str(error)))
                    return
                make = partial(
                    push_message, keys, target, p256dh, auth, data,
                    subject=self.subject, ttl=self.settings.ttl, topic=page_id,
                )  # fmt: skip
                try:
                    message = await asyncio.get_running_loop().run_in_executor(self._crypto, make)
                except BadKeys as error:  # stored before keys were checked: it can never be pushed to
                    logger.warning(
                        "page %s: a %s push subscription's keys are unusable (%s); removed",
                        page_id,
                        side,
                        error,
                    )
                    await self._forget(seat, endpoint)
                    return
                sent = await self._sender.post(target, message)
            await self._settle(seat, endpoint, sent)
        except Exception:
            logger.exception("page %s: pushing to a %s subscription failed", page_id, side)

    async def _settle(self, seat: Seat, endpoint: str, sent: Sent) -> None:
        """Acts on a push's outcome: forgets endpoints that are gone, refused, or keep not answering."""
        page_id, side = seat
        if sent.outcome in (Outcome.DELIVERED, Outcome.FAILED):
            self._unanswered.pop(endpoint, None)  # it answered: it is not dead
            if sent.outcome is Outcome.FAILED:
                logger.warning("page %s: a push service answered %s", page_id, sent.status)
        elif sent.outcome is Outcome.GONE:
            logger.info("page %s: a %s push subscription has expired; removed", page_id, side)
            await self._forget(seat, endpoint)
        elif sent.outcome is Outcome.REFUSED:
            logger.warning(
                "page %s: a %s push endpoint is refused now (%s); removed", page_id, side, sent.detail
            )
            await self._forget(seat, endpoint)
        elif sent.outcome is Outcome.UNANSWERED:
            strikes = self._unanswered.pop(endpoint, 0) + 1
            if strikes >= self.settings.drop_after:
                logger.info(
                    "page %s: a %s push service left %d pushes in a row unanswered (%s); removed",
                    page_id,
                    side,
                    strikes,
                    sent.detail,
                )
                await self._forget(seat, endpoint)
                return
            logger.info("page %s: a %s push service did not answer (%s)", page_id, side, sent.detail)
            self._unanswered[endpoint] = strikes
            while len(self._unanswered) > MAX_COUNTED_ENDPOINTS:
                self._unanswered.popitem(last=False)

    async def _forget(self, seat: Seat, endpoint: str) -> None:
        self._unanswered.pop(endpoint, None)
        page_id, side = seat
        with contextlib.suppress(ApiError):  # the database is away: the next push tries again
            await self._in_thread(
                self._delivery_storage, self._write, repository.unsubscribe, page_id, side, endpoint
            )

    def _tasks(self) -> list[asyncio.Task[None]]:
        return [deliveries.task for deliveries in self._seats.values() if deliveries.task is not None]

    async def drain(self) -> None:
        """Waits for the pushes under way (tests, and shutdown)."""
        while tasks := self._tasks():
            await asyncio.gather(*tasks, return_exceptions=True)

    async def close(self) -> None:
        """Lets pushes under way finish (briefly), then stops the threads."""
        try:
            await asyncio.wait_for(self.drain(), timeout=5)
        except TimeoutError:
            for task in self._tasks():
                task.cancel()
        threads_of_push = (
            self._storage,
            self._delivery_storage,
            self._crypto,
            self._lookups,
            self._subscribe_lookups,
        )
        for threads in threads_of_push:
            threads.shutdown(wait=False, cancel_futures=True)
