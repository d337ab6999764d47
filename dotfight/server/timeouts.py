"""The time-out writer: the server ends a page whose running side's time is up, by itself (issue 19).

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
(`clock.reminder_at`), once per move and not while it has the page open: the reminder is set by the
process that committed the move (a restart in between drops it; the deadline itself still holds).
"""

from __future__ import annotations

import asyncio
import logging
from collections import deque
from collections.abc import Callable

from dotfight.server.cache import LruCache
from dotfight.server.page_view import LoadedPage
from dotfight.server.pages.authority import Applied, Arrival, PageAuthority, Seat, time_out_move_id
from dotfight.server.pages.errors import EngineRefusal, NotFound, PageExpired, StaleVersion
from dotfight.server.people.alarm import Alarm, AlarmClock
from dotfight.server.people.clock import ClockState, LinkClock, reminder_at, time_out_at
from dotfight.server.people.lag import ALLOWANCE_CAP_S
from dotfight.store.records import PeopleStore

__all__ = ["FIRST_BATCH", "TimeOuts"]

logger = logging.getLogger(__name__)

# The earliest deadlines read per poll; read again, twice as many, while all of them are due before the
# next poll (a burst of pages ending at once), up to MAX_BATCH.
FIRST_BATCH = 64
MAX_BATCH = 8192
# The time-outs' delays kept (the latest).
DELAYS_KEPT = 1024
# Link pages whose last reminder this process remembers.
REMINDED_KEPT = 100_000
# A reminder's key in the one alarm, beside the pages' time-outs.
_REMINDER = "remind:"

# Tells a seat of a link page (page, side, seconds left) that a fifth of its move's time is left.
Remind = Callable[[LoadedPage, str, float], None]


class TimeOuts:
    """Writes `time_out` for every page whose running side's time is up, once, on whichever process
    notices first; reminds link pages' side to act."""

    def __init__(
        self,
        authority: PageAuthority,
        store: PeopleStore,
        poll_s: float,
        *,
        trusted: Callable[[], bool] = lambda: True,
        remind: Remind | None = None,
        clock: AlarmClock | None = None,
    ) -> None:
        self._authority = authority
        self._store = store
        self._poll_s = poll_s
        self._trusted = trusted
        self._remind = remind
        # The alarm's clock reads the same time as the authority's (tests hand in one ManualClock to both).
        self._alarm = Alarm(self._due, clock, max_sleep_s=poll_s)
        # Page id -> the `since` of the move last reminded of (bounded: an old entry only risks a repeat).
        self._reminded: LruCache[str, float] = LruCache(REMINDED_KEPT)
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
        """Returns how many alarms are set (time-outs and reminders)."""
        return len(self._alarm)

    def committed(self, page: LoadedPage, applied: Applied) -> None:
        """The authority's listener: sets the page's alarm from its new clock (under the page's lock)."""
        clock = page.clock
        if clock is None:
            return
        self._set(page.meta.id, clock, remind=True)

    def created(self, page: LoadedPage) -> None:
        """The authority's hook for a page just created: its first side to act's time runs already."""
        if page.clock is not None:
            self._set(page.meta.id, page.clock, remind=True)

    def late_move(self, page_id: str) -> None:
        """A move was refused as late: the page's time-out is due within the lag cap; look at it then."""
        self._alarm.set(page_id, self._authority.now() + ALLOWANCE_CAP_S)

    def _set(self, page_id: str, clock: ClockState, *, remind: bool = False) -> None:
        """Sets the page's time-out from its clock, and with `remind` (the process that committed the
        move: one process reminds) a link page's reminder."""
        at = time_out_at(clock)
        if at is None:
            self._alarm.clear(page_id)
            self._alarm.clear(_REMINDER + page_id)
            self._reminded.drop(page_id)
            return
        self._alarm.set(page_id, at)
        reminder = reminder_at(clock) if remind and self._remind is not None else None
        if reminder is not None and self._reminded.get(page_id) != clock.since:
            self._alarm.set(_REMINDER + page_id, reminder)

    # -- the poll

    async def _poll_forever(self) -> None:
        while True:
            await asyncio.sleep(self._poll_s)
            try:
                await self.poll()
            except Exception as error:  # the database is down: the next poll tries again
                logger.info("reading the earliest deadlines failed: %s", error)

    async def poll(self) -> None:
        """Sets the alarm of each of the earliest deadlines it does not know yet (or knows later)."""
        horizon = self._authority.now() + self._poll_s + ALLOWANCE_CAP_S
        batch = FIRST_BATCH
        while True:
            deadlines = await asyncio.to_thread(self._store.next_deadlines, batch)
            for due in deadlines:
                at = due.deadline.timestamp() + ALLOWANCE_CAP_S
                known = self._alarm.when(due.page_id)
                if known is None or at < known:
                    self._alarm.set(due.page_id, at)
            if len(deadlines) < batch or batch >= MAX_BATCH or deadlines[-1].deadline.timestamp() > horizon:
                return
            batch *= 2

    # -- writing time-outs

    async def _due(self, key: str) -> None:
        if key.startswith(_REMINDER):
            await self._remind_now(key.removeprefix(_REMINDER))
            return
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
                self._reminded.drop(page_id)
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
        try:
            page = await self._authority.page(page_id)
        except Exception as error:
            logger.info("page %s: no reminder (%s)", page_id, error)
            return
        clock = page.clock
        if self._remind is None or clock is None or page.over or clock.running is None:
            return
        at = reminder_at(clock)
        if (
            not isinstance(clock.settings, LinkClock)
            or at is None
            or self._reminded.get(page_id) == clock.since
        ):
            return
        now = self._authority.now()
        if now < at:
            self._alarm.set(_REMINDER + page_id, at)
            return
        self._reminded.put(page_id, clock.since or 0.0)
        deadline = clock.deadline or now
        self._remind(page, clock.running, max(0.0, deadline - now))
