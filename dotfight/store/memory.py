"""A `PageStore` kept in dicts: the page authority's fast tests run on it (no database, no threads of
its own). It keeps the same promises as the database store: an append writes only at the expected
version, a move_id already logged answers its first entry, and an answered append is never lost (for as
long as the object lives)."""

from __future__ import annotations

import threading
from collections.abc import Callable, Sequence
from concurrent.futures import Future
from dataclasses import replace
from datetime import datetime, timedelta
from typing import TypeVar

from dotfight.store.records import (
    Appended,
    AppendsAnsweredByFuture,
    Checkpoint,
    ClockCredit,
    ClockUpdate,
    Deadline,
    Downtime,
    LogEntry,
    NoSuchPage,
    OfferEnd,
    PageRecord,
    Phrase,
    PhraseCapReached,
    Rematch,
    RematchRefused,
    Reminder,
    Reply,
    SealedSeat,
    SeatRecord,
    StoredPage,
    VersionMoved,
)

T = TypeVar("T")


def _answered(work: Callable[[], T]) -> Future[T]:
    """A future answered at once with what `work` returns, or with what it raises."""
    future: Future[T] = Future()
    try:
        future.set_result(work())
    except Exception as error:
        future.set_exception(error)
    return future


class _Page:
    def __init__(self, record: PageRecord, checkpoint: Checkpoint, seats: Sequence[SeatRecord]) -> None:
        self.record = record
        self.row = checkpoint
        self.saved = checkpoint  # the last checkpoint that carried the private state
        self.seats = list(seats)
        self.log: list[LogEntry] = []
        self.moves: dict[str, LogEntry] = {}
        self.clock: ClockUpdate | None = checkpoint.clock
        self.rematch: Rematch | None = None
        self.phrases: list[Phrase] = []


def _refused_acceptance(standing: Rematch, side: str, now: datetime, offered_seat: str | None) -> str | None:
    """Why `side` may not accept this rematch now (as people.refused_acceptance), or None."""
    if standing.page is not None:
        return "accepted"
    if standing.offered_by == side:
        return "own_offer"
    if standing.expires_at <= now:
        return "expired"
    if (None if standing.offered_seat is None else standing.offered_seat.token_hash) != offered_seat:
        return "offered_again"
    return None


def _moved_clock(before: ClockUpdate | None, after: ClockUpdate) -> ClockUpdate:
    """A move's new clock as the database's UPDATE writes it: the reminder follows a new deadline, and an
    unchanged deadline keeps the reminder as it was (waiting, or sent)."""
    if before is not None and before.deadline == after.deadline:
        return replace(after, reminder_at=before.reminder_at)
    return after


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
        self._beats: dict[str, datetime] = {}
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
            clock = page.clock
            return StoredPage(
                page.record,
                page.row.version,
                page.saved.state,
                at,
                tuple(page.log[at:]),
                clock_state=None if clock is None else clock.state,
                deadline=None if clock is None else clock.deadline,
            )

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
        if checkpoint.clock is not None:
            page.clock = _moved_clock(page.clock, checkpoint.clock)
        return Appended(entry)

    # ----------------------------------------------------------------------------------------------
    # pages between two people (records.PeopleStore), with the database store's refusals

    def next_deadlines(self, limit: int) -> list[Deadline]:
        """Returns the earliest deadlines of the pages in play, earliest first."""
        with self._lock:
            deadlines = [
                Deadline(page_id, page.clock.deadline)
                for page_id, page in self._pages.items()
                if page.clock is not None and page.clock.deadline is not None and page.row.status == "open"
            ]
        return sorted(deadlines, key=lambda due: (due.deadline, due.page_id))[: max(limit, 0)]

    def next_reminders(self, limit: int) -> list[Reminder]:
        """Returns the earliest reminders waiting on pages in play, earliest first."""
        with self._lock:
            reminders = [
                Reminder(page_id, clock.reminder_at, page.row.side_to_act, clock.deadline)
                for page_id, page in self._pages.items()
                if (clock := page.clock) is not None
                and clock.reminder_at is not None
                and clock.deadline is not None
                and page.row.side_to_act is not None
                and page.row.status == "open"
            ]
        return sorted(reminders, key=lambda due: (due.at, due.page_id))[: max(limit, 0)]

    def claim_reminder(self, page_id: str, at: datetime) -> Future[bool]:
        """Takes the page's reminder due `at` (one caller wins: the reminder is cleared)."""

        def claim() -> bool:
            with self._lock:
                page = self._pages.get(page_id)  # gone (expired): nothing to claim, as the UPDATE finds
                clock = None if page is None else page.clock
                if page is None or clock is None or clock.reminder_at != at:
                    return False
                page.clock = replace(clock, reminder_at=None)
                return True

        return _answered(claim)

    def next_offer_ends(self, after: datetime, limit: int) -> list[OfferEnd]:
        """Returns the standing rematch offers running out after `after`, earliest first."""
        with self._lock:
            ends = [
                OfferEnd(page_id, page.rematch.offered_by, page.rematch.expires_at)
                for page_id, page in self._pages.items()
                if page.rematch is not None and page.rematch.page is None and page.rematch.expires_at > after
            ]
        return sorted(ends, key=lambda end: (end.expires_at, end.page_id))[: max(limit, 0)]

    def rematch(self, page_id: str) -> Rematch | None:
        """Returns the page's rematch, or None."""
        with self._lock:
            return self._page(page_id).rematch

    def offer_rematch(
        self, page_id: str, side: str, now: datetime, expires_at: datetime, seat: SealedSeat | None = None
    ) -> Future[Rematch]:
        """Offers a rematch for `side` (records.PeopleStore.offer_rematch)."""

        def offer() -> Rematch:
            with self._lock:
                page = self._page(page_id)
                standing = page.rematch
                if standing is not None:
                    if standing.page is not None:
                        raise RematchRefused(page_id, "accepted")
                    if standing.expires_at > now:
                        if standing.offered_by == side:
                            return standing
                        raise RematchRefused(page_id, "offered")
                page.rematch = Rematch(page_id, side, now, expires_at, offered_seat=seat)
                return page.rematch

        return _answered(offer)

    def withdraw_rematch(self, page_id: str, now: datetime) -> Future[bool]:
        """Withdraws or declines the standing offer; tells whether one stood."""

        def withdraw() -> bool:
            with self._lock:
                page = self._page(page_id)
                standing = page.rematch
                if standing is None or standing.page is not None:
                    return False
                page.rematch = None
                return standing.expires_at > now

        return _answered(withdraw)

    def accept_rematch(
        self,
        page_id: str,
        side: str,
        now: datetime,
        record: PageRecord,
        checkpoint: Checkpoint,
        seats: Sequence[SeatRecord],
        offered_seat: str | None = None,
        accepted_seal: str | None = None,
    ) -> Future[Rematch]:
        """Accepts the other side's offer: the new page made and linked at once, or neither."""

        def accept() -> Rematch:
            with self._lock:
                page = self._page(page_id)
                standing = page.rematch
                if standing is None:
                    raise RematchRefused(page_id, "none")
                refusal = _refused_acceptance(standing, side, now, offered_seat)
                if refusal is not None:
                    raise RematchRefused(page_id, refusal)
                if record.id in self._pages:
                    raise ValueError(f"page {record.id!r} exists")
                self._pages[record.id] = _Page(record, checkpoint, seats)
                page.rematch = replace(standing, page=record.id, accepted_at=now, accepted_seal=accepted_seal)
                return page.rematch

        return _answered(accept)

    def say(self, phrase: Phrase, cap: int) -> Future[Phrase]:
        """Keeps a phrase unless its side has said `cap` on the page already (PhraseCapReached)."""

        def keep() -> Phrase:
            with self._lock:
                page = self._page(phrase.page_id)
                if sum(1 for said in page.phrases if said.side == phrase.side) >= cap:
                    raise PhraseCapReached(f"{phrase.side} has said {cap} phrases on {phrase.page_id!r}")
                page.phrases.append(phrase)
                return phrase

        return _answered(keep)

    def phrases(self, page_id: str) -> list[Phrase]:
        """Returns the page's phrases in the order said."""
        with self._lock:
            return list(self._page(page_id).phrases)

    def beat(self, process_id: str, started_at: datetime, now: datetime) -> Future[None]:
        """Records the process's heartbeat."""
        with self._lock:
            self._beats[process_id] = now
        return _answered(lambda: None)

    def beat_crediting(
        self, process_id: str, started_at: datetime, now: datetime, min_gap: timedelta, credit: ClockCredit
    ) -> Future[Downtime | None]:
        """Beats, crediting a downtime to the running clocks once (records.PeopleStore.beat_crediting)."""

        def write() -> Downtime | None:
            latest = max((at for at in self._beats.values() if at <= now), default=None)
            self._beats[process_id] = now
            if latest is None or now - latest < min_gap:
                return None
            credited = []
            for page_id, page in sorted(self._pages.items()):
                clock = page.clock
                if clock is not None and clock.deadline is not None and page.row.status == "open":
                    moved = credit(clock.state, latest, now)
                    # A reminder waiting moves with its deadline; a sent one stays sent.
                    reminder = None if clock.reminder_at is None else moved.reminder_at
                    page.clock = replace(moved, reminder_at=reminder)
                    credited.append(page_id)
            return Downtime(latest, now, tuple(credited))

        with self._lock:
            return _answered(write)

    def last_beat(self, before: datetime, excluding: str) -> datetime | None:
        """Returns the latest heartbeat of the other processes up to `before`, or None."""
        with self._lock:
            beats = [at for owner, at in self._beats.items() if owner != excluding and at <= before]
        return max(beats, default=None)
