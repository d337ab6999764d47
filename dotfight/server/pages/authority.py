"""The page authority: the one place where a page's actions are checked, applied, stored and announced.

Each action runs under the page's asyncio lock. The common move — its page in memory at the version the
client saw, rules within the new-page limits, no convoy in transit — is checked and applied right on the
event loop, its cost bounded by a small constant (docs/SERVER.md). Every other goes to an engine thread
(the engine's work, which rule values can make slow, or a read of the store, never runs on the event
loop, so one page's expensive move cannot hold up another page's). Either hands the log entry to the
store's `append`, which writes it only at the version checked and answers once it is durable (the database
store commits the writes waiting at that moment together). Only after that are the events handed to
listeners (the WebSocket fan-out, the bot seat), so nobody ever hears of a move a crash could take
back. The latest state of recent pages is kept in memory; a page another process moved on is brought
up to date by applying the logged actions with the engine (it is deterministic), not rebuilt.

It knows pages only through a `PageStore` (dotfight/store/records.py) and refuses with domain errors
(`pages/errors.py`; a database that does not answer is the store's own `StoreUnavailable`, passed on
untranslated): no HTTP, no pydantic, no SQLAlchemy here (tests/server/test_server_layers.py).
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import Callable, Sequence
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass
from datetime import UTC, datetime
from functools import partial
from typing import Any, NamedTuple, TypeVar

from dotfight.engine import (
    EngineError,
    MalformedAction,
    RuleSet,
    RuleSetError,
    State,
    changes_nothing,
    check_new_page,
    new_page,
)
from dotfight.server import fair_dice, tokens
from dotfight.server.cache import LruCache
from dotfight.server.page_view import BotSeat, LoadedPage, events_on_the_wire, status_of
from dotfight.server.pages.checkpoint_text import (
    InkText,
    checkpoint_text,
    ink_text_bytes,
    state_from_checkpoint,
)
from dotfight.server.pages.errors import (
    BadRequest,
    BadToken,
    EngineRefusal,
    NotFound,
    PageError,
    PageExpired,
    StaleVersion,
    Unavailable,
)
from dotfight.server.pages.handoff import LoopReplies, WorkThreads
from dotfight.server.pages.notice import HeardMove, PendingNotices, notice_payload
from dotfight.server.pages.wire import events_message
from dotfight.server.people.clock import (
    ClockError,
    ClockState,
    LateMove,
    after_commit,
    reminder_at,
    settings_from_json,
    start_clock,
)
from dotfight.server.people.lag import HTTP_ALLOWANCE_S
from dotfight.server.workers import WorkerFailed
from dotfight.server.workers.engine import EngineWorkers, within_new_page_limits
from dotfight.store.records import (
    Appended,
    Checkpoint,
    ClockUpdate,
    LogEntry,
    NoSuchPage,
    PageRecord,
    PageStore,
    Reply,
    SeatRecord,
    StoreUnavailable,
    VersionMoved,
)

logger = logging.getLogger(__name__)

T = TypeVar("T")

# The private state is checkpointed in the store every this many versions (and when the page ends); in
# between, a page loaded from the store replays fewer log entries than this on top of it. Loads are
# rare (the state of recent pages stays in memory) and a replayed move costs about what a checkpoint's
# `State.to_json` does, so 16 halves the checkpoints' cost per move for a few more replayed at a load.
CACHE_EVERY = 16
# Ink never rubs out, so a checkpoint costs more the longer the page (its `to_json` and the text the
# store writes grow with every line drawn, while a replayed move costs the same): the interval grows by
# CACHE_EVERY for every this many lines, which keeps the checkpoints' cost per move about constant. A
# 1000-line page is checkpointed every 128 versions and replays at most 127 moves (a few ms) at a load.
INK_PER_INTERVAL = 128
# The bytes of ink text the authority keeps for its pages' next checkpoints (about 180 000 lines).
INK_TEXT_BYTES = 32 * 1024 * 1024
# Another process's moves of a page kept to advance its state in memory when next needed: past this many
# unused, the page is advanced from the log instead (it is played elsewhere; memory stays bounded).
HEARD_KEPT = 16


def checkpoint_interval(state: State) -> int:
    """How many versions apart the private state is checkpointed at `state`: CACHE_EVERY, and more on
    a page with much ink (its checkpoint costs more).

    >>> from dotfight.engine import RuleSet, new_page
    >>> checkpoint_interval(new_page(RuleSet.preset("quick"), seed=1))
    16
    """
    return CACHE_EVERY * (1 + len(state.ink) // INK_PER_INTERVAL)


@dataclass(frozen=True)
class Capacity:
    """The authority's threads, processes and memory (Settings' values; plain, so no pydantic here)."""

    readers: int = 4
    engine_threads: int = 4
    engine_processes: int = 1
    engine_timeout_s: float = 30.0
    cache_pages: int = 10_000


@dataclass(frozen=True)
class Seat:
    """Who holds a token: one side, or both (`side` None: the local token, acting for `state.actor`)."""

    side: str | None

    @property
    def label(self) -> str:
        """Returns "blue", "red" or "both"."""
        return self.side or "both"


class Arrival(NamedTuple):
    """When an action reached the server (seconds since the epoch: the socket frame read, the HTTP
    request begun) and the lag allowance its sender gets (people/lag.py; 0 for what the server writes)."""

    at: float
    allowance: float = HTTP_ALLOWANCE_S


@dataclass(frozen=True)
class Applied:
    """The outcome of one action as it goes out (to its sender and to every socket of the page): its
    version and its events as sent (`duplicate`: a first answer read from the log), and on a page with a
    clock the snapshot's `clock` as of the answer (issue 19)."""

    version: int
    events: list[dict[str, Any]]
    duplicate: bool = False
    clock: dict[str, Any] | None = None

    @classmethod
    def sent(
        cls, state: State, version: int, events: Sequence[dict[str, Any]], *, duplicate: bool = False
    ) -> Applied:
        """The action of `version` as sent while the page is at `state`: the one place its events are
        put on the wire (`events_on_the_wire`: the last carries the page's options while the page is
        still at that version), for a move just made, a first answer from the log and a catch-up alike."""
        return cls(version, events_on_the_wire(state, events, version), duplicate)


@dataclass(frozen=True)
class CreatePage:
    """The command to create a page: a preset with rule overrides, an optional seed (None: fair dice),
    the mode, and for a bot page the bot's seat (`bot_side`, `bot_strength`) and its generator seed."""

    preset: str
    rules: dict[str, Any] | None
    seed: int | None
    mode: str
    bot_side: str = "blue"
    bot_strength: str = "normal"
    bot_seed: int = 0
    clock: dict[str, int] | None = None  # live {initial_s, increment_s}, link {per_move_s}; None: none
    # The seats' tokens when chosen by the server (a rematch's, drawn for its seats): "blue", "red", or
    # "both" for the local token. None: fresh random tokens. `token_hashes`: seats known only by their
    # stored hash (a rematch's offering seat, drawn with its offer); their token is not shown (None).
    tokens: dict[str, str] | None = None
    token_hashes: dict[str, str] | None = None


@dataclass(frozen=True)
class NewPage:
    """A page just created, with its tokens (shown once), first state and clock as created."""

    page: LoadedPage
    seats: dict[str, str | None]
    clock: dict[str, int] | None = None


class _Request(NamedTuple):
    """One action as its sender asked it: for which seat, at which version, with which move_id, and when
    it reached the server; carried unchanged through the path that decides it."""

    seat: Seat
    action: dict[str, Any]
    version: int
    move_id: str | None
    arrival: Arrival


class _Move(NamedTuple):
    """An action worked out by the engine, not yet stored: its log entry, the page's new state, the
    action as sent, and the page's clock after it (None: no clock)."""

    entry: LogEntry
    state: State
    applied: Applied
    clock: ClockState | None = None


# What an action's write answers: the action as sent, or the first answer of its move_id in the log (put
# on the wire by `act` against the page as it stands then).
Answer = tuple[LoadedPage, Applied | LogEntry]


# How a new page is written: the store's `create` by default; a rematch's is its atomic accept (the new
# page made and linked to the old one in one transaction, or nothing written).
PageWrite = Callable[[PageRecord, Checkpoint, Sequence[SeatRecord]], Future[Any]]


# Called after every committed action, still under the page's lock (so in version order):
# (page, applied) -> None. Listeners must not block.
Listener = Callable[[LoadedPage, Applied], None]


def checkpoint_of(
    state: State, clock: ClockState | None = None, text: Callable[[State], str] | None = None
) -> Checkpoint:
    """The store's summary of a page at `state`, with the private state every
    `checkpoint_interval` versions and at the end, and on a page with a clock its `clock` after the
    action (made here at once: a `dataclasses.replace` of the summary cost a clocked action ~1.5 µs more).
    The private state is its JSON text, made by `text` (the authority's keeps the page's ink lines' text
    between checkpoints; default: made whole)."""
    keep = state.version % checkpoint_interval(state) == 0 or state.phase == "over"
    return Checkpoint(
        version=state.version,
        phase=state.phase,
        side_to_act=state.actor,
        winner=state.winner,
        status=status_of(state),
        state=(text or whole_text)(state) if keep else None,
        clock=None if clock is None else clock_update(clock),
    )


def whole_text(state: State) -> str:
    """The private state's JSON text made whole (no ink text kept from an earlier checkpoint)."""
    return checkpoint_text(state)[0]


def clock_update(clock: ClockState) -> ClockUpdate:
    """The store's form of a page's clock: its JSON, the running side's deadline and a link page's
    reminder, which the store indexes (what the time-out writer polls; written with the deadline)."""
    return ClockUpdate(clock.to_json(), moment_of(clock.deadline), moment_of(reminder_at(clock)))


def moment_of(seconds: float | None) -> datetime | None:
    """A moment of the clock model (seconds since the epoch) as the store keeps it (UTC), or None."""
    return None if seconds is None else datetime.fromtimestamp(seconds, UTC)


def time_out_move_id(version: int) -> str:
    """The move_id of the `time_out` written at `version`: the same on every process, so two noticing at
    once write one entry (the version check and the move_id's dedupe). A client's move_id cannot hold '@'.

    >>> time_out_move_id(12)
    'time_out@12'
    """
    return f"time_out@{version}"


def missing(error: NoSuchPage) -> PageError:
    """The refusal for a page the store does not have: expired (410) or unknown (404)."""
    if error.expired:
        return PageExpired("this page expired: nobody played it past setup in time")
    return NotFound("no page with this id")


def stale(page: LoadedPage) -> StaleVersion:
    """The refusal of an action sent at another version than the page's (with the page as it is)."""
    message = f"the page is at version {page.state.version}"
    return StaleVersion(message, extra={"snapshot": page.public_snapshot()})


def engine_refusal(error: EngineError) -> EngineRefusal:
    """The engine's refusal in the authority's terms (a malformed action is a bad request)."""
    code = "bad_request" if isinstance(error, MalformedAction) else error.code
    return EngineRefusal(code, error.message, reason=error.reason)


class _PageLock:
    """One page's asyncio lock, kept in its authority's table while an action holds or waits for it.

    A plain dict entry counted by its users: with a `WeakValueDictionary` every uncontended action made
    a new `asyncio.Lock` and a weak reference with its callback (an uncontended `async with` 5.1–6.9 µs
    against 2.0–3.8 in loops of 100 000 on the shared machine)."""

    __slots__ = ("_lock", "_page_id", "_table", "_users")

    def __init__(self, table: dict[str, _PageLock], page_id: str) -> None:
        self._table = table
        self._page_id = page_id
        self._lock = asyncio.Lock()
        self._users = 0

    def locked(self) -> bool:
        """Tells whether an action holds the page."""
        return self._lock.locked()

    async def __aenter__(self) -> None:
        self._users += 1
        try:
            await self._lock.acquire()
        except BaseException:  # cancelled while waiting: no longer a user
            self._let_go()
            raise

    async def __aexit__(self, *_: object) -> None:
        self._lock.release()
        self._let_go()

    def _let_go(self) -> None:
        self._users -= 1
        if self._users == 0 and self._table.get(self._page_id) is self:
            del self._table[self._page_id]


class PageAuthority:
    """Creates pages, applies actions and reads pages, with one writer per page at a time."""

    def __init__(
        self, store: PageStore, capacity: Capacity | None = None, now: Callable[[], float] = time.time
    ) -> None:
        capacity = capacity or Capacity()
        self.store = store
        # The server's time (seconds since the epoch) for the clocks; tests hand in a controllable one.
        self.now = now
        # Told the page id of a move refused as late (its time-out is due at most the lag cap later),
        # and each page just created (a clock runs from its creation).
        self.on_late_move: Callable[[str], None] | None = None
        # Told the page id of a write that failed with the database unavailable: it may have committed
        # all the same (the connection lost as the commit went out), and nobody here was told of it.
        self.on_write_unsure: Callable[[str], None] | None = None
        self.on_created: Callable[[LoadedPage], None] | None = None
        self._capacity = capacity
        self._readers = ThreadPoolExecutor(capacity.readers, thread_name_prefix="dotfight-read")
        self._engines = WorkThreads(capacity.engine_threads, "dotfight-engine")
        self._replies: LoopReplies | None = None
        # The engine's worker processes, started at the first page that needs them (rare).
        self._engine = EngineWorkers(capacity.engine_processes, capacity.engine_timeout_s)
        self._pages: LruCache[str, LoadedPage] = LruCache(capacity.cache_pages)
        self._seat_hashes: LruCache[str, tuple[tuple[str, str | None], ...]] = LruCache(capacity.cache_pages)
        # The lock of each page with an action under way or waiting (gone with its last user).
        self._locks: dict[str, _PageLock] = {}
        self._listeners: list[Listener] = []
        # On PostgreSQL: each action's notice to the other processes, handed to the NOTIFY hook; and the
        # moves they committed of pages this process serves, applied to the state in memory lazily (the
        # next time an action of the page is decided here). Both None / touched on the event loop only.
        self.notices: PendingNotices | None = None
        self._heard: LruCache[str, list[HeardMove]] = LruCache(capacity.cache_pages)
        # Each page's ink lines as JSON text, from its last checkpoint to its next (checkpoint_text.py),
        # ~180 bytes a line: bounded in bytes too, a page whose text was let go makes it again whole.
        self._ink_texts: LruCache[str, InkText] = LruCache(
            capacity.cache_pages, max_bytes=INK_TEXT_BYTES, size=ink_text_bytes
        )

    # ----------------------------------------------------------------------------------------------
    # plumbing

    def add_listener(self, listener: Listener) -> None:
        """Registers a callback told of every committed action (after the commit, in version order)."""
        self._listeners.append(listener)

    def close(self) -> None:
        """Stops the engine and reader threads (finishing submitted work) and the engine's processes."""
        self._engine.close()
        self._engines.shutdown()
        self._readers.shutdown(wait=True)

    def page_lock(self, page_id: str) -> _PageLock:
        """Returns the lock held while an action of this page is applied, stored and announced (an
        async context manager; the page's entry goes with its last user)."""
        lock = self._locks.get(page_id)
        if lock is None:
            lock = self._locks[page_id] = _PageLock(self._locks, page_id)
        return lock

    def forget(self, page_id: str) -> None:
        """Drops a page's state from memory (it is loaded from the store when next asked for)."""
        self._pages.drop(page_id)
        self._heard.drop(page_id)

    def forget_all(self) -> None:
        """Drops every page from memory: after a database outage another process may have credited the
        downtime to the clocks held here (heartbeat.py); pages are loaded again as they are asked for."""
        self._pages = LruCache(self._capacity.cache_pages)
        self._heard = LruCache(self._capacity.cache_pages)

    # ----------------------------------------------------------------------------------------------
    # other processes' moves (PostgreSQL)

    def heard(self, page_id: str, move: HeardMove) -> None:
        """Keeps another process's committed move of a page whose state is in memory, to advance that
        state by it when this process next decides an action of the page (`_with_heard`): nothing is
        worked out now, and a move nobody here acts after costs nothing more. A move that does not follow
        on from the state (a notice missed, or one too long to carry the move) leaves the state to be
        advanced from the log when needed, as before. Call on the event loop."""
        cached = self._pages.get(page_id)
        if cached is None or move.version <= cached.state.version:
            return  # nothing in memory to advance, or this process's own move (echoed back)
        kept = [each for each in self._heard.get(page_id) or () if each.version > cached.state.version]
        follows = (kept[-1].version if kept else cached.state.version) + 1
        if move.version != follows or len(kept) >= HEARD_KEPT:
            self._heard.drop(page_id)
            return
        kept.append(move)
        self._heard.put(page_id, kept)

    def _with_heard(self, page_id: str, page: LoadedPage | None) -> LoadedPage | None:
        """The page in memory advanced by the other processes' moves heard since (`heard`), on the event
        loop when each step is as bounded as an inline move (rules within the new-page limits, no convoy
        in transit); else the page as it was (an engine thread then brings it up from the log)."""
        heard = self._heard.get(page_id)
        if heard is None or page is None:
            return page
        self._heard.drop(page_id)
        state, clock = page.state, page.clock
        if not within_new_page_limits(state.rules):
            return page
        for move in heard:
            if move.version <= state.version:
                continue
            if move.version != state.version + 1 or state.convoys:
                break
            logger.debug("page %s: work: an engine step to version %d (heard)", page_id, move.version)
            try:
                after, _ = self._advance(state, move.side, move.action)
                moved_clock = None if move.clock is None else ClockState.from_json(move.clock)
            except (EngineError, WorkerFailed, ClockError):
                break
            if after.version != move.version or (moved_clock is None) != (page.meta.clock is None):
                break
            state, clock = after, moved_clock
        if state is page.state:
            return page
        advanced = LoadedPage(page.meta, state, clock)
        self._pages.put(page_id, advanced)
        return advanced

    def _advance(self, state: State, side: str, action: dict[str, Any]) -> tuple[State, list[dict[str, Any]]]:
        """Applies one action (raising the engine's refusal), in a worker process for rules outside the
        new-page limits (workers/engine.py). Called on engine and reader threads only."""
        return self._engine.advance(state, side, action)

    async def _off_loop(self, work: Callable[..., T], *args: Any) -> T:
        """Runs store work on a reader thread, its store errors in the authority's terms."""
        loop = asyncio.get_running_loop()
        try:
            return await loop.run_in_executor(self._readers, partial(work, *args))
        except NoSuchPage as error:
            raise missing(error) from None

    # ----------------------------------------------------------------------------------------------
    # reading pages (reader and engine threads)

    async def page(self, page_id: str) -> LoadedPage:
        """Returns the page at its latest version; raises NotFound or PageExpired."""
        return await self._off_loop(self.current, page_id)

    def current(self, page_id: str) -> LoadedPage:
        """Returns the page at its stored version (a blocking call: on a thread, never the event loop)."""
        version = self._stored_version(page_id)
        return self._brought_up_to(page_id, self._pages.get(page_id), version)

    def _stored_version(self, page_id: str) -> int:
        """Reads the page's version from the store."""
        logger.debug("page %s: work: a read of its version", page_id)
        return self.store.version(page_id)

    def _brought_up_to(
        self, page_id: str, cached: LoadedPage | None, version: int, entries: Sequence[LogEntry] | None = None
    ) -> LoadedPage:
        """Returns the page at the stored `version`: the state in memory advanced by the log entries
        after it (another process's moves; the engine is deterministic, so the same actions make the
        same state), or loaded from the store when there is none or the log does not follow on from it.
        `entries` are the log entries after the cached version when the caller has read them already.
        Memory only holds committed states: one newer than `version` was committed since it was read."""
        if cached is not None and cached.state.version >= version:
            return cached
        # A page with a clock is loaded again: its clock is written with each move, never in the log.
        if cached is not None and cached.meta.clock is None:
            at = cached.state.version
            if entries is None:
                entries = self._log(page_id, at, version)
            page = self._advanced(cached, [entry for entry in entries if at < entry.version <= version])
            if page is not None and page.state.version == version:
                self._pages.put(page_id, page)
                return page
            logger.info("page %s: the log does not follow on from the state in memory; reloading", page_id)
            self._pages.drop(page_id)
        return self._load(page_id)

    def _log(self, page_id: str, after: int, up_to: int | None = None) -> list[LogEntry]:
        """Reads the page's log entries after a version (and at most `up_to`)."""
        logger.debug("page %s: work: a read of its log after version %d", page_id, after)
        return self.store.log(page_id, after, up_to=up_to)

    def _advanced(self, page: LoadedPage, entries: Sequence[LogEntry]) -> LoadedPage | None:
        """Applies logged entries to a page in order; None at a gap, a repeat, or an entry the engine
        refuses or numbers differently (the caller then loads the page from the store)."""
        state = page.state
        for entry in entries:
            if entry.version != state.version + 1:
                return None
            logger.debug("page %s: work: an engine step to version %d (logged)", page.meta.id, entry.version)
            try:
                state, _ = self._advance(state, entry.side, entry.action)
            except (EngineError, WorkerFailed):
                return None
            if state.version != entry.version:
                return None
        return LoadedPage(page.meta, state)

    def _load(self, page_id: str) -> LoadedPage:
        """Builds the page's state from the store: its checkpointed state plus the log entries after it,
        or the whole log replayed when there is no checkpoint."""
        logger.debug("page %s: work: a load from the store", page_id)
        stored = self.store.load(page_id)
        meta = stored.record
        if stored.checkpoint is not None:
            state = state_from_checkpoint(stored.checkpoint)
            for entry in stored.entries:
                state, _ = self._advance(state, entry.side, entry.action)
        else:
            logger.info("page %s: rebuilding its state from the whole log", page_id)
            state = self._engine.replay(
                RuleSet.from_json(meta.rules),
                int(meta.seed, 16),
                [{"side": entry.side, "action": entry.action} for entry in stored.entries],
            )
        if state.version != stored.version:
            raise RuntimeError(f"page {page_id}: rebuilt at version {state.version}, stored {stored.version}")
        clock = None if stored.clock_state is None else ClockState.from_json(stored.clock_state)
        page = LoadedPage(meta, state, clock)
        self._pages.put(page_id, page)
        return page

    async def caught_up(self, page_id: str, heard: int) -> tuple[LoadedPage, list[list[dict[str, Any]]]]:
        """Returns the page at its latest version and the events of each logged action after `heard`,
        oldest first, read together (one trip to the log both brings the state in memory up to date and
        tells the sockets what they missed)."""
        return await self._off_loop(self._read_caught_up, page_id, heard)

    def _read_caught_up(self, page_id: str, heard: int) -> tuple[LoadedPage, list[list[dict[str, Any]]]]:
        cached = self._pages.get(page_id)
        if cached is None:
            page = self._load(page_id)
            entries = self._log(page_id, heard, page.state.version)
        else:
            # One read: every entry after what memory and the sockets hold (all of them committed).
            entries = self._log(page_id, min(heard, cached.state.version))
            newest = entries[-1].version if entries else cached.state.version
            page = self._brought_up_to(page_id, cached, newest, entries)
        return page, [entry.events for entry in entries if heard < entry.version <= page.state.version]

    async def events_since(
        self, page_id: str, version: int, up_to: int | None = None
    ) -> list[list[dict[str, Any]]]:
        """Returns the events of each logged action after `version` (and at most `up_to`), oldest first."""
        entries = await self._off_loop(self._log, page_id, version, up_to)
        return [entry.events for entry in entries]

    async def seat(self, page_id: str, token: str | None) -> Seat:
        """Returns the seat a token holds on a page; raises NotFound or BadToken."""
        # Seats never change after creation: a page seen before is answered without a trip to the store.
        seats = self._seat_hashes.get(page_id)
        if seats is None:
            seats = await self._off_loop(self._read_seats, page_id)
        stored = tokens.matching_hash(token, (stored for stored, _ in seats)) if token else None
        if stored is None:
            raise BadToken("this link cannot act on this page")
        return Seat(side=dict(seats)[stored])

    def _read_seats(self, page_id: str) -> tuple[tuple[str, str | None], ...]:
        seats = tuple((seat.token_hash, seat.side) for seat in self.store.seats(page_id))
        self._seat_hashes.put(page_id, seats)
        return seats

    # ----------------------------------------------------------------------------------------------
    # creating pages

    async def create(self, command: CreatePage, write: PageWrite | None = None) -> NewPage:
        """Creates a page (written by `write`, default the store's `create`); raises BadRequest for rules
        a new page may not have, or what `write` refuses with (nothing is then kept)."""
        rules = self._new_rules(command)
        seed = command.seed if command.seed is not None else fair_dice.new_seed()
        state = new_page(rules, seed)
        bot = None
        if command.mode == "bot":
            bot = BotSeat(side=command.bot_side, strength=command.bot_strength, seed=command.bot_seed)
        record = PageRecord(
            id=tokens.new_page_id(),
            mode=command.mode,
            preset=command.preset,
            rules=rules.to_json(),
            seed=fair_dice.seed_hex(seed),
            seed_sha256=fair_dice.seed_commitment(seed),
            bot=None if bot is None else bot.to_json(),
            created_at=datetime.now(UTC),
            clock=command.clock,
        )
        seats, seat_records = self._new_seats(
            command.mode, bot, command.tokens or {}, command.token_hashes or {}
        )
        clock = None
        if command.clock is not None:  # validated by the schema: its time starts now
            clock = start_clock(settings_from_json(command.clock), state, self.now())
        first = checkpoint_of(state, clock)  # a new page's version 0: its private state included
        await asyncio.wrap_future((write or self.store.create)(record, first, seat_records))
        page = LoadedPage(record, state, clock)
        self._pages.put(record.id, page)
        self._seat_hashes.put(record.id, tuple((seat.token_hash, seat.side) for seat in seat_records))
        if self.on_created is not None:
            self.on_created(page)
        return NewPage(page=page, seats=seats, clock=command.clock)

    @staticmethod
    def _new_rules(command: CreatePage) -> RuleSet:
        try:
            rules = RuleSet.preset(command.preset, **(command.rules or {}))
            # Stricter than what a stored page may hold: no ratio that makes a rule's work unbounded.
            check_new_page(rules)
        except RuleSetError as error:
            raise BadRequest(f"these rules cannot be played: {error}", reason=error.reason) from error
        except (EngineError, TypeError, ValueError) as error:
            raise BadRequest(f"these rules cannot be played: {error}") from error
        return rules

    @staticmethod
    def _new_seats(
        mode: str, bot: BotSeat | None, chosen: dict[str, str], hashes: dict[str, str]
    ) -> tuple[dict[str, str | None], list[SeatRecord]]:
        if mode == "local":
            if "both" in hashes:
                return {"blue": None, "red": None}, [SeatRecord(hashes["both"], None, "local")]
            token = chosen.get("both") or tokens.new_token()
            return {"blue": token, "red": token}, [SeatRecord(tokens.token_hash(token), None, "local")]
        seats: dict[str, str | None] = {}
        records = []
        for side in ("blue", "red"):
            if bot is not None and bot.side == side:
                seats[side] = None
                continue
            if side in hashes:
                seats[side] = None
                records.append(SeatRecord(hashes[side], side, "seat"))
                continue
            token = chosen.get(side) or tokens.new_token()
            seats[side] = token
            records.append(SeatRecord(tokens.token_hash(token), side, "seat"))
        return seats, records

    # ----------------------------------------------------------------------------------------------
    # acting

    async def act(
        self,
        page_id: str,
        seat: Seat,
        action: dict[str, Any],
        version: int,
        move_id: str | None,
        arrival: Arrival | None = None,
    ) -> Applied:
        """Applies one action for a seat at the version its sender saw, stores it, then tells listeners.
        On a page with a clock the action is charged from its `arrival` (default: now, with the HTTP
        allowance), and one that came too late is refused (`illegal_action`, `out_of_time`).

        Raises NotFound, StaleVersion (with the snapshot), EngineRefusal, BadRequest when a move_id was
        already used by the other side or the action would change nothing, or Unavailable when an
        expensive page's engine worker failed; the store's StoreUnavailable (it cannot take the write
        now) passes through as it is, the one type of "database down" up to `errors.api_error`.
        """
        async with self.page_lock(page_id):
            # The writer answers this future once the entry is durable, on the loop's thread. The common
            # move is worked out right here and handed to the writer (one hand-off there and one back);
            # any other goes to an engine thread, which hands the entry to the store itself.
            loop = asyncio.get_running_loop()
            outcome: asyncio.Future[Answer] = loop.create_future()
            reply = partial(self._replies_on(loop).settle, outcome)
            page = self._pages.get(page_id)
            if self.notices is not None:  # other processes serve the database: their moves may be heard
                page = self._with_heard(page_id, page)
            arrival = arrival or Arrival(self.now())
            request = _Request(seat, action, version, move_id, arrival)
            if page is None or not self._inline(page, request, reply):
                self._engines.submit(self._on_engine_thread, page_id, request, reply)
            try:
                page, answer = await outcome
            except EngineRefusal as refusal:
                if refusal.reason == "out_of_time" and self.on_late_move is not None:
                    self.on_late_move(page_id)
                raise
            except VersionMoved:
                page, answer = await self._after_lost_race(page_id, seat, move_id)
            except StoreUnavailable:
                if self.on_write_unsure is not None:
                    self.on_write_unsure(page_id)
                raise
            except WorkerFailed as error:  # an expensive page's engine worker died or ran out of time
                raise Unavailable(f"this move could not be worked out ({error})") from None
            except NoSuchPage as error:
                raise missing(error) from None
            if isinstance(answer, Applied):
                answer = self._with_clock(page, answer)
                self._tell_listeners(page, answer)
                return answer
            if page.state.version < answer.version:
                # Found in the log by a write that held an older page (another process wrote it): the
                # page as it stands now, so the answer is the first one, options included.
                page = await self.page(page_id)
            return self._with_clock(
                page, Applied.sent(page.state, answer.version, answer.events, duplicate=True)
            )

    def _with_clock(self, page: LoadedPage, applied: Applied) -> Applied:
        """The answer with the page's `clock` as of now (the browser counts down from it), on a page
        with a clock; as it is on any other."""
        if page.clock is None:
            return applied
        # Made whole, not by `dataclasses.replace` (its field walk: 2.8 against 1.3 µs).
        return Applied(applied.version, applied.events, applied.duplicate, page.clock_view(self.now()))

    def _replies_on(self, loop: asyncio.AbstractEventLoop) -> LoopReplies:
        """The answers to this loop's actions (one per loop: the server has one, tests make several)."""
        replies = self._replies
        if replies is None or replies.loop is not loop:
            replies = self._replies = LoopReplies(loop)
        return replies

    async def _after_lost_race(self, page_id: str, seat: Seat, move_id: str | None) -> Answer:
        """Another process wrote this version (or move_id) between our check and our write. If it wrote
        this very move (a retry sent to two processes), its first answer is the answer: the store
        decides, asked again now that the other write is durable. Otherwise the action is stale."""
        self._pages.drop(page_id)
        first = await self._off_loop(self._logged_before, page_id, move_id)
        page = await self.page(page_id)
        if first is None:
            raise stale(page) from None
        return page, self._first_answer(seat, first)

    def _tell_listeners(self, page: LoadedPage, applied: Applied) -> None:
        for listener in self._listeners:
            try:
                listener(page, applied)
            except Exception:  # a listener's failure must not undo a committed move
                logger.exception("page %s: listener failed", page.meta.id)

    def _inline(self, page: LoadedPage, request: _Request, reply: Reply[Answer]) -> bool:
        """Decides one action on the calling thread (the event loop) when that needs no read and its
        cost is bounded by a small constant: the page in memory, rules within the new-page limits (every
        engine search bounded, issue 9) and no convoy in transit (an arrival's free-spot search is the
        costliest bounded step; docs/SERVER.md), at the version the client saw. Returns False, having
        done nothing, for every other action, and for one whose answer only the log can give (an engine
        thread then takes it: the client may be behind, or another process may have moved the page on)."""
        state = page.state
        if state.version != request.version or state.convoys or not within_new_page_limits(state.rules):
            return False
        return self._decide(page, request, reply, may_read=False)

    def _on_engine_thread(self, page_id: str, request: _Request, reply: Reply[Answer]) -> None:
        """Decides one action on an engine thread, reading the page from the store when needed."""
        try:
            page = self._page_at(page_id, request.version)
        except Exception as error:
            reply(error)
            return
        self._decide(page, request, reply, may_read=True)

    def _decide(self, page: LoadedPage, request: _Request, reply: Reply[Answer], *, may_read: bool) -> bool:
        """The one path of an action: checked at the version its sender saw, worked out by the engine,
        refused, or handed to the store (whose answer is passed to `reply`). A stale action or a refusal
        carrying a move_id may be a retry of a move already made, answered with its first result, which
        only the log knows: without `may_read` it returns False then, having done nothing."""
        seat, action, version, move_id, arrival = request
        try:
            move: _Move | PageError = (
                stale(page)
                if page.state.version != version
                else self._move(page, seat, action, move_id, arrival)
            )
            if isinstance(move, PageError):
                if move_id is not None:
                    if not may_read:
                        return False
                    first = self._logged_before(page.meta.id, move_id)
                    if first is not None:
                        reply((page, self._first_answer(seat, first)))
                        return True
                raise move
        except Exception as error:
            reply(error)
            return True
        self._append(page, seat, move, reply)
        return True

    def _page_at(self, page_id: str, version: int) -> LoadedPage:
        """The page in memory when it is at the version the client saw; else the page as stored (brought
        up to date: the client may be behind, or another process may have moved it on)."""
        page = self._pages.get(page_id)
        if page is not None and page.state.version == version:
            return page
        return self._brought_up_to(page_id, page, self._stored_version(page_id))

    @staticmethod
    def _acting_side(seat: Seat, page: LoadedPage) -> str:
        """The side an action is for: the seat's, or for the local token whoever is to act."""
        return seat.side or page.state.actor or "blue"

    def _move(
        self, page: LoadedPage, seat: Seat, action: dict[str, Any], move_id: str | None, arrival: Arrival
    ) -> _Move | PageError:
        """The engine's outcome of a seat's action on the page: the log entry, the new state and the
        events as sent (the new turn's options, C6: worked out before the write, not on the event loop
        after the commit); or the refusal (the engine's, or no_change for an action that would only add
        a version)."""
        side = self._acting_side(seat, page)
        try:
            new_state, events = self._advance(page.state, side, action)
        except EngineError as error:
            return engine_refusal(error)
        if changes_nothing(page.state, action):
            return BadRequest("this action would change nothing", reason="no_change")
        clock = None
        if page.clock is not None:  # the clock changes with the move, in the same write
            try:
                clock = after_commit(page.state, new_state, page.clock, arrival.at, arrival.allowance)
            except LateMove as late:
                return engine_refusal(late)
        entry = LogEntry(new_state.version, side, action, events, move_id)
        return _Move(entry, new_state, Applied.sent(new_state, entry.version, events), clock)

    def _append(self, page: LoadedPage, seat: Seat, move: _Move, reply: Reply[Answer]) -> None:
        """Hands the move's entry to the store at the page's version; once durable, the new state is the
        page in memory and `reply` is told (a move_id logged before is answered with its first result)."""
        entry, new_state, applied, clock = move
        page_id = page.meta.id
        moved_on = LoadedPage(page.meta, new_state, clock)
        checkpoint = checkpoint_of(new_state, clock, partial(self._state_text, page_id))
        notices = self.notices
        if notices is not None:
            notices.hand(page_id, entry.version, self._notice(moved_on, move))

        def settle(written: Appended | BaseException) -> None:
            # Runs on the store's writer thread, once the entry is durable (or refused); whatever
            # happens here, `reply` is told, or the action's caller would wait for ever.
            if notices is not None:
                notices.drop(page_id, entry.version)
            if isinstance(written, BaseException):
                reply(written)
                return
            try:
                if written.duplicate:
                    reply((page, self._first_answer(seat, written.entry)))
                    return
                self._pages.put(page_id, moved_on)
            except BaseException as error:  # handed to the caller, not swallowed
                reply(error)
                return
            reply((moved_on, applied))

        try:
            self.store.append_then(page_id, page.state.version, entry, checkpoint, settle)
        except Exception as error:  # refused before it was queued: `settle` never runs
            if notices is not None:
                notices.drop(page_id, entry.version)
            reply(error)

    def _state_text(self, page_id: str, state: State) -> str:
        """The page's private state as its checkpoint's text, the text of its ink lines kept for the
        next one (pages/checkpoint_text.py: a checkpoint serialises only the lines drawn since)."""
        text, ink = checkpoint_text(state, self._ink_texts.get(page_id))
        self._ink_texts.put(page_id, ink)
        return text

    def _notice(self, moved_on: LoadedPage, move: _Move) -> str:
        """The NOTIFY payload of a move about to be written (pages/notice.py): the move and its events
        message as the other processes' sockets receive it, with the clock as of now."""
        entry, state = move.entry, moved_on.state
        heard = HeardMove(
            entry.version,
            entry.side,
            entry.action,
            None if state.phase == "over" else state.actor,
            None if move.clock is None else move.clock.to_json(),
        )
        message = events_message(entry.version, move.applied.events, moved_on.clock_view(self.now()))
        return notice_payload(moved_on.meta.id, heard, message)

    def _logged_before(self, page_id: str, move_id: str | None) -> LogEntry | None:
        """Returns the entry of a move_id already in the log (None without a move_id: no read)."""
        return None if move_id is None else self.store.logged_move(page_id, move_id)

    @staticmethod
    def _first_answer(seat: Seat, entry: LogEntry) -> LogEntry:
        """The answer to a move_id found in the log: its first result, unless the other side used it."""
        if seat.side is not None and entry.side != seat.side:
            raise BadRequest("this move_id was already used by the other side")
        return entry
