"""The authority over every page: the one place where actions are checked, applied, stored and announced.

Each action runs under the page's asyncio lock. An engine thread checks it against the page's version
and applies it (the engine's work, which rule values can make slow, never runs on the writer or the
event loop, so one page's expensive move cannot hold up another page's); it then hands the write of log
entry and new version to the single writer thread, which checks the version and `move_id` again in its
transaction and commits the writes waiting at that moment together. Only after the commit are the
events handed to listeners (the WebSocket hub, the bot seat), so nobody ever hears of a move a crash
could take back. Reads run on a thread pool of their own; the latest state of recent pages is kept in
memory.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import logging
import threading
import weakref
from collections.abc import Callable, Sequence
from concurrent.futures import Future, InvalidStateError, ThreadPoolExecutor
from dataclasses import dataclass, replace
from functools import partial
from typing import Any, TypeVar

from sqlalchemy import Engine
from sqlalchemy.exc import IntegrityError
from sqlalchemy.orm import Session

from dotfight.engine import (
    EngineError,
    IllegalAction,
    MalformedAction,
    Replay,
    RuleSet,
    RuleSetError,
    State,
    apply,
    check_new_page,
    new_page,
)
from dotfight.server import engine_process, fair_dice, tokens
from dotfight.server.cache import LruCache
from dotfight.server.errors import ApiError
from dotfight.server.page_view import BotSeat, LoadedPage, PageMeta, events_on_the_wire, iso_utc, status_of
from dotfight.server.schemas import BotIn, PageCreate
from dotfight.server.settings import Settings
from dotfight.server.workers import WorkerFailed, WorkerPool
from dotfight.server.writer import AfterCommit, BatchWriter, JobRefused, Prepare
from dotfight.store import expiry, leases, repository
from dotfight.store.database import (
    DatabaseFile,
    DatabaseUnavailable,
    database_answers,
    database_writable,
    is_database_trouble,
    make_session_factory,
)
from dotfight.store.models import ActionRow, PageRow, SeatRow, utc_now

logger = logging.getLogger(__name__)

T = TypeVar("T")

# The private state is cached in the page row every this many versions (and when the page ends); in
# between, a page rebuilt from the database replays at most this many log entries on top of it.
CACHE_EVERY = 8
# How long the health check waits for the write lock before it calls the database not writable (a
# write transaction holds it for milliseconds).
HEALTH_WRITE_WAIT_S = 1.0


@dataclass(frozen=True)
class Seat:
    """Who holds a token: one side, or both (`side` None: the local token, acting for `state.actor`)."""

    side: str | None

    @property
    def label(self) -> str:
        """Returns "blue", "red" or "both"."""
        return self.side or "both"


@dataclass(frozen=True)
class Applied:
    """The outcome of one action: its version and events (`duplicate`: answered from the log)."""

    version: int
    events: list[dict[str, Any]]
    duplicate: bool = False


@dataclass(frozen=True)
class NewPage:
    """A page just created, with its tokens (shown once) and first state."""

    page: LoadedPage
    seats: dict[str, str | None]


# Called after every committed action, still under the page's lock (so in version order):
# (page, events) -> None. Listeners must not block.
Listener = Callable[[LoadedPage, Applied], None]


class PageMovedOn(JobRefused):
    """Another worker process moved the page on between the engine's check and the write (nothing of
    this write was written; the other writes of its batch go on)."""


@dataclass(frozen=True)
class LogSlice:
    """A stretch of a page's log: entries from version `start`, at most `limit` of them."""

    start: int
    limit: int


def _no_such_page(session: Session, page_id: str) -> ApiError:
    # A page deleted by expiry answers 410 page_expired (CONTRACTS.md C5), an unknown one 404.
    if expiry.is_expired(session, page_id):
        return ApiError("page_expired", "this page expired: nobody played it past setup in time")
    return ApiError("not_found", "no page with this id")


def _stored_version(session: Session, page_id: str) -> int:
    """Reads the page's stored version alone (not its cached state); raises not_found."""
    version = repository.page_version(session, page_id)
    if version is None:
        raise _no_such_page(session, page_id)
    return version


def _unavailable(error: BaseException | None = None) -> ApiError:
    detail = f" ({error})" if isinstance(error, DatabaseUnavailable) else ""
    return ApiError("unavailable", f"the database does not answer{detail}; try again in a moment")


def within_new_page_limits(rules: RuleSet) -> bool:
    """Tells whether a page's rules are within what a new page may have (`check_new_page`): only pages
    stored before a limit existed are outside, and their moves may be expensive."""
    try:
        check_new_page(rules)
    except RuleSetError:
        return False
    return True


def _refusal_of(outcome: engine_process.Outcome) -> EngineError:
    _, malformed, code, reason, message = outcome
    return MalformedAction(reason, message) if malformed else IllegalAction(reason, message, code)


def changes_nothing(state: State, action: dict[str, Any]) -> bool:
    """Tells whether an action the engine accepted on `state` would only add a version: a `position`
    that moves nobody (an empty list, or every soldier to where he already stands). Such actions are
    refused when they arrive; ones already in a log still replay.

    >>> from dotfight.engine import RuleSet, apply, new_page
    >>> page, _ = apply(new_page(RuleSet.preset("quick"), seed=7), "blue", {"type": "quick_setup"})
    >>> changes_nothing(page, {"type": "position", "soldiers": []})
    True
    >>> changes_nothing(page, {"type": "position", "soldiers": [{"id": "b3s1", "x": 500, "y": 1050}]})
    True
    >>> changes_nothing(page, {"type": "position", "soldiers": [{"id": "b3s1", "x": 501, "y": 1050}]})
    False
    """
    if action.get("type") != "position":
        return False
    return all(
        (state.soldier(item["id"]).x, state.soldier(item["id"]).y) == (item["x"], item["y"])
        for item in action["soldiers"]
    )


def _engine_refusal(error: EngineError) -> ApiError:
    code = "bad_request" if isinstance(error, MalformedAction) else error.code
    return ApiError(code, error.message, reason=error.reason)


class Master:
    """Creates pages, applies actions and answers every read, with one writer per page at a time."""

    def __init__(self, settings: Settings, database: Engine) -> None:
        self._settings = settings
        self._database = database
        self._sessions = make_session_factory(database)
        self._readers = ThreadPoolExecutor(settings.db_threads, thread_name_prefix="dotfight-read")
        self._engines = ThreadPoolExecutor(settings.engine_threads, thread_name_prefix="dotfight-engine")
        # Started at the first page that needs it (pages outside the new-page limits are rare).
        self._isolated: WorkerPool | None = None
        self._isolated_lock = threading.Lock()
        self._file = DatabaseFile.of(database, settings.db_min_free_bytes)
        self._writer = BatchWriter(
            self._sessions,
            settings.db_busy_timeout_s,
            check=self._file.problem if self._file is not None else None,
        )
        self._pages: LruCache[str, LoadedPage] = LruCache(settings.state_cache_pages)
        self._seat_hashes: LruCache[str, tuple[tuple[str, str | None], ...]] = LruCache(
            settings.state_cache_pages
        )
        self._locks: weakref.WeakValueDictionary[str, asyncio.Lock] = weakref.WeakValueDictionary()
        self._listeners: list[Listener] = []
        # Run inside each action's write transaction (the PostgreSQL NOTIFY, delivered at commit).
        self.notify_in_transaction: Callable[[Session, str, int], None] | None = None

    # ----------------------------------------------------------------------------------------------
    # plumbing

    def add_listener(self, listener: Listener) -> None:
        """Registers a callback told of every committed action (after the commit, in version order)."""
        self._listeners.append(listener)

    def close(self) -> None:
        """Stops the engine and database threads (finishing submitted work) and the engine's processes."""
        if self._isolated is not None:
            self._isolated.close()
        self._engines.shutdown(wait=True)
        self._writer.close()
        self._readers.shutdown(wait=True)

    def _isolated_engine(self) -> WorkerPool:
        with self._isolated_lock:
            if self._isolated is None:
                settings = self._settings
                self._isolated = WorkerPool(
                    "the engine", settings.engine_processes, settings.engine_timeout_s,
                    ["dotfight.server.engine_process"],
                )  # fmt: skip
            return self._isolated

    def _advance(self, state: State, side: str, action: dict[str, Any]) -> tuple[State, list[dict[str, Any]]]:
        """Applies one action (raising the engine's refusal): on this thread, or, for a page whose rules
        are outside the new-page limits, in an engine worker process, so that its cost (seconds, hundreds
        of MB) can never hold this process's GIL or memory. Called on engine and reader threads only."""
        if within_new_page_limits(state.rules):
            return apply(state, side, action)
        outcome = self._isolated_engine().call(engine_process.apply_by_value, state.to_json(), side, action)
        if outcome[0] == "refused":
            raise _refusal_of(outcome)
        return State.from_json(outcome[1]), outcome[2]

    def _replay(self, rules: RuleSet, seed: int, actions: list[dict[str, Any]]) -> State:
        """Replays a whole log (in an engine worker process when the rules are outside the limits)."""
        if within_new_page_limits(rules):
            replay = Replay(rules, seed, actions)
            if replay.error is not None or replay.valid != len(actions):
                raise RuntimeError(f"the log does not replay ({replay.error!r})")
            return replay.state
        outcome = self._isolated_engine().call(engine_process.replay_by_value, rules.to_json(), seed, actions)
        if outcome[0] == "refused":
            raise RuntimeError(f"the log does not replay ({_refusal_of(outcome)!r})")
        return State.from_json(outcome[1])

    async def _in_db(self, work: Callable[..., T], *args: Any) -> T:
        loop = asyncio.get_running_loop()
        try:
            return await loop.run_in_executor(self._readers, partial(work, *args))
        except Exception as error:
            if is_database_trouble(error):
                raise _unavailable(error) from error
            raise

    async def write(self, prepare: Prepare[T], order: str = "") -> T:
        """Runs a write job on the writer thread (committed with the writes waiting beside it); `order`
        names the page whose rows it locks first. Raises unavailable when the database cannot take it."""
        return await self._write(prepare, order)

    async def _write(self, prepare: Prepare[T], order: str = "") -> T:
        try:
            return await self._writer.run(prepare, order)
        except Exception as error:
            if is_database_trouble(error):
                raise _unavailable(error) from error
            raise

    def page_lock(self, page_id: str) -> asyncio.Lock:
        """Returns the lock held while an action of this page is applied, stored and announced."""
        lock = self._locks.get(page_id)
        if lock is None:
            lock = asyncio.Lock()
            self._locks[page_id] = lock
        return lock

    # ----------------------------------------------------------------------------------------------
    # reads

    async def health_problem(self) -> str | None:
        """Says why the database cannot serve now (it does not answer, or cannot take a write: its file
        gone, its disk full, its write lock held for the whole busy timeout), or None when it can."""
        problem = self._file.problem() if self._file is not None else None  # a stat: microseconds
        if problem is not None:
            return problem
        if not await self._in_db(database_answers, self._database):
            return "the database does not answer"
        wait_s = min(self._settings.db_busy_timeout_s, HEALTH_WRITE_WAIT_S)
        if not await self._in_db(database_writable, self._database, wait_s):
            return "the database cannot be written (another writer holds it)"
        return None

    async def page(self, page_id: str) -> LoadedPage:
        """Returns the page at its latest version; raises not_found."""
        return await self._in_db(self._read_page, page_id)

    def _read_page(self, page_id: str) -> LoadedPage:
        with self._sessions() as session:
            version = _stored_version(session, page_id)
            cached = self._pages.get(page_id)
            # Memory only holds committed states: one newer than the stored version was committed since.
            return self._brought_up_to(session, page_id, cached, version)

    def _brought_up_to(
        self,
        session: Session,
        page_id: str,
        cached: LoadedPage | None,
        version: int,
        entries: Sequence[ActionRow] | None = None,
    ) -> LoadedPage:
        """Returns the page at the stored `version`: the state in memory advanced by the log entries
        after it (another process's moves; the engine is deterministic, so the same actions make the
        same state), or rebuilt from its row when there is none or the log does not follow on from it.
        `entries` are the log entries after the cached version when the caller has read them already."""
        if cached is not None and cached.state.version >= version:
            return cached
        if cached is not None:
            at = cached.state.version
            if entries is None:
                entries = repository.actions_after(session, page_id, at, up_to=version)
            behind = [
                (entry.version, entry.side, entry.action)
                for entry in entries
                if at < entry.version <= version
            ]
            page = self._advanced(cached, behind)
            if page is not None and page.state.version == version:
                self._pages.put(page_id, page)
                return page
            logger.info("page %s: the log does not follow on from the state in memory; rebuilding", page_id)
            self._pages.drop(page_id)
        return self._rebuild(session, page_id)

    def _advanced(
        self, page: LoadedPage, entries: Sequence[tuple[int, str, dict[str, Any]]]
    ) -> LoadedPage | None:
        """Applies logged (version, side, action) entries to a page in order; None at a gap, a repeat or
        an entry the engine refuses or numbers differently (the caller then rebuilds from the row)."""
        state = page.state
        for version, side, action in entries:
            if version != state.version + 1:
                return None
            try:
                state, _ = self._advance(state, side, action)
            except (EngineError, WorkerFailed):
                return None
            if state.version != version:
                return None
        return LoadedPage(page.meta, state)

    def _rebuild(self, session: Session, page_id: str) -> LoadedPage:
        """Builds the page's state from its row: the cached private state plus the log entries after it,
        or the whole log replayed when there is no usable cache."""
        row = repository.get_page(session, page_id)
        if row is None:
            raise _no_such_page(session, page_id)
        meta = PageMeta.from_row(row)
        cached_at = row.cache_version
        if row.state_cache is not None and cached_at is not None and cached_at <= row.version:
            state = State.from_json(row.state_cache)
            # Bounded by the row's version: an action committed since the row was read is left out.
            for entry in repository.actions_after(session, row.id, cached_at, up_to=row.version):
                state, _ = self._advance(state, entry.side, entry.action)
        else:
            logger.info("page %s: rebuilding its state from the whole log", row.id)
            entries = repository.actions_after(session, row.id, 0, up_to=row.version)
            state = self._replay(
                RuleSet.from_json(row.rules),
                int(row.seed, 16),
                [{"side": entry.side, "action": entry.action} for entry in entries],
            )
        if state.version != row.version:
            raise RuntimeError(f"page {row.id}: rebuilt at version {state.version}, stored {row.version}")
        page = LoadedPage(meta, state)
        self._pages.put(row.id, page)
        return page

    async def log(self, page_id: str, part: LogSlice) -> str:
        """Returns a stretch of the page's log as JSON text (the seed only once the page is over), with
        `next`: the first version of the following stretch, or null when this one reaches the page's end.

        The stored action and events texts are passed on unparsed, so a long log costs its readers
        little more than the database's own read (and holds the GIL as briefly as possible).
        """
        return await self._in_db(self._read_log, page_id, part)

    def _read_log(self, page_id: str, part: LogSlice) -> str:
        page = self._read_page(page_id)
        # The log is read after the page: entries newer than the page's version are left out, so the
        # seed is never shown beside a log that does not end the page.
        end = page.state.version
        last = min(end, part.start + part.limit - 1)
        with self._sessions() as session:
            rows = repository.log_texts(session, page_id, part.start, last)
        meta = page.meta
        head = json.dumps(
            {
                "id": meta.id,
                "mode": meta.mode,
                "preset": meta.preset,
                "rules": meta.rules,
                "seed_sha256": meta.seed_sha256,
                "seed": page.revealed_seed(),
                "next": last + 1 if last < end else None,
            }
        )
        entries = ",".join(
            f'{{"version":{version},"side":{json.dumps(side)},"action":{action},"events":{events},'
            f'"move_id":{json.dumps(move_id)},"at":"{iso_utc(created_at)}"}}'
            for version, side, action, events, move_id, created_at in rows
        )
        return f'{head[:-1]},"entries":[{entries}]}}'

    async def pages_awaiting_bot(self) -> list[str]:
        """Returns the ids of the open bot pages where it is the bot's move (e.g. left so by a crash) and
        no server process holds a live lease to play the bot (leases.py)."""
        return await self._in_db(self._read_pages_awaiting_bot)

    def _read_pages_awaiting_bot(self) -> list[str]:
        with self._sessions() as session:
            rows = leases.unleased_bot_pages(session, utc_now())
        return [page_id for page_id, bot, side_to_act in rows if bot.get("side") == side_to_act]

    async def caught_up(self, page_id: str, heard: int) -> tuple[LoadedPage, list[list[dict[str, Any]]]]:
        """Returns the page at its latest version and the events of each logged action after `heard`,
        oldest first, read together (one trip to the log both brings the state in memory up to date and
        tells the sockets what they missed)."""
        return await self._in_db(self._read_caught_up, page_id, heard)

    def _read_caught_up(self, page_id: str, heard: int) -> tuple[LoadedPage, list[list[dict[str, Any]]]]:
        with self._sessions() as session:
            cached = self._pages.get(page_id)
            if cached is None:
                page = self._rebuild(session, page_id)
                entries = repository.actions_after(session, page_id, heard, up_to=page.state.version)
            else:
                # One read: every entry after what memory and the sockets hold (all of them committed).
                entries = repository.actions_after(session, page_id, min(heard, cached.state.version))
                newest = entries[-1].version if entries else cached.state.version
                page = self._brought_up_to(session, page_id, cached, newest, entries)
            return page, [entry.events for entry in entries if heard < entry.version <= page.state.version]

    async def events_since(self, page_id: str, version: int) -> list[list[dict[str, Any]]]:
        """Returns the events of each logged action after `version`, oldest first."""
        return await self._in_db(self._read_events_since, page_id, version)

    def _read_events_since(self, page_id: str, version: int) -> list[list[dict[str, Any]]]:
        with self._sessions() as session:
            return [entry.events for entry in repository.actions_after(session, page_id, version)]

    async def summaries(self, page_ids: Sequence[str]) -> list[dict[str, Any]]:
        """Returns short summaries of the pages named (unknown ids skipped)."""
        return await self._in_db(self._read_summaries, page_ids)

    def _read_summaries(self, page_ids: Sequence[str]) -> list[dict[str, Any]]:
        with self._sessions() as session:
            rows = repository.get_pages(session, page_ids)
        return [
            {
                "id": row.id,
                "mode": row.mode,
                "preset": row.preset,
                "status": row.status,
                "winner": row.winner,
                "version": row.version,
                "phase": row.phase,
                "side_to_act": row.side_to_act,
                "created_at": iso_utc(row.created_at),
                "updated_at": iso_utc(row.updated_at),
            }
            for row in rows
        ]

    async def seat(self, page_id: str, token: str | None) -> Seat:
        """Returns the seat a token holds on a page; raises not_found or bad_token."""
        # Seats never change after creation: a page seen before is answered without a database trip.
        seats = self._seat_hashes.get(page_id)
        if seats is None:
            seats = await self._in_db(self._read_seats, page_id)
        stored = tokens.matching_hash(token, (stored for stored, _ in seats)) if token else None
        if stored is None:
            raise ApiError("bad_token", "this link cannot act on this page")
        return Seat(side=dict(seats)[stored])

    def _read_seats(self, page_id: str) -> tuple[tuple[str, str | None], ...]:
        with self._sessions() as session:
            _stored_version(session, page_id)  # the page must exist
            seats = tuple((row.token_hash, row.side) for row in repository.page_seats(session, page_id))
        self._seat_hashes.put(page_id, seats)
        return seats

    # ----------------------------------------------------------------------------------------------
    # writes

    async def create(self, request: PageCreate, bot_seed: int | None) -> NewPage:
        """Creates a page; `bot_seed` is given for bot pages (the caller checked the bot is there)."""
        try:
            rules = RuleSet.preset(request.preset, **(request.rules or {}))
            # Stricter than what a stored page may hold: no ratio that makes a rule's work unbounded.
            check_new_page(rules)
        except RuleSetError as error:
            raise ApiError(
                "bad_request", f"these rules cannot be played: {error}", reason=error.reason
            ) from error
        except (EngineError, TypeError, ValueError) as error:
            raise ApiError("bad_request", f"these rules cannot be played: {error}") from error
        seed = request.seed_value()
        if seed is None:
            seed = fair_dice.new_seed()
        state = new_page(rules, seed)
        now = utc_now()
        bot = None
        if request.mode == "bot":
            wanted = request.bot or BotIn()
            bot = BotSeat(side=wanted.side, strength=wanted.strength, seed=bot_seed or 0)
        row = PageRow(
            id=tokens.new_page_id(),
            rules=rules.to_json(),
            preset=request.preset,
            seed=fair_dice.seed_hex(seed),
            seed_sha256=fair_dice.seed_commitment(seed),
            mode=request.mode,
            status=status_of(state),
            phase=state.phase,
            side_to_act=state.actor,
            winner=state.winner,
            version=state.version,
            bot=None if bot is None else bot.to_json(),
            state_cache=state.to_json(),
            cache_version=state.version,
            created_at=now,
            updated_at=now,
        )
        seats, seat_rows = self._new_seats(row.id, request.mode, bot)
        page = LoadedPage(PageMeta.from_row(row), state)

        def insert(session: Session) -> tuple[None, AfterCommit]:
            repository.add_page(session, row, seat_rows)
            return None, None

        await self._write(insert)
        self._pages.put(row.id, page)
        self._seat_hashes.put(row.id, tuple((seat.token_hash, seat.side) for seat in seat_rows))
        return NewPage(page=page, seats=seats)

    @staticmethod
    def _new_seats(
        page_id: str, mode: str, bot: BotSeat | None
    ) -> tuple[dict[str, str | None], list[SeatRow]]:
        if mode == "local":
            token = tokens.new_token()
            row = SeatRow(page_id=page_id, side=None, kind="local", token_hash=tokens.token_hash(token))
            return {"blue": token, "red": token}, [row]
        seats: dict[str, str | None] = {}
        rows = []
        for side in ("blue", "red"):
            if bot is not None and bot.side == side:
                seats[side] = None
                continue
            token = tokens.new_token()
            seats[side] = token
            rows.append(SeatRow(page_id=page_id, side=side, kind="seat", token_hash=tokens.token_hash(token)))
        return seats, rows

    async def act(
        self, page_id: str, seat: Seat, action: dict[str, Any], version: int, move_id: str | None
    ) -> Applied:
        """Applies one action for a seat at the version its sender saw, stores it, then tells listeners.

        Raises ApiError: not_found, stale_version (with the snapshot), the engine's refusals, bad_request
        when a move_id was already used by the other side or the action would change nothing, or
        unavailable when the database cannot take the write now.
        """
        lock = self.page_lock(page_id)
        async with lock:
            # One hand-off there and one back: the engine thread queues the write itself, and the
            # writer answers this future once the write is committed.
            outcome: Future[tuple[LoadedPage, Applied]] = Future()
            self._engines.submit(self._check_and_apply, page_id, seat, action, version, move_id, outcome)
            try:
                page, applied = await asyncio.wrap_future(outcome)
            except (IntegrityError, PageMovedOn):
                # Another process wrote this version (or move_id) between our check and our write. If it
                # wrote this very move (a retry sent to two processes), its first answer is the answer:
                # the database decides, asked again now that the other write is committed.
                self._pages.drop(page_id)
                first = await self._in_db(self._answered_before, page_id, seat, move_id)
                page = await self.page(page_id)
                if first is None:
                    raise self._stale(page) from None
                applied = first
            except WorkerFailed as error:  # an expensive page's engine worker died or ran out of time
                raise ApiError("unavailable", f"this move could not be worked out ({error})") from None
            except Exception as error:
                if is_database_trouble(error):
                    raise _unavailable(error) from error
                raise
            if applied.duplicate and page.state.version < applied.version:
                # Found in the log by a write that held an older page (another process wrote it): the
                # page as it stands now, so the answer is the first one, options included.
                page = await self.page(page_id)
            # After the commit, not in the writer: the events as sent carry the new turn's options.
            applied = replace(applied, events=events_on_the_wire(page.state, applied.events, applied.version))
            if not applied.duplicate:
                for listener in self._listeners:
                    try:
                        listener(page, applied)
                    except Exception:  # a listener's failure must not undo a committed move
                        logger.exception("page %s: listener failed", page_id)
        return applied

    def _check_and_apply(
        self,
        page_id: str,
        seat: Seat,
        action: dict[str, Any],
        version: int,
        move_id: str | None,
        outcome: Future[tuple[LoadedPage, Applied]],
    ) -> None:
        """Checks and applies one action on an engine thread, then queues its write (which answers
        `outcome`); a refusal, a duplicate or a failure answers `outcome` here."""
        try:
            page = self._pages.get(page_id)
            if page is None or page.state.version != version:
                # Not in memory, or the client is behind (or another worker moved on): ask the database.
                with self._sessions() as session:
                    stored = _stored_version(session, page_id)
                    if page is None or page.state.version != stored:
                        page = self._brought_up_to(session, page_id, page, stored)
                    duplicate = self._logged_move(session, page_id, seat, move_id)
                if duplicate is not None:
                    with contextlib.suppress(InvalidStateError):  # its caller may have gone meanwhile
                        outcome.set_result((page, duplicate))
                    return
                if page.state.version != version:
                    raise self._stale(page)
            side = seat.side or page.state.actor or "blue"
            refusal: ApiError | None = None
            try:
                new_state, events = self._advance(page.state, side, action)
            except EngineError as error:
                refusal = _engine_refusal(error)
            if refusal is None and changes_nothing(page.state, action):
                refusal = ApiError("bad_request", "this action would change nothing", reason="no_change")
            if refusal is not None:
                # A retry of a move already made is answered with its first result, whatever it carries.
                duplicate = self._answered_before(page_id, seat, move_id)
                if duplicate is None:
                    raise refusal
                with contextlib.suppress(InvalidStateError):  # its caller may have gone meanwhile
                    outcome.set_result((page, duplicate))
                return
            changes: dict[str, Any] = {
                "version": new_state.version,
                "phase": new_state.phase,
                "side_to_act": new_state.actor,
                "winner": new_state.winner,
                "status": status_of(new_state),
            }
            if new_state.version % CACHE_EVERY == 0 or new_state.phase == "over":
                changes["state_cache"] = new_state.to_json()
                changes["cache_version"] = new_state.version
        except Exception as error:
            with contextlib.suppress(InvalidStateError):  # its caller may have gone meanwhile
                outcome.set_exception(error)
            return
        # Plain values: the row is built in each transaction that tries the write (a batch can be retried).
        entry = {
            "page_id": page_id,
            "version": new_state.version,
            "side": side,
            "action": action,
            "events": events,
            "move_id": move_id,
        }
        moved_on = LoadedPage(page.meta, new_state)
        applied = Applied(version=new_state.version, events=events)
        write = partial(self._write_action, page, seat, entry, changes, (moved_on, applied))
        self._writer.submit(write, outcome, order=page_id)

    def _write_action(
        self,
        page: LoadedPage,
        seat: Seat,
        entry: dict[str, Any],
        changes: dict[str, Any],
        result: tuple[LoadedPage, Applied],
        session: Session,
    ) -> tuple[tuple[LoadedPage, Applied], AfterCommit]:
        """Writes one applied action (a job of the writer: database work only, refusals before writes)."""
        page_id = page.meta.id
        # Asked again inside the write's transaction: the first answer to a move_id is the only one.
        duplicate = self._logged_move(session, page_id, seat, entry["move_id"])
        if duplicate is not None:
            return (page, duplicate), None
        now = utc_now()
        if not repository.append_action(session, page_id, page.state.version, changes, now):
            raise PageMovedOn(page_id)  # nothing was written
        repository.add_action(session, ActionRow(**entry, created_at=now))
        if self.notify_in_transaction is not None:
            self.notify_in_transaction(session, page_id, entry["version"])
        return result, partial(self._pages.put, page_id, result[0])

    def _answered_before(self, page_id: str, seat: Seat, move_id: str | None) -> Applied | None:
        """Returns the first result of a move_id already in the log (None without a move_id: no read)."""
        if move_id is None:
            return None
        with self._sessions() as session:
            return self._logged_move(session, page_id, seat, move_id)

    @staticmethod
    def _logged_move(session: Session, page_id: str, seat: Seat, move_id: str | None) -> Applied | None:
        if move_id is None:
            return None
        entry = repository.action_by_move_id(session, page_id, move_id)
        if entry is None:
            return None
        if seat.side is not None and entry.side != seat.side:
            raise ApiError("bad_request", "this move_id was already used by the other side")
        return Applied(version=entry.version, events=entry.events, duplicate=True)

    @staticmethod
    def _stale(page: LoadedPage) -> ApiError:
        return ApiError(
            "stale_version",
            f"the page is at version {page.state.version}",
            extra={"snapshot": page.public_snapshot()},
        )
