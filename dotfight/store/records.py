"""What a page store keeps, as plain dataclasses, and the `PageStore` protocol the page authority uses.

The page authority (`dotfight.server.pages.authority`) knows pages only through this protocol: it loads
a page, reads its log and seats, and appends one action at the version it checked. Two stores implement
it: `dotfight.store.sql_pages.SqlPageStore` (the database: repository, group-commit writer and the
private state checkpointed in the page row) and `dotfight.store.memory.MemoryPageStore` (dicts, for fast
tests of the authority), in the way boardgame.io's storage adapters sit behind its game master.

This module imports no SQLAlchemy (nor anything of ours): the authority imports it.

`append` is the one write of play and its contract is what keeps the log whole:

- it writes only if the page is still at `expected_version` (else `VersionMoved`, nothing written): two
  processes can never both write one version;
- a `move_id` already in the page's log is answered with that entry (`Appended.duplicate`) and nothing
  is written: a retried move has one answer, wherever it lands;
- it is answered only once the entry is durable (committed), never before.

`append_then` is the same write answered by calling a function (on the writer's thread) instead of
through a `Future`: the hot path of play, where the caller hands the answer on to its event loop itself
and a `Future` per action (a lock and a condition each) would only cost.
"""

from __future__ import annotations

import contextlib
from collections.abc import Callable, Sequence
from concurrent.futures import Future, InvalidStateError
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from functools import partial
from typing import Any, Generic, Protocol, TypeVar

T = TypeVar("T")
T_contra = TypeVar("T_contra", contravariant=True)

# Told a write's outcome once it is durable or refused: its result, or the error (on the writer's thread).
Reply = Callable[[T | BaseException], None]


@dataclass(frozen=True)
class PageRecord:
    """The parts of a page fixed at its creation (`seed`: 32 hex characters, secret until it is over)."""

    id: str
    mode: str
    preset: str
    rules: dict[str, Any]
    seed: str
    seed_sha256: str
    bot: dict[str, Any] | None
    created_at: datetime
    clock: dict[str, Any] | None = None  # the clock as created; None: no time limit


@dataclass(frozen=True)
class ClockUpdate:
    """A page's new clock state (the clock model's own JSON, which the store never reads but for its
    `running`), the running side's deadline (None: nobody's time runs) and when a link page's side to act
    is to be reminded (None: no reminder waits)."""

    state: dict[str, Any]
    deadline: datetime | None
    reminder_at: datetime | None = None


@dataclass(frozen=True)
class Deadline:
    """A page in play whose running side's time ends at `deadline`."""

    page_id: str
    deadline: datetime


@dataclass(frozen=True)
class Reminder:
    """A link page whose side to act (`side`) is to be reminded at `at` (its stored `reminder_at`) of
    its move, which ends at `deadline`."""

    page_id: str
    at: datetime
    side: str
    deadline: datetime


@dataclass(frozen=True)
class OfferEnd:
    """A standing rematch offer of a page, by `offered_by`, that runs out at `expires_at`."""

    page_id: str
    offered_by: str
    expires_at: datetime


# How a running clock is credited the time the server was down (`down_from`, `up_at`): its stored JSON in,
# its new form out (the clock model's; the store never reads the JSON).
ClockCredit = Callable[[dict[str, Any], datetime, datetime], ClockUpdate]


@dataclass(frozen=True)
class Downtime:
    """A stretch no process beat in (`down_from` … `up_at`), credited to the running clocks of `pages`."""

    down_from: datetime
    up_at: datetime
    pages: tuple[str, ...]


@dataclass(frozen=True)
class PageMoved:
    """When a page last moved (its last action's commit, or its creation: `updated_at`), and its stored
    clock state (None: no clock) — what a claim against an absent side is decided on with presence."""

    moved_at: datetime
    clock_state: dict[str, Any] | None


# The engine's private state as a checkpoint carries it: `State.to_json()`'s dict, or its JSON text.
StateJson = dict[str, Any] | str


@dataclass(frozen=True)
class Checkpoint:
    """What the page row says after an action: its version and summary, and every so many versions
    (and at the end) the engine's private state (`State.to_json()`), so a page loads without a replay:
    as its dict, or as the JSON text of it the store keeps (the server's, made with the page's ink
    lines' text kept from its last checkpoint: pages/checkpoint_text.py)."""

    version: int
    phase: str
    side_to_act: str | None
    winner: str | None
    status: str
    state: StateJson | None = None
    clock: ClockUpdate | None = None  # written in the same transaction; None leaves the clock as it was


@dataclass(frozen=True)
class LogEntry:
    """One logged action: the page's version after it, the acting side, the action and its events."""

    version: int
    side: str
    action: dict[str, Any]
    events: list[dict[str, Any]]
    move_id: str | None = None


@dataclass(frozen=True)
class StoredPage:
    """A page as stored: its record, its version, its last checkpointed state (None: replay the whole
    log) and the log entries after that checkpoint up to `version`."""

    record: PageRecord
    version: int
    checkpoint: StateJson | None
    checkpoint_version: int
    entries: tuple[LogEntry, ...]
    clock_state: dict[str, Any] | None = None
    deadline: datetime | None = None


@dataclass(frozen=True)
class SeatRecord:
    """A seat token of a page, kept only as its sha256; `side` None: the local token (both seats)."""

    token_hash: str
    side: str | None
    kind: str  # "seat" | "local"


@dataclass(frozen=True)
class Appended:
    """The answer of `append`: the entry in the log (`duplicate`: logged before under its move_id)."""

    entry: LogEntry
    duplicate: bool = False


class NoSuchPage(LookupError):
    """No page with this id (`expired`: it was deleted by expiry)."""

    def __init__(self, page_id: str, *, expired: bool = False) -> None:
        super().__init__(f"no page {page_id!r}" + (" (expired)" if expired else ""))
        self.page_id = page_id
        self.expired = expired


class JobRefused(Exception):
    """A write refused while writing: nothing of it was written, and the other writes committed with it
    go on (e.g. a conditional UPDATE that matched no row)."""


class NoPageToWrite(NoSuchPage, JobRefused):
    """A write's page does not exist: refused before anything was written (the batch's others go on)."""


class VersionMoved(JobRefused):
    """Another writer moved the page on past `expected_version`; nothing was written."""


@dataclass(frozen=True)
class SealedSeat:
    """A rematch's new seat token kept as a seat token is (its sha256) and sealed under a key only the
    old seat's token gives (`seal`): the store can neither use nor work it out."""

    token_hash: str
    seal: str


@dataclass(frozen=True)
class Rematch:
    """A page's rematch: offered by `offered_by` at `offered_at`, standing until `expires_at`; once
    accepted, `page` is the new page's id."""

    page_id: str
    offered_by: str
    offered_at: datetime
    expires_at: datetime
    page: str | None = None
    accepted_at: datetime | None = None
    # The offering seat's new token, drawn with its offer: its hash and its seal (None on older rows).
    offered_seat: SealedSeat | None = None
    accepted_seal: str | None = None  # the accepting seat's new token, sealed


class RematchRefused(JobRefused):
    """A rematch write refused, nothing written; `reason`: "offered" (the other side's offer stands:
    accept it), "none" (no offer stands), "own_offer" (a side cannot accept its own), "expired",
    "accepted" (the page has its rematch already), "offered_again" (the offer was made again since the
    accepter read it: its seat is another)."""

    def __init__(self, page_id: str, reason: str) -> None:
        super().__init__(f"rematch of {page_id!r} refused: {reason}")
        self.page_id = page_id
        self.reason = reason


@dataclass(frozen=True)
class Phrase:
    """A phrase said on a page by `side` at `at`, when the page was at `version`."""

    page_id: str
    side: str
    phrase: str
    at: datetime
    version: int


class PhraseCapReached(JobRefused):
    """A side has said as many phrases on the page as the cap allows; nothing was written."""


class Answer(Protocol[T_contra]):
    """Where a write's outcome goes: a `concurrent.futures.Future`, or a `Replied` function."""

    def set_running_or_notify_cancel(self) -> bool:
        """Tells whether the write is still wanted (False: its caller gave up before it started)."""
        ...

    def set_result(self, result: T_contra) -> None:
        """Hands over the result of a committed write."""
        ...

    def set_exception(self, exception: BaseException) -> None:
        """Hands over why the write failed or was refused."""
        ...


class Replied(Generic[T]):
    """A write's outcome handed straight to a function, as an `Answer`: no lock, no condition, nobody
    waiting on it (the function passes it on).

    >>> told = []
    >>> answer = Replied(told.append)
    >>> answer.set_running_or_notify_cancel(), answer.set_result(1), answer.set_exception(KeyError("x"))
    (True, None, None)
    >>> told
    [1, KeyError('x')]
    """

    __slots__ = ("reply",)

    def __init__(self, reply: Reply[T]) -> None:
        self.reply = reply

    def set_running_or_notify_cancel(self) -> bool:
        """Always wanted: whoever gave the function decides what a late answer means."""
        return True

    def set_result(self, result: T) -> None:
        """Calls the function with the result."""
        self.reply(result)

    def set_exception(self, exception: BaseException) -> None:
        """Calls the function with the error."""
        self.reply(exception)


def future_of(start: Callable[[Reply[T]], None]) -> Future[T]:
    """Starts a write that answers a function (`start(reply)`) and returns a Future of its outcome.

    >>> future_of(lambda reply: reply(7)).result()
    7
    """
    future: Future[T] = Future()

    def reply(outcome: T | BaseException) -> None:
        with contextlib.suppress(InvalidStateError):  # its caller may have cancelled it meanwhile
            if isinstance(outcome, BaseException):
                future.set_exception(outcome)
            else:
                future.set_result(outcome)

    start(reply)
    return future


class PageStore(Protocol):
    """Where pages live. Reads are plain calls (the authority makes them off its event loop); writes
    answer a future once durable."""

    def create(self, record: PageRecord, checkpoint: Checkpoint, seats: Sequence[SeatRecord]) -> Future[None]:
        """Stores a new page with its seats and first checkpoint."""
        ...

    def version(self, page_id: str) -> int:
        """Returns the page's stored version (raises NoSuchPage)."""
        ...

    def load(self, page_id: str) -> StoredPage:
        """Returns the page as stored (raises NoSuchPage)."""
        ...

    def log(self, page_id: str, after: int, up_to: int | None = None) -> list[LogEntry]:
        """Returns the entries with version above `after` (and at most `up_to`), oldest first."""
        ...

    def logged_move(self, page_id: str, move_id: str) -> LogEntry | None:
        """Returns the entry logged under `move_id`, or None."""
        ...

    def seats(self, page_id: str) -> list[SeatRecord]:
        """Returns the page's seats (raises NoSuchPage)."""
        ...

    def append(
        self, page_id: str, expected_version: int, entry: LogEntry, checkpoint: Checkpoint
    ) -> Future[Appended]:
        """Appends `entry` and moves the page row to `checkpoint`, if the page is still at
        `expected_version` (else the future raises VersionMoved); answered once committed."""
        ...

    def append_then(
        self,
        page_id: str,
        expected_version: int,
        entry: LogEntry,
        checkpoint: Checkpoint,
        reply: Reply[Appended],
    ) -> None:
        """The same as `append`, its outcome handed to `reply` (on the writer's thread, or at once)."""
        ...


class PeopleStore(Protocol):
    """What pages between two people keep besides their log (issue 19): deadlines, the rematch, the
    phrases and the server's heartbeat. Both stores implement it beside `PageStore`."""

    def next_deadlines(self, limit: int) -> list[Deadline]:
        """Returns the earliest deadlines of the pages in play, earliest first (one indexed query)."""
        ...

    def next_reminders(self, limit: int) -> list[Reminder]:
        """Returns the earliest reminders waiting on pages in play, earliest first (one indexed query)."""
        ...

    def claim_reminder(self, page_id: str, at: datetime) -> Future[bool]:
        """Takes the page's reminder due `at` for sending: True for the one caller whose write cleared it
        (an UPDATE … WHERE reminder_at = at), False when it was taken, or moved, already."""
        ...

    def next_offer_ends(self, after: datetime, limit: int) -> list[OfferEnd]:
        """Returns the standing rematch offers running out after `after`, earliest first."""
        ...

    def rematch(self, page_id: str) -> Rematch | None:
        """Returns the page's rematch (its offer, or the new page once accepted), or None."""
        ...

    def offer_rematch(
        self, page_id: str, side: str, now: datetime, expires_at: datetime, seat: SealedSeat | None = None
    ) -> Future[Rematch]:
        """Offers a rematch for `side`, with the offering seat's new token (`seat`); the same side's
        standing offer is answered as it is (idempotent: its seat stays), an expired or withdrawn one
        replaced. Refused (RematchRefused) with "offered" while the other side's offer stands, "accepted"
        once the page has its rematch."""
        ...

    def withdraw_rematch(self, page_id: str, now: datetime) -> Future[bool]:
        """Withdraws (or declines) the standing offer; tells whether there was one. An accepted rematch
        stays."""
        ...

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
        """Accepts the other side's standing offer for `side`: the new page (`record`, its first
        checkpoint and seats) is created and linked in one transaction, with the accepting seat's sealed
        token, or nothing is (RematchRefused: "none", "own_offer", "expired", "accepted", and
        "offered_again" when the offer's seat is no longer `offered_seat`, the hash the seats were made
        with). A page never gets two rematches."""
        ...

    def say(self, phrase: Phrase, cap: int) -> Future[Phrase]:
        """Keeps a phrase unless its side has said `cap` on the page already (PhraseCapReached)."""
        ...

    def phrases(self, page_id: str) -> list[Phrase]:
        """Returns every phrase said on the page, in the order said."""
        ...

    def beat(self, process_id: str, started_at: datetime, now: datetime) -> Future[None]:
        """Records that the process started at `started_at` is up at `now`."""
        ...

    def last_beat(self, before: datetime, excluding: str) -> datetime | None:
        """Returns the latest heartbeat of any other process up to `before` (e.g. this process's start:
        the server was down from then), or None when none ever beat."""
        ...

    def beat_crediting(
        self, process_id: str, started_at: datetime, now: datetime, min_gap: timedelta, credit: ClockCredit
    ) -> Future[Downtime | None]:
        """Beats, and when no process had beaten for `min_gap` (the server, or its database, was down)
        credits that stretch to every running clock with `credit`, in the same transaction: processes
        doing this at once are put in line, so the second sees the first's beat and credits nothing (one
        downtime is credited once). Answers the downtime credited, or None."""
        ...


class AppendsAnsweredByFuture:
    """Gives a store the protocol's `append` (a Future) from its `append_then` (a reply function)."""

    def append(
        self, page_id: str, expected_version: int, entry: LogEntry, checkpoint: Checkpoint
    ) -> Future[Appended]:
        """Appends `entry` at `expected_version` (PageStore.append); the Future answers once committed."""
        return future_of(partial(self.append_then, page_id, expected_version, entry, checkpoint))

    def append_then(
        self,
        page_id: str,
        expected_version: int,
        entry: LogEntry,
        checkpoint: Checkpoint,
        reply: Reply[Appended],
    ) -> None:
        """The store's own write, its outcome handed to `reply`."""
        raise NotImplementedError


class StoreUnavailable(Exception):
    """The store cannot be reached or written now (nothing was written; the caller may try again)."""


def iso_utc(moment: datetime) -> str:
    """Writes a moment as ISO 8601 in UTC (SQLite hands back naive datetimes, stored as UTC)."""
    if moment.tzinfo is None:
        moment = moment.replace(tzinfo=UTC)
    return moment.astimezone(UTC).isoformat()


def iso_utc_z(moment: datetime) -> str:
    """Writes a moment as ISO 8601 in UTC with `Z` (the page summaries' deadline).

    >>> iso_utc_z(datetime(2026, 12, 1, 22, 30, 5, tzinfo=UTC))
    '2026-12-01T22:30:05Z'
    """
    return iso_utc(moment).replace("+00:00", "Z")
