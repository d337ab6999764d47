"""The database's side of pages between two people (issue 19): the earliest deadlines and reminders, the
rematch and its offers' ends, the phrases and the server's heartbeat — each a function on a caller's
session (reads) or on the writer's transaction (writes: `SqlPageStore` queues them as writer jobs).

The rematch and phrase writes lock their row first (`SELECT … FOR UPDATE`, PostgreSQL's row lock; SQLite
has one writer at a time anyway) and decide before they write anything, so a refusal writes nothing and
two processes racing on one page are put in line: the second sees what the first committed.
"""

from __future__ import annotations

from collections.abc import Callable
from datetime import UTC, datetime, timedelta

from sqlalchemy import CursorResult, delete, func, select, text, update
from sqlalchemy.orm import Session

from dotfight.store.models import PageRow, PhraseRow, RematchRow, ServerBeatRow
from dotfight.store.records import (
    ClockCredit,
    Deadline,
    Downtime,
    NoPageToWrite,
    OfferEnd,
    Phrase,
    PhraseCapReached,
    Rematch,
    RematchRefused,
    Reminder,
    SealedSeat,
)

# Heartbeats older than this are deleted as processes beat (processes long gone); a server down for
# longer reads no last beat.
BEATS_KEPT = timedelta(days=30)


def as_utc(moment: datetime) -> datetime:
    """Returns a stored moment as an aware UTC datetime (SQLite hands back naive ones, stored as UTC)."""
    return moment.replace(tzinfo=UTC) if moment.tzinfo is None else moment.astimezone(UTC)


def next_deadlines(session: Session, limit: int) -> list[Deadline]:
    """Returns the earliest deadlines of the pages in play, earliest first (the `deadline` index)."""
    query = (
        select(PageRow.id, PageRow.deadline)
        .where(PageRow.deadline.is_not(None), PageRow.status == "open")
        .order_by(PageRow.deadline, PageRow.id)
        .limit(limit)
    )
    return [Deadline(page_id, as_utc(deadline)) for page_id, deadline in session.execute(query) if deadline]


def next_reminders(session: Session, limit: int) -> list[Reminder]:
    """Returns the earliest reminders waiting on pages in play, earliest first (the `reminder_at` index)."""
    query = (
        select(PageRow.id, PageRow.reminder_at, PageRow.side_to_act, PageRow.deadline)
        .where(PageRow.reminder_at.is_not(None), PageRow.status == "open")
        .order_by(PageRow.reminder_at, PageRow.id)
        .limit(limit)
    )
    return [
        Reminder(page_id, as_utc(at), side, as_utc(deadline))
        for page_id, at, side, deadline in session.execute(query)
        if at and side and deadline
    ]


def claim_reminder(session: Session, page_id: str, at: datetime) -> bool:
    """Clears the page's reminder if it is still the one due `at`; tells whether this write did. On
    PostgreSQL a second process's UPDATE waits for the first's row lock, then finds NULL: one wins."""
    cleared: CursorResult[None] = session.execute(  # type: ignore[assignment]
        update(PageRow).where(PageRow.id == page_id, PageRow.reminder_at == at).values(reminder_at=None)
    )
    return cleared.rowcount == 1


def next_offer_ends(session: Session, after: datetime, limit: int) -> list[OfferEnd]:
    """Returns the standing offers running out after `after`, earliest first (the `expires_at` index)."""
    query = (
        select(RematchRow.page_id, RematchRow.offered_by, RematchRow.expires_at)
        .where(RematchRow.new_page_id.is_(None), RematchRow.expires_at > after)
        .order_by(RematchRow.expires_at, RematchRow.page_id)
        .limit(limit)
    )
    return [OfferEnd(page_id, side, as_utc(at)) for page_id, side, at in session.execute(query)]


def rematch_of(row: RematchRow) -> Rematch:
    """Reads a rematch row."""
    offered_seat = None
    if row.offered_seat is not None and row.offered_seal is not None:
        offered_seat = SealedSeat(row.offered_seat, row.offered_seal)
    return Rematch(
        page_id=row.page_id,
        offered_by=row.offered_by,
        offered_at=as_utc(row.offered_at),
        expires_at=as_utc(row.expires_at),
        page=row.new_page_id,
        accepted_at=None if row.accepted_at is None else as_utc(row.accepted_at),
        offered_seat=offered_seat,
        accepted_seal=row.accepted_seal,
    )


def read_rematch(session: Session, page_id: str) -> Rematch | None:
    """Returns the page's rematch, or None."""
    row = session.get(RematchRow, page_id)
    return None if row is None else rematch_of(row)


def _locked_rematch(session: Session, page_id: str) -> RematchRow | None:
    """The page's rematch row, locked for this transaction (raises NoPageToWrite for an unknown page)."""
    if session.scalar(select(PageRow.id).where(PageRow.id == page_id).with_for_update()) is None:
        raise NoPageToWrite(page_id)
    row: RematchRow | None = session.scalar(
        select(RematchRow).where(RematchRow.page_id == page_id).with_for_update()
    )
    return row


def offer_rematch(
    session: Session, page_id: str, side: str, now: datetime, expires_at: datetime, seat: SealedSeat | None
) -> Rematch:
    """Offers a rematch for `side` with its new seat (PeopleStore.offer_rematch)."""
    row = _locked_rematch(session, page_id)
    if row is None:
        row = RematchRow(page_id=page_id, offered_by=side, offered_at=now, expires_at=expires_at)
        session.add(row)
    elif row.new_page_id is not None:
        raise RematchRefused(page_id, "accepted")
    elif as_utc(row.expires_at) > now:
        if row.offered_by == side:
            return rematch_of(row)
        raise RematchRefused(page_id, "offered")
    else:
        row.offered_by, row.offered_at, row.expires_at = side, now, expires_at
    row.offered_seat = None if seat is None else seat.token_hash
    row.offered_seal = None if seat is None else seat.seal
    return rematch_of(row)


def withdraw_rematch(session: Session, page_id: str, now: datetime) -> bool:
    """Withdraws or declines the standing offer; tells whether one stood (an expired one goes too)."""
    row = _locked_rematch(session, page_id)
    if row is None or row.new_page_id is not None:
        return False
    standing = as_utc(row.expires_at) > now
    session.execute(delete(RematchRow).where(RematchRow.page_id == page_id))
    return standing


def accept_rematch(
    session: Session,
    page_id: str,
    side: str,
    now: datetime,
    new_page_id: str,
    add_new_page: Callable[[], None],
    offered_seat: str | None = None,
    accepted_seal: str | None = None,
) -> Rematch:
    """Accepts the other side's standing offer: decides first (its row locked), refusing before anything
    is written; then adds the new page (`add_new_page`, flushed: the link is a foreign key) and links it,
    with the accepting seat's sealed token."""
    refusal = refused_acceptance(session, page_id, side, now, offered_seat)
    if refusal is not None:
        raise RematchRefused(page_id, refusal)
    add_new_page()
    session.flush()
    row = session.get(RematchRow, page_id)
    assert row is not None
    row.new_page_id, row.accepted_at, row.accepted_seal = new_page_id, now, accepted_seal
    return rematch_of(row)


def refused_acceptance(
    session: Session, page_id: str, side: str, now: datetime, offered_seat: str | None = None
) -> str | None:
    """Why `side` may not accept the page's rematch now (locking its row), or None when it may."""
    row = _locked_rematch(session, page_id)
    if row is None:
        return "none"
    if row.new_page_id is not None:
        return "accepted"
    if row.offered_by == side:
        return "own_offer"
    if as_utc(row.expires_at) <= now:
        return "expired"
    if row.offered_seat != offered_seat:
        return "offered_again"
    return None


def phrase_of(row: PhraseRow) -> Phrase:
    """Reads a phrase row."""
    return Phrase(row.page_id, row.side, row.phrase, as_utc(row.at), row.version)


def say(session: Session, phrase: Phrase, cap: int) -> Phrase:
    """Keeps a phrase unless its side said `cap` on the page already (the page row locked first, so two
    processes cannot both pass the count)."""
    if session.scalar(select(PageRow.id).where(PageRow.id == phrase.page_id).with_for_update()) is None:
        raise NoPageToWrite(phrase.page_id)
    said = session.scalar(
        select(func.count())
        .select_from(PhraseRow)
        .where(PhraseRow.page_id == phrase.page_id, PhraseRow.side == phrase.side)
    )
    if (said or 0) >= cap:
        raise PhraseCapReached(f"{phrase.side} has said {cap} phrases on {phrase.page_id!r}")
    session.add(
        PhraseRow(
            page_id=phrase.page_id,
            side=phrase.side,
            phrase=phrase.phrase,
            at=phrase.at,
            version=phrase.version,
        )
    )
    return phrase


def phrases(session: Session, page_id: str) -> list[Phrase]:
    """Returns the page's phrases in the order said."""
    rows = session.scalars(select(PhraseRow).where(PhraseRow.page_id == page_id).order_by(PhraseRow.id))
    return [phrase_of(row) for row in rows]


def beat(session: Session, process_id: str, started_at: datetime, now: datetime) -> None:
    """Records the process's heartbeat (its row made at its first beat)."""
    moved: CursorResult[None] = session.execute(  # type: ignore[assignment]
        update(ServerBeatRow).where(ServerBeatRow.process_id == process_id).values(beat_at=now)
    )
    if moved.rowcount != 1:
        session.add(ServerBeatRow(process_id=process_id, started_at=started_at, beat_at=now))
    # The beats of processes gone for long are of no use to anyone: each beat sweeps them.
    session.execute(delete(ServerBeatRow).where(ServerBeatRow.beat_at < now - BEATS_KEPT))


def beat_crediting(
    session: Session,
    process_id: str,
    started_at: datetime,
    now: datetime,
    min_gap: timedelta,
    credit: ClockCredit,
) -> Downtime | None:
    """Beats, crediting a downtime to the running clocks first (PeopleStore.beat_crediting). On
    PostgreSQL the beats' table is locked for the transaction (against itself: plain beats still wait
    only for this one), so two processes crediting at once go one after the other, and the second reads
    the first's beat; SQLite has one writer at a time anyway. The running pages' rows are locked in id
    order, the order every batch of the writer locks pages in."""
    if session.get_bind().dialect.name == "postgresql":
        session.execute(text(f"LOCK TABLE {ServerBeatRow.__tablename__} IN SHARE ROW EXCLUSIVE MODE"))
    latest = session.scalar(select(func.max(ServerBeatRow.beat_at)).where(ServerBeatRow.beat_at <= now))
    beat(session, process_id, started_at, now)
    if latest is None or now - as_utc(latest) < min_gap:
        return None
    down_from = as_utc(latest)
    running = session.scalars(
        select(PageRow)
        .where(PageRow.deadline.is_not(None), PageRow.status == "open")
        .order_by(PageRow.id)
        .with_for_update()
    )
    credited = []
    for row in running:
        if row.clock_state is None:
            continue
        moved = credit(row.clock_state, down_from, now)
        row.clock_state, row.deadline = moved.state, moved.deadline
        if row.reminder_at is not None:  # a reminder waiting moves with its deadline; a sent one stays sent
            row.reminder_at = moved.reminder_at
        credited.append(row.id)
    return Downtime(down_from, now, tuple(credited))


def last_beat(session: Session, before: datetime, excluding: str) -> datetime | None:
    """Returns the latest heartbeat of the other processes up to `before`, or None."""
    moment = session.scalar(
        select(func.max(ServerBeatRow.beat_at)).where(
            ServerBeatRow.beat_at <= before, ServerBeatRow.process_id != excluding
        )
    )
    return None if moment is None else as_utc(moment)
