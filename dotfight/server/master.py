"""The pages service: the page authority on the database's page store, in the API's terms.

Layers (docs/ARCHITECTURE.md): routes turn request bodies into commands → this service → the page
authority (`pages/authority.py`: locks, checks, engine, listeners; domain errors) → the `PageStore`
protocol (`dotfight/store/records.py`), here `SqlPageStore` on the single group-commit writer. This
module wires them, answers the reads that are views of the database rather than of one page's state
(a log page as stored text, summaries, the bot pages waiting, the database's health) and turns the
authority's domain errors into the API's `ApiError` (one place: `_in_api_terms`).
"""

from __future__ import annotations

import asyncio
import contextlib
import json
from collections.abc import Callable, Iterator, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from functools import partial
from typing import Any, TypeVar

from sqlalchemy import Engine

from dotfight.server.errors import ApiError, api_error
from dotfight.server.page_view import LoadedPage, iso_utc
from dotfight.server.pages.authority import (
    Applied,
    Capacity,
    CreatePage,
    Listener,
    NewPage,
    PageAuthority,
    Seat,
    missing,
    unavailable,
)
from dotfight.server.pages.errors import PageError
from dotfight.server.schemas import PageCreate
from dotfight.server.settings import Settings
from dotfight.server.writer import BatchWriter
from dotfight.store import leases, repository
from dotfight.store.database import (
    DatabaseFile,
    database_answers,
    database_writable,
    is_database_trouble,
    make_session_factory,
)
from dotfight.store.models import utc_now
from dotfight.store.records import NoSuchPage, StoreUnavailable
from dotfight.store.sql_pages import InTransaction, SessionJob, SqlPageStore, store_unavailable

__all__ = ["Applied", "LogSlice", "Master", "NewPage", "Seat"]

T = TypeVar("T")

# How long the health check waits for the write lock before it calls the database not writable (a
# write transaction holds it for milliseconds).
HEALTH_WRITE_WAIT_S = 1.0


@dataclass(frozen=True)
class LogSlice:
    """A stretch of a page's log: entries from version `start`, at most `limit` of them."""

    start: int
    limit: int


@contextlib.contextmanager
def _in_api_terms() -> Iterator[None]:
    """Turns the authority's and the store's errors into the API's."""
    try:
        yield
    except PageError as error:
        raise api_error(error) from error
    except NoSuchPage as error:
        raise api_error(missing(error)) from error
    except StoreUnavailable as error:
        raise api_error(unavailable(error)) from error


class Master:
    """The page authority on the database, with the database's own views, answering in API terms."""

    def __init__(self, settings: Settings, database: Engine) -> None:
        self._settings = settings
        self._database = database
        self._sessions = make_session_factory(database)
        # The database's own views (log pages, summaries, health) read on threads of their own.
        self._readers = ThreadPoolExecutor(settings.db_threads, thread_name_prefix="dotfight-view")
        self._file = DatabaseFile.of(database, settings.db_min_free_bytes)
        self._writer = BatchWriter(
            database,
            settings.db_busy_timeout_s,
            check=self._file.problem if self._file is not None else None,
        )
        self.store = SqlPageStore(self._sessions, self._writer.submit)
        self.authority = PageAuthority(
            self.store,
            Capacity(
                readers=settings.db_threads,
                engine_threads=settings.engine_threads,
                engine_processes=settings.engine_processes,
                engine_timeout_s=settings.engine_timeout_s,
                cache_pages=settings.state_cache_pages,
            ),
        )

    # ----------------------------------------------------------------------------------------------
    # plumbing

    @property
    def notify_in_transaction(self) -> InTransaction | None:
        """Run inside each action's write transaction (the PostgreSQL NOTIFY, delivered at commit)."""
        return self.store.in_transaction

    @notify_in_transaction.setter
    def notify_in_transaction(self, hook: InTransaction | None) -> None:
        self.store.in_transaction = hook

    def add_listener(self, listener: Listener) -> None:
        """Registers a callback told of every committed action (after the commit, in version order)."""
        self.authority.add_listener(listener)

    def page_lock(self, page_id: str) -> asyncio.Lock:
        """Returns the lock held while an action of this page is applied, stored and announced."""
        return self.authority.page_lock(page_id)

    def close(self) -> None:
        """Stops the engine and database threads (finishing submitted work) and the engine's processes."""
        self.authority.close()
        self._writer.close()
        self._readers.shutdown(wait=True)

    async def _in_db(self, work: Callable[..., T], *args: Any) -> T:
        loop = asyncio.get_running_loop()
        try:
            return await loop.run_in_executor(self._readers, partial(work, *args))
        except ApiError:
            raise
        except Exception as error:
            if is_database_trouble(error):
                raise api_error(unavailable(store_unavailable(error))) from error
            with _in_api_terms():
                raise

    async def write(self, prepare: SessionJob[T], order: str = "") -> T:
        """Runs a write job on the writer thread with an ORM session (committed with the writes waiting
        beside it); `order` names the page whose rows it locks first. Raises unavailable when the database
        cannot take it."""
        try:
            return await self._writer.run(lambda transaction: prepare(transaction.session), order)
        except Exception as error:
            if is_database_trouble(error):
                raise api_error(unavailable(store_unavailable(error))) from error
            raise

    # ----------------------------------------------------------------------------------------------
    # the page authority, in API terms

    async def page(self, page_id: str) -> LoadedPage:
        """Returns the page at its latest version; raises not_found or page_expired."""
        with _in_api_terms():
            return await self.authority.page(page_id)

    def _read_page(self, page_id: str) -> LoadedPage:
        """The page at its latest version, read on the calling thread (not the event loop)."""
        with _in_api_terms():
            return self.authority.current(page_id)

    async def caught_up(self, page_id: str, heard: int) -> tuple[LoadedPage, list[list[dict[str, Any]]]]:
        """Returns the page at its latest version and the events of each action after `heard`."""
        with _in_api_terms():
            return await self.authority.caught_up(page_id, heard)

    async def events_since(self, page_id: str, version: int) -> list[list[dict[str, Any]]]:
        """Returns the events of each logged action after `version`, oldest first."""
        with _in_api_terms():
            return await self.authority.events_since(page_id, version)

    async def seat(self, page_id: str, token: str | None) -> Seat:
        """Returns the seat a token holds on a page; raises not_found or bad_token."""
        with _in_api_terms():
            return await self.authority.seat(page_id, token)

    async def create(self, command: CreatePage | PageCreate, bot_seed: int | None = None) -> NewPage:
        """Creates a page (from the command, or a creation body and the bot's seed)."""
        if isinstance(command, PageCreate):
            command = command.command(bot_seed)
        with _in_api_terms():
            return await self.authority.create(command)

    async def act(
        self, page_id: str, seat: Seat, action: dict[str, Any], version: int, move_id: str | None
    ) -> Applied:
        """Applies one action for a seat at the version its sender saw (PageAuthority.act)."""
        with _in_api_terms():
            return await self.authority.act(page_id, seat, action, version, move_id)

    # ----------------------------------------------------------------------------------------------
    # the database's own views

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
