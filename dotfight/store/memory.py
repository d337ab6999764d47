"""A `PageStore` kept in dicts: the page authority's fast tests run on it (no database, no threads of
its own). It keeps the same promises as the database store: an append writes only at the expected
version, a move_id already logged answers its first entry, and an answered append is never lost (for as
long as the object lives)."""

from __future__ import annotations

import threading
from collections.abc import Sequence
from concurrent.futures import Future

from dotfight.store.records import (
    Appended,
    AppendsAnsweredByFuture,
    Checkpoint,
    LogEntry,
    NoSuchPage,
    PageRecord,
    Reply,
    SeatRecord,
    StoredPage,
    VersionMoved,
)


class _Page:
    def __init__(self, record: PageRecord, checkpoint: Checkpoint, seats: Sequence[SeatRecord]) -> None:
        self.record = record
        self.row = checkpoint
        self.saved = checkpoint  # the last checkpoint that carried the private state
        self.seats = list(seats)
        self.log: list[LogEntry] = []
        self.moves: dict[str, LogEntry] = {}


class MemoryPageStore(AppendsAnsweredByFuture):
    """Pages in memory, safe to share between threads.

    >>> from dataclasses import replace
    >>> from datetime import UTC, datetime
    >>> store = MemoryPageStore()
    >>> record = PageRecord("p1", "local", "quick", {}, "0" * 32, "", None, datetime.now(UTC))
    >>> store.create(record, Checkpoint(0, "bases", "blue", None, "open", {}), []).result()
    >>> entry = LogEntry(1, "blue", {"type": "quick_setup"}, [], move_id="m1")
    >>> store.append("p1", 0, entry, Checkpoint(1, "bases", "red", None, "open")).result().duplicate
    False
    >>> again = store.append("p1", 1, replace(entry, version=2), Checkpoint(2, "bases", "blue", None, "open"))
    >>> again.result().duplicate, again.result().entry.version
    (True, 1)
    >>> store.version("p1")
    1
    """

    def __init__(self) -> None:
        self._pages: dict[str, _Page] = {}
        self._expired: set[str] = set()
        self._lock = threading.Lock()

    def _page(self, page_id: str) -> _Page:
        page = self._pages.get(page_id)
        if page is None:
            raise NoSuchPage(page_id, expired=page_id in self._expired)
        return page

    def create(self, record: PageRecord, checkpoint: Checkpoint, seats: Sequence[SeatRecord]) -> Future[None]:
        """Stores a new page (answered at once)."""
        future: Future[None] = Future()
        with self._lock:
            if record.id in self._pages:
                future.set_exception(ValueError(f"page {record.id!r} exists"))
            else:
                self._pages[record.id] = _Page(record, checkpoint, seats)
                future.set_result(None)
        return future

    def expire(self, page_id: str) -> None:
        """Deletes a page as expiry does (its id then answers NoSuchPage with `expired`)."""
        with self._lock:
            self._pages.pop(page_id, None)
            self._expired.add(page_id)

    def version(self, page_id: str) -> int:
        """Returns the page's version."""
        with self._lock:
            return self._page(page_id).row.version

    def load(self, page_id: str) -> StoredPage:
        """Returns the page with its last checkpointed state and the entries after it."""
        with self._lock:
            page = self._page(page_id)
            at = page.saved.version
            return StoredPage(page.record, page.row.version, page.saved.state, at, tuple(page.log[at:]))

    def log(self, page_id: str, after: int, up_to: int | None = None) -> list[LogEntry]:
        """Returns the entries after `after` (at most `up_to`)."""
        with self._lock:
            entries = self._page(page_id).log
            return list(entries[max(after, 0) : len(entries) if up_to is None else max(up_to, 0)])

    def logged_move(self, page_id: str, move_id: str) -> LogEntry | None:
        """Returns the entry logged under `move_id`, or None."""
        with self._lock:
            page = self._pages.get(page_id)
            return None if page is None else page.moves.get(move_id)

    def seats(self, page_id: str) -> list[SeatRecord]:
        """Returns the page's seats."""
        with self._lock:
            return list(self._page(page_id).seats)

    def append_then(
        self,
        page_id: str,
        expected_version: int,
        entry: LogEntry,
        checkpoint: Checkpoint,
        reply: Reply[Appended],
    ) -> None:
        """The same as `append`, its outcome handed to `reply` at once (on the calling thread)."""
        with self._lock:
            try:
                page = self._page(page_id)
            except NoSuchPage:
                outcome: Appended | BaseException = VersionMoved(page_id)  # as the UPDATE finds no row
            else:
                outcome = self._appended(page, expected_version, entry, checkpoint)
        reply(outcome)

    @staticmethod
    def _appended(
        page: _Page, expected_version: int, entry: LogEntry, checkpoint: Checkpoint
    ) -> Appended | VersionMoved:
        first = page.moves.get(entry.move_id) if entry.move_id is not None else None
        if first is not None:
            return Appended(first, duplicate=True)
        if page.row.version != expected_version or entry.version != expected_version + 1:
            return VersionMoved(page.record.id)
        page.log.append(entry)
        if entry.move_id is not None:
            page.moves[entry.move_id] = entry
        page.row = checkpoint
        if checkpoint.state is not None:
            page.saved = checkpoint
        return Appended(entry)
