"""The database's `PageStore` (records.py): the repository's queries, the group-commit writer and the
private state checkpointed in `page_states`, behind the protocol the page authority uses.

Reads open a session of their own (the authority calls them on its reader and engine threads). Writes
are jobs of the store's own single writer (writer.py, built with the store and closed by it), committed
with the writes waiting beside them; their futures are answered after the commit. A hook given when the
store is built makes every action's NOTIFY (PostgreSQL), sent by the action's own statement. The
bot seat's leases (leases.py) are written by the same writer, through the store's lease methods.
Whatever the database says is translated here into the protocol's terms: a version taken by another
process (the conditional UPDATE matching no row, or the log's unique constraint) is `VersionMoved`; a
database that cannot be reached or written is `StoreUnavailable` — so the authority never sees
SQLAlchemy.

An append is the writer's hot path, written in SQLAlchemy Core (appends.py): one conditional UPDATE
that also checks the move_id is not logged yet (the database decides, in the same statement, from the
log's unique (page, move_id) index — nothing is read first and no move id needs remembering), then the
INSERT (on PostgreSQL the two, and the NOTIFY, are one statement, a data-modifying CTE: alone in its
batch and with no checkpoint beside it, its own transaction in autocommit, one round trip an action;
else sent with the transaction's BEGIN, one round trip before the commit's); the
move_id is read apart only when the UPDATE matched nothing. The appends waiting side by side in a group
commit are written with one executemany of each statement; when their UPDATE matches fewer rows than
it has actions, the writer rolls back and writes them one by one, finding the loser.
"""

from __future__ import annotations

import contextlib
from collections.abc import Callable, Iterator, Sequence
from concurrent.futures import Future
from datetime import datetime, timedelta
from typing import Any, TypeVar

from sqlalchemy import Engine
from sqlalchemy.exc import IntegrityError
from sqlalchemy.orm import Session

from dotfight.store import appends, expiry, leases, people, repository
from dotfight.store.database import (
    DEFAULT_BUSY_TIMEOUT_S,
    DatabaseFile,
    Transaction,
    is_database_trouble,
    make_session_factory,
    store_unavailable,
)
from dotfight.store.models import ActionRow, PageRow, PageStateRow, SeatRow, utc_now
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
    Rematch,
    Reminder,
    Replied,
    Reply,
    SealedSeat,
    SeatRecord,
    StoredPage,
    VersionMoved,
    future_of,
)
from dotfight.store.views import DatabaseViews
from dotfight.store.writer import AfterCommit, BatchWriter, Job

T = TypeVar("T")

# The NOTIFY of an action (page, version) that other processes hear at its commit: (channel, payload),
# sent by the action's own statement (PostgreSQL).
ActionNotify = Callable[[str, int], appends.Notify]


def record_of(row: PageRow) -> PageRecord:
    """Reads the fixed parts of a page row."""
    return PageRecord(
        id=row.id,
        mode=row.mode,
        preset=row.preset,
        rules=row.rules,
        seed=row.seed,
        seed_sha256=row.seed_sha256,
        bot=row.bot,
        created_at=row.created_at,
        clock=row.clock,
    )


def entry_of(row: ActionRow) -> LogEntry:
    """Reads one log row."""
    return LogEntry(
        version=row.version, side=row.side, action=row.action, events=row.events, move_id=row.move_id
    )


def clock_columns(clock: ClockUpdate | None) -> dict[str, Any]:
    """The page row's clock columns a checkpoint sets (none when it leaves the clock as it was)."""
    if clock is None:
        return {}
    return {"clock_state": clock.state, "deadline": clock.deadline, "reminder_at": clock.reminder_at}


def summary_of(checkpoint: Checkpoint) -> dict[str, Any]:
    """The page row's columns a checkpoint sets (its private state goes to `page_states`)."""
    return {
        "version": checkpoint.version,
        "phase": checkpoint.phase,
        "side_to_act": checkpoint.side_to_act,
        "winner": checkpoint.winner,
        "status": checkpoint.status,
    }


@contextlib.contextmanager
def _answering() -> Iterator[None]:
    """Translates a database that cannot be reached or written now into StoreUnavailable."""
    try:
        yield
    except Exception as error:
        if is_database_trouble(error):
            raise store_unavailable(error) from error
        raise


def _translated(error: BaseException) -> BaseException:
    if isinstance(error, IntegrityError):  # another process wrote this version (or move_id) first
        return VersionMoved(str(error.orig))
    if is_database_trouble(error):
        return store_unavailable(error)
    return error


def _translating(reply: Reply[T]) -> Reply[T]:
    """The reply given the database's errors in the protocol's terms."""

    def translated(outcome: T | BaseException) -> None:
        reply(_translated(outcome) if isinstance(outcome, BaseException) else outcome)

    return translated


class SqlPageStore(AppendsAnsweredByFuture):
    """Pages in the database (SQLite or PostgreSQL)."""

    def __init__(
        self,
        database: Engine,
        *,
        busy_timeout_s: float = DEFAULT_BUSY_TIMEOUT_S,
        min_free_bytes: int = 0,
        view_threads: int = 1,
        notify: ActionNotify | None = None,
    ) -> None:
        """Opens the store on a database: its writer (which writes nothing while an SQLite file has
        fewer than `min_free_bytes` free beside it, or is gone) and its views (on `view_threads`
        threads); `notify` makes every action's NOTIFY (PostgreSQL), sent by its own statement."""
        if notify is not None and database.dialect.name != "postgresql":
            raise ValueError(f"NOTIFY needs PostgreSQL, not {database.dialect.name}")
        self._sessions = make_session_factory(database)
        file = DatabaseFile.of(database, min_free_bytes)
        self._writer = BatchWriter(database, busy_timeout_s, check=file.problem if file is not None else None)
        self._submit = self._writer.submit
        self._notify = notify
        self.views = DatabaseViews(database, self._sessions, view_threads, busy_timeout_s, file)

    @property
    def writer_backend_pid(self) -> int | None:
        """The PostgreSQL backend of the writer's connection, which sends every action's NOTIFY (None on
        SQLite, or before the first write): its notices are this process's own."""
        return self._writer.backend_pid

    def close(self) -> None:
        """Finishes the writes already queued and the views' reads, then stops their threads."""
        self._writer.close()
        self.views.close()

    def _missing(self, session: Session, page_id: str) -> NoSuchPage:
        return NoSuchPage(page_id, expired=expiry.is_expired(session, page_id))

    def _write(self, job: Job[T], order: str) -> Future[T]:
        """Queues a writer job; its future's database errors come back in the protocol's terms."""
        return future_of(lambda reply: self._submit(job, Replied(_translating(reply)), order))

    def create(self, record: PageRecord, checkpoint: Checkpoint, seats: Sequence[SeatRecord]) -> Future[None]:
        """Stores a new page with its seats (committed by the writer)."""
        add = self._adding(record, checkpoint, seats)

        def insert(transaction: Transaction) -> tuple[None, None]:
            add(transaction.session)
            return None, None

        return self._write(insert, record.id)

    @staticmethod
    def _adding(
        record: PageRecord, checkpoint: Checkpoint, seats: Sequence[SeatRecord]
    ) -> Callable[[Session], None]:
        """The adding of a new page on a writer's session (a page of its own, or a rematch)."""
        assert checkpoint.state is not None, "a new page's first checkpoint carries its state"
        first_state = appends.state_text(checkpoint.state)

        def add(session: Session) -> None:
            now = utc_now()
            row = PageRow(
                id=record.id,
                rules=record.rules,
                preset=record.preset,
                seed=record.seed,
                seed_sha256=record.seed_sha256,
                mode=record.mode,
                bot=record.bot,
                created_at=record.created_at,
                updated_at=now,
                setup_moved_at=expiry.setup_moved_at(checkpoint.status, checkpoint.phase, now),
                clock=record.clock,
                **clock_columns(checkpoint.clock),
                **summary_of(checkpoint),
            )
            seat_rows = [
                SeatRow(page_id=record.id, side=seat.side, kind=seat.kind, token_hash=seat.token_hash)
                for seat in seats
            ]
            state = PageStateRow(page_id=record.id, version=checkpoint.version, state=first_state)
            repository.add_page(session, row, seat_rows, state)

        return add

    def version(self, page_id: str) -> int:
        """Returns the stored version alone (not the row's large private state)."""
        with _answering(), self._sessions() as session:
            version = repository.page_version(session, page_id)
            if version is None:
                raise self._missing(session, page_id)
            return version

    def load(self, page_id: str) -> StoredPage:
        """Returns the page row's record, version and checkpoint with the log entries after it."""
        with _answering(), self._sessions() as session:
            row = repository.get_page(session, page_id)
            if row is None:
                raise self._missing(session, page_id)
            kept = session.get(PageStateRow, page_id)
            checkpoint, saved = None, 0
            if kept is not None and kept.version <= row.version:
                checkpoint, saved = appends.state_of(kept.state), kept.version
            # Bounded by the row's version: an action committed since the row was read is left out.
            entries = repository.actions_after(session, row.id, saved, up_to=row.version)
            return StoredPage(
                record_of(row),
                row.version,
                checkpoint,
                saved,
                tuple(map(entry_of, entries)),
                clock_state=row.clock_state,
                deadline=None if row.deadline is None else people.as_utc(row.deadline),
            )

    def log(self, page_id: str, after: int, up_to: int | None = None) -> list[LogEntry]:
        """Returns the log entries after `after` (at most `up_to`), oldest first."""
        with _answering(), self._sessions() as session:
            return [entry_of(row) for row in repository.actions_after(session, page_id, after, up_to)]

    def logged_move(self, page_id: str, move_id: str) -> LogEntry | None:
        """Returns the entry logged under `move_id`, or None."""
        with _answering(), self._sessions() as session:
            row = repository.action_by_move_id(session, page_id, move_id)
            return None if row is None else entry_of(row)

    def seats(self, page_id: str) -> list[SeatRecord]:
        """Returns the page's seats (raises NoSuchPage for an unknown page)."""
        with _answering(), self._sessions() as session:
            if repository.page_version(session, page_id) is None:
                raise self._missing(session, page_id)
            rows = repository.page_seats(session, page_id)
            return [SeatRecord(token_hash=row.token_hash, side=row.side, kind=row.kind) for row in rows]

    # ----------------------------------------------------------------------------------------------
    # the bot seat's leases (leases.py), written by the same writer

    def take_lease(self, page_id: str, owner: str, length: timedelta) -> Future[bool]:
        """Takes (or renews) a bot page's lease for `owner` unless another holds it; tells whether taken."""

        def take(transaction: Transaction) -> tuple[bool, None]:
            return leases.take(transaction.session, page_id, owner, utc_now(), length), None

        return self._write(take, page_id)

    def renew_leases(self, page_ids: set[str], owner: str, length: timedelta) -> Future[set[str]]:
        """Renews the leases `owner` still holds among `page_ids`; answers the ids it still holds."""

        def renew(transaction: Transaction) -> tuple[set[str], None]:
            return leases.renew(transaction.session, page_ids, owner, utc_now(), length), None

        return self._write(renew, "")

    def release_lease(self, page_id: str, owner: str) -> Future[None]:
        """Gives up `owner`'s lease on a bot page (if it holds it)."""

        def release(transaction: Transaction) -> tuple[None, None]:
            leases.release(transaction.session, page_id, owner)
            return None, None

        return self._write(release, page_id)

    # ----------------------------------------------------------------------------------------------
    # pages between two people (records.PeopleStore): deadlines, rematches, phrases, heartbeats

    def next_deadlines(self, limit: int) -> list[Deadline]:
        """Returns the earliest deadlines of the pages in play, earliest first."""
        with _answering(), self._sessions() as session:
            return people.next_deadlines(session, limit)

    def next_reminders(self, limit: int) -> list[Reminder]:
        """Returns the earliest reminders waiting on pages in play, earliest first."""
        with _answering(), self._sessions() as session:
            return people.next_reminders(session, limit)

    def claim_reminder(self, page_id: str, at: datetime) -> Future[bool]:
        """Takes the page's reminder due `at` for sending (one caller wins)."""

        def claim(transaction: Transaction) -> tuple[bool, None]:
            return people.claim_reminder(transaction.session, page_id, at), None

        return self._write(claim, page_id)

    def next_offer_ends(self, after: datetime, limit: int) -> list[OfferEnd]:
        """Returns the standing rematch offers running out after `after`, earliest first."""
        with _answering(), self._sessions() as session:
            return people.next_offer_ends(session, after, limit)

    def rematch(self, page_id: str) -> Rematch | None:
        """Returns the page's rematch, or None."""
        with _answering(), self._sessions() as session:
            return people.read_rematch(session, page_id)

    def offer_rematch(
        self, page_id: str, side: str, now: datetime, expires_at: datetime, seat: SealedSeat | None = None
    ) -> Future[Rematch]:
        """Offers a rematch for `side` (records.PeopleStore.offer_rematch)."""

        def offer(transaction: Transaction) -> tuple[Rematch, None]:
            return people.offer_rematch(transaction.session, page_id, side, now, expires_at, seat), None

        return self._write(offer, page_id)

    def withdraw_rematch(self, page_id: str, now: datetime) -> Future[bool]:
        """Withdraws or declines the standing offer; tells whether one stood."""

        def withdraw(transaction: Transaction) -> tuple[bool, None]:
            return people.withdraw_rematch(transaction.session, page_id, now), None

        return self._write(withdraw, page_id)

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
        """Accepts the other side's offer: the new page created and linked in one transaction."""
        add = self._adding(record, checkpoint, seats)

        def accept(transaction: Transaction) -> tuple[Rematch, None]:
            session = transaction.session
            linked = people.accept_rematch(
                session, page_id, side, now, record.id, lambda: add(session), offered_seat, accepted_seal
            )
            return linked, None

        return self._write(accept, page_id)

    def say(self, phrase: Phrase, cap: int) -> Future[Phrase]:
        """Keeps a phrase unless its side has said `cap` on the page already (PhraseCapReached)."""

        def keep(transaction: Transaction) -> tuple[Phrase, None]:
            return people.say(transaction.session, phrase, cap), None

        return self._write(keep, phrase.page_id)

    def phrases(self, page_id: str) -> list[Phrase]:
        """Returns the page's phrases in the order said."""
        with _answering(), self._sessions() as session:
            return people.phrases(session, page_id)

    def beat(self, process_id: str, started_at: datetime, now: datetime) -> Future[None]:
        """Records the process's heartbeat."""

        def write(transaction: Transaction) -> tuple[None, None]:
            people.beat(transaction.session, process_id, started_at, now)
            return None, None

        return self._write(write, "")

    def beat_crediting(
        self, process_id: str, started_at: datetime, now: datetime, min_gap: timedelta, credit: ClockCredit
    ) -> Future[Downtime | None]:
        """Beats, crediting a downtime to the running clocks once (records.PeopleStore.beat_crediting)."""

        def write(transaction: Transaction) -> tuple[Downtime | None, None]:
            return people.beat_crediting(
                transaction.session, process_id, started_at, now, min_gap, credit
            ), None

        return self._write(write, "")

    def last_beat(self, before: datetime, excluding: str) -> datetime | None:
        """Returns the latest heartbeat of the other processes up to `before`, or None."""
        with _answering(), self._sessions() as session:
            return people.last_beat(session, before, excluding)

    def append_then(
        self,
        page_id: str,
        expected_version: int,
        entry: LogEntry,
        checkpoint: Checkpoint,
        reply: Reply[Appended],
    ) -> None:
        """Queues the write of one action, its outcome handed to `reply` on the writer's thread once
        committed (or refused): no Future on the way, so an action costs no lock or condition here."""
        job = _Append(self, page_id, expected_version, entry, checkpoint)
        self._submit(job, Replied(_translating(reply)), page_id, _appended_together, job.alone())


class _Append:
    """One action's write, as a writer job: alone (called with the writer's session), or with the other
    actions of its group commit (`_appended_together`: one executemany per statement)."""

    __slots__ = ("checkpoint", "entry", "expected_version", "page_id", "store")

    def __init__(
        self,
        store: SqlPageStore,
        page_id: str,
        expected_version: int,
        entry: LogEntry,
        checkpoint: Checkpoint,
    ) -> None:
        self.store = store
        self.page_id = page_id
        self.expected_version = expected_version
        self.entry = entry
        self.checkpoint = checkpoint

    def logged_entry(self) -> dict[str, Any]:
        """The log row's columns of the entry (the page and the time are added by the statement's caller)."""
        entry = self.entry
        return {
            "version": entry.version,
            "side": entry.side,
            "action": entry.action,
            "events": entry.events,
            "move_id": entry.move_id,
        }

    def __call__(self, transaction: Transaction) -> tuple[Appended, None]:
        page_id, entry = self.page_id, self.entry
        summary = summary_of(self.checkpoint)
        move = (page_id, self.expected_version, summary, self.logged_entry())
        if not appends.move_on(transaction.connection, move, utc_now(), self.notify()):
            # Asked inside the write's transaction: the first answer to a move_id is the only one.
            if entry.move_id is not None:
                logged = repository.action_by_move_id(transaction.session, page_id, entry.move_id)
                if logged is not None:
                    return Appended(entry_of(logged), duplicate=True), None
            raise VersionMoved(page_id)  # nothing was written
        self.after_move_on(transaction)
        return Appended(entry), None

    def alone(self) -> bool:
        """Tells whether the write is its one statement (the writer's `alone`): the page row moved on and
        the entry logged (and NOTIFYed) together or not at all, with no checkpoint or clock beside them."""
        return self.checkpoint.state is None and self.checkpoint.clock is None

    def notify(self) -> appends.Notify | None:
        """The action's NOTIFY, made before its write (its statement sends it only if it moves the row)."""
        notify = self.store._notify
        return None if notify is None else notify(self.page_id, self.entry.version)

    def after_move_on(self, transaction: Transaction) -> None:
        """The rest of the write once the page row moved on: the checkpoint when it carries the private
        state, and the clock when the move changed it."""
        checkpoint = self.checkpoint
        if checkpoint.state is not None:
            appends.save_state(transaction.connection, self.page_id, checkpoint.version, checkpoint.state)
        if checkpoint.clock is not None:  # in the move's own transaction, never a write of its own
            appends.set_clock(transaction.connection, self.page_id, checkpoint.clock)


def _appended_together(
    transaction: Transaction, jobs: Sequence[Job[Any]]
) -> list[tuple[Any, AfterCommit]] | None:
    """Writes the actions of a group commit with one UPDATE and one INSERT executed for all (the
    writer's `together`); None when a page row did not match (the writer then rolls back and writes
    them one by one, which finds the page moved on or the move_id logged)."""
    appending = [job for job in jobs if isinstance(job, _Append)]
    assert len(appending) == len(jobs), "only appends are written together"
    moves = [
        (job.page_id, job.expected_version, summary_of(job.checkpoint), job.logged_entry())
        for job in appending
    ]
    notify = appending[0].store._notify  # one store's writer: all notify, or none
    notifies = None if notify is None else [notify(job.page_id, job.entry.version) for job in appending]
    if not appends.move_on_many(transaction.connection, moves, utc_now(), notifies):
        return None
    for job in appending:
        job.after_move_on(transaction)
    return [(Appended(job.entry), None) for job in appending]
