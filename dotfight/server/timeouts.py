"""The time-out writer: the server ends a page whose running side's time is up, by itself (issue 19); and
with the same alarm, a link page's reminder and the end of a rematch offer.

One `people.alarm.Alarm` per process (one heap, one task; nothing per waiting page) holds when each page's
`time_out` becomes due (`clock.time_out_at`: the deadline plus the lag cap, so a move that is still in
time is never beaten by it). It is set:

- on each page this process creates and each commit it makes (an authority listener), and for a move
  refused as late;
- from `store.next_deadlines` at start and every `time_out_poll_s` (one indexed query per process, not
  per page: this is what ends a page whose watching process died).

When a page comes due, its page is read as stored and, if its time is still up (a move, or a downtime
credit, may have moved the deadline: the alarm is then set again), `time_out` is written for the
running side through the authority at the page's stored version with the move_id `time_out@<version>`:
two processes noticing at once write one entry (the store's version check, then the move_id's dedupe
answers the second with the first's entry), never two. Nothing is written while the heartbeat is not
trusted (a deadline that passed during an outage is credited first).

On link pages the side to act is also reminded by Web Push when a fifth of its time per move is left
(`clock.reminder_at`). The reminder is stored with the page (`reminder_at`, written with the deadline in
the move's transaction), so every process knows it: from its own commits and from `store.next_reminders`,
read with the deadlines. When it comes, the process **claims** it (`store.claim_reminder`: an UPDATE of
the stored moment that only one process wins) and only then pushes, unless the side to act has the page
open on any process: once per move, across restarts and processes.

The same poll reads the earliest ends of the standing rematch offers (`store.next_offer_ends`); when one
comes, `offer_ended` tells this process's sockets of the page (every process reads them, so each tells
its own: nobody is told twice).
"""

from __future__ import annotations

import asyncio
import logging
from collections import deque
from collections.abc import Awaitable, Callable, Sequence
from datetime import datetime
from typing import TypeVar

from dotfight.server.cache import LruCache
from dotfight.server.page_view import LoadedPage
from dotfight.server.pages.authority import Applied, Arrival, PageAuthority, Seat, moment_of, time_out_move_id
from dotfight.server.pages.errors import EngineRefusal, NotFound, PageExpired, StaleVersion
from dotfight.server.people.alarm import Alarm, AlarmClock
from dotfight.server.people.clock import ClockState, reminder_at, time_out_at
from dotfight.server.people.lag import ALLOWANCE_CAP_S
from dotfight.store.records import OfferEnd, PeopleStore, Reminder

__all__ = ["FIRST_BATCH", "TimeOuts"]

logger = logging.getLogger(__name__)

T = TypeVar("T")

# The earliest deadlines read per poll; read again, twice as many, while all of them are due before the
# next poll (a burst of pages ending at once), up to MAX_BATCH. The same for reminders and offers' ends.
FIRST_BATCH = 64
MAX_BATCH = 8192
# The time-outs' delays kept (the latest).
DELAYS_KEPT = 1024
# Link pages whose last claimed (or tried) reminder this process remembers, so that a later action of the
# same move does not arm it again (if it did, the store's claim would refuse it: it is only a write saved).
REMINDED_KEPT = 100_000
# The reminders and the offers' ends are read at start and every this many polls (30 s by default): both
# come long after they are written (a fifth of a link page's hour or more after the move; an offer's 10
# minutes or more), so a read up to 30 s after the write still sets each alarm at its own moment (and a
# process's own commits set their reminders at once).
SLOW_POLL_EVERY = 15
# Keys in the one alarm beside the pages' time-outs (a page's id alone).
_REMINDER = "remind:"
_OFFER_END = "offer:"

# Tells a seat of a link page (page, side, seconds left) that a fifth of its move's time is left, unless it
# has the page open.
Remind = Callable[[LoadedPage, str, float], Awaitable[None]]
# Tells this process's sockets of a page that its standing rematch offer ran out (if it still stands so).
OfferEnded = Callable[[OfferEnd], Awaitable[None]]


def reminder_of(page_id: str, clock: ClockState) -> Reminder | None:
    """The page's reminder as the store keeps it (the same moment to the microsecond), or None."""
    at, deadline = moment_of(reminder_at(clock)), moment_of(clock.deadline)
    if at is None or deadline is None or clock.running is None:
        return None
    return Reminder(page_id, at, clock.running, deadline)


class TimeOuts:
    """Writes `time_out` for every page whose running side's time is up, once, on whichever process
    notices first; reminds link pages' side to act once; tells the sockets when a rematch offer ends."""

    def __init__(
        self,
        authority: PageAuthority,
        store: PeopleStore,
        poll_s: float,
        *,
        trusted: Callable[[], bool] = lambda: True,
        remind: Remind | None = None,
        offer_ended: OfferEnded | None = None,
        clock: AlarmClock | None = None,
    ) -> None:
        self._authority = authority
        self._store = store
        self._poll_s = poll_s
        self._trusted = trusted
        self._remind = remind
        self._offer_ended = offer_ended
        # The alarm's clock reads the same time as the authority's (tests hand in one ManualClock to both).
        self._alarm = Alarm(self._due, clock, max_sleep_s=poll_s)
        # The reminders and offers' ends the alarm holds, by page (one each: a later one replaces it).
        self._reminders: dict[str, Reminder] = {}
        self._offer_ends: dict[str, OfferEnd] = {}
        # Page id -> the moment of the reminder last claimed or tried here.
        self._reminded: LruCache[str, datetime] = LruCache(REMINDED_KEPT)
        self._poller: asyncio.Task[None] | None = None
        # Seconds from each of the latest time-outs' deadline to its commit (for tests and a look).
        self.delays: deque[float] = deque(maxlen=DELAYS_KEPT)

    # -- wiring

    async def start(self) -> None:
        """Arms the alarm from the store's earliest deadlines, then polls them in the background."""
        self._alarm.start()
        await self.poll()
        self._poller = asyncio.get_running_loop().create_task(self._poll_forever(), name="dotfight-timeouts")

    def stop(self) -> None:
        """Stops the alarm and the poll."""
        self._alarm.stop()
        if self._poller is not None:
            self._poller.cancel()
            self._poller = None

    def waiting(self) -> int:
        """Returns how many alarms are set (time-outs, reminders and offers' ends)."""
        return len(self._alarm)

    def committed(self, page: LoadedPage, applied: Applied) -> None:
        """The authority's listener: sets the page's alarm from its new clock (under the page's lock)."""
        clock = page.clock
        if clock is None:
            return
        self._set(page.meta.id, clock)

    def created(self, page: LoadedPage) -> None:
        """The authority's hook for a page just created: its first side to act's time runs already."""
        if page.clock is not None:
            self._set(page.meta.id, page.clock)

    def late_move(self, page_id: str) -> None:
        """A move was refused as late: the page's time-out is due within the lag cap; look at it then."""
        self._alarm.set(page_id, self._authority.now() + ALLOWANCE_CAP_S)

    def _set(self, page_id: str, clock: ClockState) -> None:
        """Sets the page's time-out, and a link page's reminder, from its clock."""
        at = time_out_at(clock)
        if at is None:
            self._alarm.clear(page_id)
            self._forget_reminder(page_id)
            return
        self._alarm.set(page_id, at)
        reminder = reminder_of(page_id, clock) if self._remind is not None else None
        if reminder is None:
            self._forget_reminder(page_id)
        else:
            self._set_reminder(reminder)

    def _set_reminder(self, reminder: Reminder) -> None:
        page_id = reminder.page_id
        if self._reminded.get(page_id) == reminder.at or self._reminders.get(page_id) == reminder:
            return
        self._reminders[page_id] = reminder
        self._alarm.set(_REMINDER + page_id, reminder.at.timestamp())

    def _forget_reminder(self, page_id: str) -> None:
        if self._reminders.pop(page_id, None) is not None:
            self._alarm.clear(_REMINDER + page_id)

    # -- the poll

    async def _poll_forever(self) -> None:
        polls = 0
        while True:
            await asyncio.sleep(self._poll_s)
            polls += 1
            try:
                await self.poll(everything=polls % SLOW_POLL_EVERY == 0)
            except Exception as error:  # the database is down: the next poll tries again
                logger.info("reading the earliest deadlines failed: %s", error)

    async def poll(self, *, everything: bool = True) -> None:
        """Sets the alarm of each of the earliest deadlines it does not know yet (or knows later), and
        with `everything` of the earliest reminders and offers' ends."""
        deadlines = await self._earliest(
            self._store.next_deadlines, lambda due: due.deadline.timestamp() + ALLOWANCE_CAP_S, self._poll_s
        )
        for due in deadlines:
            at = due.deadline.timestamp() + ALLOWANCE_CAP_S
            known = self._alarm.when(due.page_id)
            if known is None or at < known:
                self._alarm.set(due.page_id, at)
        if not everything:
            return
        until_next_read = self._poll_s * SLOW_POLL_EVERY
        if self._remind is not None:
            reminders = await self._earliest(
                self._store.next_reminders, lambda due: due.at.timestamp(), until_next_read
            )
            for reminder in reminders:
                self._set_reminder(reminder)
        if self._offer_ended is not None:
            now = moment_of(self._authority.now())
            assert now is not None
            ends = await self._earliest(
                lambda limit: self._store.next_offer_ends(now, limit),
                lambda end: end.expires_at.timestamp(),
                until_next_read,
            )
            for end in ends:
                if self._offer_ends.get(end.page_id) != end:
                    self._offer_ends[end.page_id] = end
                    self._alarm.set(_OFFER_END + end.page_id, end.expires_at.timestamp())

    async def _earliest(
        self, read: Callable[[int], list[T]], when: Callable[[T], float], ahead_s: float
    ) -> Sequence[T]:
        """Reads the earliest of a kind (`read(limit)`, earliest first): again, twice as many, while all
        of them fall before its next read (`ahead_s` on)."""
        horizon = self._authority.now() + ahead_s + ALLOWANCE_CAP_S
        batch = FIRST_BATCH
        while True:
            found = await asyncio.to_thread(read, batch)
            if len(found) < batch or batch >= MAX_BATCH or when(found[-1]) > horizon:
                return found
            batch *= 2

    # -- what the alarm calls

    async def _due(self, key: str) -> None:
        if key.startswith(_REMINDER):
            await self._remind_now(key.removeprefix(_REMINDER))
        elif key.startswith(_OFFER_END):
            await self._end_offer(key.removeprefix(_OFFER_END))
        else:
            await self.time_out(key)

    async def time_out(self, page_id: str) -> Applied | None:
        """Writes the page's `time_out` if its running side's time is up now; else sets its alarm again
        (or forgets it: the page ended, or has no time running). Answers what was written (a duplicate:
        another process wrote it first)."""
        if not self._trusted():
            self._alarm.set(page_id, self._authority.now() + self._poll_s)
            return None
        try:
            page = await self._authority.page(page_id)
            clock = page.clock
            at = None if clock is None or page.over else time_out_at(clock)
            if clock is None or clock.running is None or at is None:
                self._forget_reminder(page_id)
                return None
            now = self._authority.now()
            if now < at:
                self._set(page_id, clock)
                return None
            version = page.state.version
            applied = await self._authority.act(
                page_id,
                Seat(clock.running),
                {"type": "time_out"},
                version,
                time_out_move_id(version),
                Arrival(now, 0.0),
            )
        except StaleVersion:  # a move was committed meanwhile (elsewhere): look again at once
            self._alarm.set(page_id, self._authority.now())
            return None
        except (NotFound, PageExpired, EngineRefusal) as refusal:  # gone, or over already
            logger.info("page %s: no time-out written (%s)", page_id, refusal.message)
            return None
        except Exception as error:  # the database is down: try again a poll later
            logger.warning("page %s: the time-out could not be written now (%s)", page_id, error)
            self._alarm.set(page_id, self._authority.now() + self._poll_s)
            return None
        deadline = clock.deadline
        if not applied.duplicate and deadline is not None:
            self.delays.append(self._authority.now() - deadline)
            logger.info(
                "page %s: %s's time ran out (written %.2f s after the deadline)",
                page_id,
                clock.running,
                self._authority.now() - deadline,
            )
        return applied

    async def _remind_now(self, page_id: str) -> None:
        """Claims the page's reminder and, if this process won it, pushes it (unless the side to act has
        the page open: `remind` looks on every process)."""
        reminder = self._reminders.pop(page_id, None)
        if reminder is None or self._remind is None:
            return
        now = self._authority.now()
        if now < reminder.at.timestamp():  # the alarm woke early (a wall clock step back)
            self._set_reminder(reminder)
            return
        try:
            claimed = await asyncio.wrap_future(self._store.claim_reminder(page_id, reminder.at))
            page = await self._authority.page(page_id) if claimed else None
        except Exception as error:  # the database is down: a poll later, whoever can, claims it
            logger.info("page %s: no reminder now (%s)", page_id, error)
            self._alarm.set(_REMINDER + page_id, now + self._poll_s)
            self._reminders[page_id] = reminder
            return
        self._reminded.put(page_id, reminder.at)
        if page is None or page.over:  # another process claimed it (or the move it was for has passed)
            return
        await self._remind(page, reminder.side, max(0.0, reminder.deadline.timestamp() - now))

    async def _end_offer(self, page_id: str) -> None:
        end = self._offer_ends.pop(page_id, None)
        if end is None or self._offer_ended is None:
            return
        if self._authority.now() < end.expires_at.timestamp():  # the alarm woke early (a wall clock step)
            self._offer_ends[page_id] = end
            self._alarm.set(_OFFER_END + page_id, end.expires_at.timestamp())
            return
        try:
            await self._offer_ended(end)
        except Exception as error:  # nobody is told now; a phone opening the page reads it anyway
            logger.info("page %s: the end of its rematch offer was not told (%s)", page_id, error)
