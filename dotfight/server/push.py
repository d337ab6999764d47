"""Web Push: telling a seat of a shared-link or live page that it is its move, with the tab closed.

The server's VAPID key pair is made once, on first need, and kept in the database (table `vapid_keys`),
so every worker process and every restart signs with the same key and browsers' subscriptions stay
valid. A browser subscribes for one seat (`routes/push.py`, with the seat token); after every committed
action the master tells `PushService.announce`, which decides from the new state and the action's
events whether it just became the other seat's move (or the page just ended) and, if so, queues a
delivery: the subscriptions are read and the encrypted pushes sent by `pywebpush` in a worker thread of
this module, never on the move's path (the listener only queues). A push service answering 404 or 410
has forgotten the subscription: it is deleted. A seat with a WebSocket open on the page is not pushed
to (its page already shows the move; the tab's title says so).
"""

from __future__ import annotations

import asyncio
import base64
import contextlib
import ipaddress
import json
import logging
from collections.abc import Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from functools import cached_property, partial
from typing import Any, TypeVar
from urllib.parse import urlsplit

from pydantic_settings import BaseSettings, SettingsConfigDict
from sqlalchemy import Engine
from sqlalchemy.exc import IntegrityError, InterfaceError, OperationalError

from dotfight.engine import State, other_side
from dotfight.server.errors import ApiError
from dotfight.server.hub import Hub
from dotfight.server.master import Applied
from dotfight.server.page_view import LoadedPage
from dotfight.server.settings import Settings
from dotfight.store import push_subscriptions as repository
from dotfight.store.database import make_session_factory

logger = logging.getLogger(__name__)

T = TypeVar("T")

PUSH_MODES = frozenset({"link", "live"})
# Deliveries waiting at once; beyond this a push is dropped (and logged) rather than queued without end.
MAX_PENDING = 1000
GONE = frozenset({404, 410})


class PushSettings(BaseSettings):
    """Web Push settings, from the environment with the prefix DOTFIGHT_PUSH_."""

    model_config = SettingsConfigDict(env_prefix="DOTFIGHT_PUSH_", extra="ignore")

    # The VAPID contact (`mailto:` or `https:`); default: the public URL when it is https.
    subject: str | None = None
    # Seconds a push service keeps an undelivered push (a phone that is off for a while still hears).
    ttl: int = 86_400
    # Subscriptions kept per seat (a player's phone and laptop); the oldest goes first.
    per_seat: int = 5
    # Seconds to wait for a push service.
    timeout: float = 10.0
    # Lets endpoints be plain http or loopback (tests stand in for the push service); never in production.
    insecure_endpoints: bool = False


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


def check_endpoint(endpoint: str, insecure: bool) -> None:
    """Refuses (bad_request) an endpoint the server must not post to: not https, or a bare address or
    local name, unless `insecure` (tests) allows plain http and loopback.

    >>> check_endpoint("https://fcm.googleapis.com/fcm/send/abc", insecure=False)
    >>> check_endpoint("http://127.0.0.1:9/push", insecure=False)
    Traceback (most recent call last):
    ...
    dotfight.server.errors.ApiError: a push endpoint must be an https URL of a push service
    """
    parts = urlsplit(endpoint)
    host = (parts.hostname or "").lower()
    if insecure and parts.scheme in ("http", "https") and host:
        return
    local = host in ("localhost", "") or host.endswith((".localhost", ".local", ".internal"))
    try:
        ipaddress.ip_address(host)
        local = True  # push services are named hosts; a bare address is someone's machine
    except ValueError:
        pass
    if parts.scheme != "https" or local or "." not in host:
        raise ApiError("bad_request", "a push endpoint must be an https URL of a push service")


@dataclass(frozen=True)
class VapidKeys:
    """The server's VAPID key pair: the private key in PEM, the public key as browsers want it."""

    private_pem: str
    public_key: str  # base64url of the uncompressed P-256 point: the applicationServerKey

    @classmethod
    def make(cls) -> VapidKeys:
        """Makes a new key pair."""
        from cryptography.hazmat.primitives import serialization
        from py_vapid import Vapid02

        vapid = Vapid02()
        vapid.generate_keys()
        point = vapid.public_key.public_bytes(
            serialization.Encoding.X962, serialization.PublicFormat.UncompressedPoint
        )
        public = base64.urlsafe_b64encode(point).rstrip(b"=").decode("ascii")
        return cls(private_pem=vapid.private_pem().decode("ascii"), public_key=public)

    @cached_property
    def signer(self) -> Any:
        """The key as pywebpush signs with it: RFC 8292 (`Authorization: vapid t=…, k=…`)."""
        from py_vapid import Vapid02

        return Vapid02.from_pem(self.private_pem.encode("ascii"))


class PushService:
    """Keeps the VAPID keys and the seats' subscriptions, and sends the pushes off the moves' path."""

    def __init__(self, settings: Settings, database: Engine, hub: Hub) -> None:
        self.settings = PushSettings()
        self._public_url = settings.public_url
        self._sessions = make_session_factory(database)
        self._hub = hub
        self._threads = ThreadPoolExecutor(2, thread_name_prefix="dotfight-push")
        self._keys: VapidKeys | None = None
        self._keys_lock = asyncio.Lock()
        self._deliveries: set[asyncio.Task[None]] = set()

    @property
    def subject(self) -> str:
        """The VAPID contact sent to push services."""
        if self.settings.subject:
            return self.settings.subject
        if self._public_url and self._public_url.startswith("https://"):
            return self._public_url.rstrip("/")
        return "mailto:dotfight@localhost"

    async def _in_thread(self, work: Any, *args: Any) -> Any:
        try:
            return await asyncio.get_running_loop().run_in_executor(self._threads, partial(work, *args))
        except (OperationalError, InterfaceError) as error:
            raise ApiError("unavailable", "the database does not answer; try again in a moment") from error

    # ----------------------------------------------------------------------------------------------
    # keys and subscriptions

    async def keys(self) -> VapidKeys:
        """Returns the server's VAPID keys, made and stored on first need."""
        if self._keys is None:
            async with self._keys_lock:
                if self._keys is None:
                    self._keys = await self._in_thread(self._load_or_make_keys)
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

    async def subscribe(self, page: LoadedPage, side: str, endpoint: str, p256dh: str, auth: str) -> None:
        """Keeps a subscription for a seat of a shared-link or live page (refusing other pages)."""
        if page.meta.mode not in PUSH_MODES:
            raise ApiError("bad_request", "pushes are for pages on a shared link or live", reason="no_push")
        check_endpoint(endpoint, self.settings.insecure_endpoints)
        subscribe = partial(repository.subscribe, keep=self.settings.per_seat)
        # The same subscription sent twice at once: the other request stored it.
        with contextlib.suppress(IntegrityError):
            await self._in_thread(self._write, subscribe, page.meta.id, side, endpoint, p256dh, auth)

    async def unsubscribe(self, page_id: str, side: str, endpoint: str) -> bool:
        """Forgets a seat's subscription; tells whether there was one."""
        removed: int = await self._in_thread(self._write, repository.unsubscribe, page_id, side, endpoint)
        return removed > 0

    def _write(self, work: Any, *args: Any) -> Any:
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
        """The master's listener: queues a push when this move made it the other seat's move (never
        waits; called under the page lock)."""
        if page.meta.mode not in PUSH_MODES:
            return
        # Presence first: with both seats on the page (nearly every live move) there is nobody to push
        # to, and working out the notice's text would be wasted on the event loop.
        presence = self._hub.presence(page.meta.id)
        if presence["blue"] and presence["red"]:
            return
        notice = notice_for(page.state, applied.events)
        if notice is None or presence.get(notice.side):
            return
        if len(self._deliveries) >= MAX_PENDING:
            logger.warning("page %s: too many pushes waiting; this one is dropped", page.meta.id)
            return
        payload = notice.payload(page.meta.id, applied.version)
        task = asyncio.get_running_loop().create_task(self._deliver(page.meta.id, notice.side, payload))
        self._deliveries.add(task)
        task.add_done_callback(self._deliveries.discard)

    async def _deliver(self, page_id: str, side: str, payload: dict[str, Any]) -> None:
        try:
            targets = await self._in_thread(self._subscriptions, page_id, side)
            if not targets:
                return
            keys = await self.keys()
            data = json.dumps(payload, separators=(",", ":"))
            for endpoint, p256dh, auth in targets:
                status = await self._in_thread(self._send, keys, endpoint, p256dh, auth, data, page_id)
                if status in GONE:
                    logger.info("page %s: a %s push subscription has expired; removed", page_id, side)
                    await self.unsubscribe(page_id, side, endpoint)
                elif not 200 <= status < 300:
                    logger.warning("page %s: a push service answered %s", page_id, status or "nothing")
        except Exception:  # a failed push must never reach the moves
            logger.exception("page %s: pushing to %s failed", page_id, side)

    def _send(self, keys: VapidKeys, endpoint: str, p256dh: str, auth: str, data: str, topic: str) -> int:
        """Encrypts and posts one push; returns the push service's HTTP status (0: no answer)."""
        import requests
        from pywebpush import WebPushException, webpush

        subscription = {"endpoint": endpoint, "keys": {"p256dh": p256dh, "auth": auth}}
        try:
            response = webpush(
                subscription_info=subscription,
                data=data,
                vapid_private_key=keys.signer,
                vapid_claims={"sub": self.subject},
                ttl=self.settings.ttl,
                timeout=self.settings.timeout,
                # A newer push of the same page replaces one the phone has not fetched yet.
                headers={"Topic": topic, "Urgency": "normal"},
            )
        except WebPushException as error:
            return int(error.response.status_code) if error.response is not None else 0
        except requests.RequestException as error:
            logger.info("push service unreachable: %s", error)
            return 0
        return int(response.status_code)

    async def drain(self) -> None:
        """Waits for the pushes under way (tests, and shutdown)."""
        while self._deliveries:
            await asyncio.gather(*list(self._deliveries), return_exceptions=True)

    async def close(self) -> None:
        """Lets pushes under way finish (briefly), then stops the threads."""
        try:
            await asyncio.wait_for(self.drain(), timeout=5)
        except TimeoutError:
            for task in list(self._deliveries):
                task.cancel()
        self._threads.shutdown(wait=False, cancel_futures=True)
