"""The process's heartbeat, and nobody losing on time through downtime (issue 19).

Every process beats (`store.beat`: one UPDATE of its own row) every `heartbeat_s`. At start, and at the
first beat that succeeds after one failed (a database outage), it beats with
`store.beat_crediting`: when no process had beaten for `DOWN_AFTER_BEATS` beats, the server (or its
database) was down since the last beat of any process, and that stretch is credited to every running
clock (`people.clock.credit_downtime`: the running side's time starts again later by the gap, as lichess
gives time back after a restart). The beat and the credit are one transaction, and processes crediting
at once are put in line by a lock on the beats (store/people.py): the second reads the first's beat, sees
no gap, and credits nothing — so one downtime is credited once, however many processes come back.

Until that first beat is written the process is not `trusted`: the time-out writer (timeouts.py) writes
no `time_out` then, nor while beats fail (a deadline that passed during an outage is credited first).
After an outage every page in memory is dropped (another process may have credited its clock).
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import secrets
from collections.abc import Callable
from datetime import UTC, datetime, timedelta
from typing import Any

from dotfight.server.pages.authority import PageAuthority, clock_update
from dotfight.server.people.clock import ClockState, credit_downtime
from dotfight.store.records import ClockUpdate, Downtime, PeopleStore

__all__ = ["DOWN_AFTER_BEATS", "Heartbeat", "credited"]

logger = logging.getLogger(__name__)

# A stretch of this many beat periods without any process beating is downtime (one or two beats late is
# a busy machine, not a server down).
DOWN_AFTER_BEATS = 2.5


def credited(state: dict[str, Any], down_from: datetime, up_at: datetime) -> ClockUpdate:
    """Returns a stored running clock with the downtime `down_from` … `up_at` credited (the store's
    `ClockCredit`).

    >>> from dotfight.server.people.clock import LiveClock
    >>> clock = ClockState(LiveClock(60), 60.0, 60.0, "blue", 100.0)
    >>> at = lambda seconds: datetime.fromtimestamp(seconds, UTC)
    >>> credited(clock.to_json(), at(130.0), at(150.0)).state["deadline"]
    180.0
    """
    clock = ClockState.from_json(state)
    return clock_update(credit_downtime(clock, down_from.timestamp(), up_at.timestamp()))


class Heartbeat:
    """Beats for this process and credits downtime once; `trusted` while its beats succeed."""

    def __init__(
        self,
        store: PeopleStore,
        authority: PageAuthority,
        period_s: float,
        on_downtime: Callable[[Downtime], None] | None = None,
    ) -> None:
        self._store = store
        self._authority = authority
        self._period_s = period_s
        self._on_downtime = on_downtime
        self.process_id = secrets.token_hex(8)
        self._started_at = self._utc_now()
        self._last_success: float | None = None
        self._failing = True  # until the first beat (crediting) succeeds
        self._task: asyncio.Task[None] | None = None

    def _utc_now(self) -> datetime:
        return datetime.fromtimestamp(self._authority.now(), UTC)

    @property
    def trusted(self) -> bool:
        """Tells whether time-outs may be written: the last beat succeeded, lately, and any downtime
        before it is credited."""
        last = self._last_success
        recent = last is not None and self._authority.now() - last < DOWN_AFTER_BEATS * self._period_s
        return recent and not self._failing

    async def start(self) -> None:
        """Beats once, crediting any downtime before start (so before the first action is served), then
        beats in the background."""
        await self.beat()
        self._task = asyncio.get_running_loop().create_task(self._run(), name="dotfight-heartbeat")

    async def stop(self) -> None:
        """Stops beating."""
        if self._task is not None:
            self._task.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self._task
            self._task = None

    async def _run(self) -> None:
        while True:
            await asyncio.sleep(self._period_s)
            await self.beat()

    async def beat(self) -> Downtime | None:
        """Beats once (crediting a downtime when the last beat failed); a failure is logged, never
        raised. Answers the downtime this beat credited, if any."""
        now = self._utc_now()
        try:
            if not self._failing:
                await asyncio.wrap_future(self._store.beat(self.process_id, self._started_at, now))
                self._last_success = now.timestamp()
                return None
            gap = timedelta(seconds=DOWN_AFTER_BEATS * self._period_s)
            downtime = await asyncio.wrap_future(
                self._store.beat_crediting(self.process_id, self._started_at, now, gap, credited)
            )
        except Exception as error:
            if not self._failing:
                logger.warning("the heartbeat failed (%s): no time-out is written until it succeeds", error)
            self._failing = True
            return None
        # Whether or not this process credited it, a downtime may have been: what memory holds of the
        # pages' clocks may be stale (at start memory is empty).
        self._authority.forget_all()
        self._failing = False
        self._last_success = now.timestamp()
        if downtime is not None:
            logger.info(
                "the server was down %.1f s: credited to %d running clocks",
                (downtime.up_at - downtime.down_from).total_seconds(),
                len(downtime.pages),
            )
            if self._on_downtime is not None:
                self._on_downtime(downtime)
        return downtime
