"""The database's own views, read on threads of their own: a stretch of a page's log as stored text, short
summaries of pages, the bot pages waiting for a move that no process plays, and the database's health.

They are views of the database rather than of one page's state, so they go past the page authority
(which keeps pages' states); `SqlPageStore` builds them beside its writer (sql_pages.py). A database that
cannot be reached is `StoreUnavailable` here as everywhere in the store.
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import Callable, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from functools import partial
from typing import Any, TypeVar

from sqlalchemy import Engine, select
from sqlalchemy.orm import Session, sessionmaker

from dotfight.store import leases, repository
from dotfight.store.database import (
    DatabaseFile,
    database_answers,
    database_writable,
    is_database_trouble,
    store_unavailable,
)
from dotfight.store.models import PageRow, utc_now
from dotfight.store.people import as_utc
from dotfight.store.records import PageMoved, iso_utc, iso_utc_z

T = TypeVar("T")

# How long the health check waits for the write lock before it calls the database not writable (a
# write transaction holds it for milliseconds).
HEALTH_WRITE_WAIT_S = 1.0


@dataclass(frozen=True)
class LogSlice:
    """A stretch of a page's log: entries from version `start`, at most `limit` of them."""

    start: int
    limit: int


class DatabaseViews:
    """Reads of the database as a whole, each on one of `threads` threads (never the event loop)."""

    def __init__(
        self,
        database: Engine,
        sessions: sessionmaker[Session],
        threads: int,
        busy_timeout_s: float,
        file: DatabaseFile | None,
    ) -> None:
        self._database = database
        self._sessions = sessions
        self._readers = ThreadPoolExecutor(threads, thread_name_prefix="dotfight-view")
        self._busy_timeout_s = busy_timeout_s
        self._file = file

    def close(self) -> None:
        """Finishes the reads under way, then stops the threads."""
        self._readers.shutdown(wait=True)

    async def _in_thread(self, work: Callable[..., T], *args: Any) -> T:
        try:
            return await asyncio.get_running_loop().run_in_executor(self._readers, partial(work, *args))
        except Exception as error:
            if is_database_trouble(error):
                raise store_unavailable(error) from error
            raise

    async def health_problem(self) -> str | None:
        """Says why the database cannot serve now (it does not answer, or cannot take a write: its file
        gone, its disk full, its write lock held for the whole busy timeout), or None when it can."""
        problem = self._file.problem() if self._file is not None else None  # a stat: microseconds
        if problem is not None:
            return problem
        if not await self._in_thread(database_answers, self._database):
            return "the database does not answer"
        wait_s = min(self._busy_timeout_s, HEALTH_WRITE_WAIT_S)
        if not await self._in_thread(database_writable, self._database, wait_s):
            return "the database cannot be written (another writer holds it)"
        return None

    async def log(self, head: dict[str, Any], end: int, part: LogSlice) -> str:
        """Returns a stretch of a page's log as JSON text: `head` (the page's fields, `id` among them)
        with `next` (the first version of the following stretch, or null when this one reaches `end`,
        the page's version when it was read) and the entries.

        The stored action and events texts are passed on unparsed, so a long log costs its readers
        little more than the database's own read (and holds the GIL as briefly as possible). Entries
        newer than `end` are left out, so a seed in `head` is never shown beside a log that does not
        end the page.
        """
        return await self._in_thread(self._read_log, head, end, part)

    def _read_log(self, head: dict[str, Any], end: int, part: LogSlice) -> str:
        last = min(end, part.start + part.limit - 1)
        with self._sessions() as session:
            rows = repository.log_texts(session, head["id"], part.start, last)
        text = json.dumps({**head, "next": last + 1 if last < end else None})
        entries = ",".join(
            f'{{"version":{version},"side":{json.dumps(side)},"action":{action},"events":{events},'
            f'"move_id":{json.dumps(move_id)},"at":"{iso_utc(created_at)}"}}'
            for version, side, action, events, move_id, created_at in rows
        )
        return f'{text[:-1]},"entries":[{entries}]}}'

    async def pages_awaiting_bot(self) -> list[str]:
        """Returns the ids of the open bot pages where it is the bot's move (e.g. left so by a crash) and
        no server process holds a live lease to play the bot (leases.py)."""
        return await self._in_thread(self._read_pages_awaiting_bot)

    def _read_pages_awaiting_bot(self) -> list[str]:
        with self._sessions() as session:
            rows = leases.unleased_bot_pages(session, utc_now())
        return [page_id for page_id, bot, side_to_act in rows if bot.get("side") == side_to_act]

    async def last_moved(self, page_id: str) -> PageMoved | None:
        """Returns when a page last moved and its stored clock state (None: no such page)."""
        return await self._in_thread(self._read_last_moved, page_id)

    def _read_last_moved(self, page_id: str) -> PageMoved | None:
        query = select(PageRow.updated_at, PageRow.clock_state).where(PageRow.id == page_id)
        with self._sessions() as session:
            row = session.execute(query).first()
        return None if row is None else PageMoved(as_utc(row.updated_at), row.clock_state)

    async def summaries(self, page_ids: Sequence[str]) -> list[dict[str, Any]]:
        """Returns short summaries of the pages named (unknown ids skipped)."""
        return await self._in_thread(self._read_summaries, page_ids)

    def _read_summaries(self, page_ids: Sequence[str]) -> list[dict[str, Any]]:
        with self._sessions() as session:
            rows = repository.get_pages(session, page_ids)
            reasons = repository.end_reasons(session, [row.id for row in rows if row.status == "over"])
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
                # Dawood-bot's seat and level (its seed stays private): the book names the level.
                "bot": {"side": row.bot["side"], "strength": row.bot["strength"]} if row.bot else None,
                "created_at": iso_utc(row.created_at),
                "updated_at": iso_utc(row.updated_at),
                # Issue 19: the clock as created, when the running side's time ends, who runs, how it ended.
                "clock": row.clock,
                "deadline": None if row.deadline is None else iso_utc_z(row.deadline),
                "running": running_side(row.clock_state),
                "reason": reasons.get(row.id),
            }
            for row in rows
        ]


def running_side(clock_state: dict[str, Any] | None) -> str | None:
    """The side whose time runs, from a stored clock state's `running` ("blue", "red"), else None.

    >>> running_side({"running": "red", "blue_s": 60}), running_side({"running": "green"}), running_side(None)
    ('red', None, None)
    """
    running = clock_state.get("running") if isinstance(clock_state, dict) else None
    return running if running in ("blue", "red") else None
