"""One timer for the earliest deadline of many pages, not a task per page (issue 19).

`Alarm` keeps a heap of `(when, page_id)` and one asyncio task that sleeps until the earliest and then
calls `on_due(page_id)`. A page waiting costs one heap entry and nothing per second; `set` and `clear`
cost O(log n) (a changed deadline leaves its old entry in the heap, skipped when it comes up, and the
heap is rebuilt once stale entries outnumber the live ones). The clock is injected (`now()` and `wait`),
so tests drive the alarm with a fake clock; the task wakes at least every `max_sleep_s` to look at the
wall clock again (a clock stepped by NTP moves deadlines, not the loop's timers).

>>> import asyncio
>>> async def main() -> list[str]:
...     clock, due = ManualClock(100.0), []
...     alarm = Alarm(due.append, clock)
...     alarm.start()
...     alarm.set("p1", 130.0); alarm.set("p2", 110.0); alarm.clear("p1")
...     await clock.advance(20.0)
...     alarm.stop()
...     return due
>>> asyncio.run(main())
['p2']
"""

from __future__ import annotations

import asyncio
import contextlib
import heapq
import logging
import math
import time
from collections.abc import Awaitable, Callable
from typing import Protocol

__all__ = ["Alarm", "AlarmClock", "ManualClock", "SystemClock"]

_log = logging.getLogger(__name__)


class AlarmClock(Protocol):
    """The time an alarm reads and the way it waits."""

    def now(self) -> float:
        """Returns the time in seconds since the epoch."""
        ...

    async def wait(self, wakeup: asyncio.Event, delay: float) -> None:
        """Returns once `wakeup` is set or `delay` seconds have passed, whichever comes first."""
        ...


class SystemClock:
    """The wall clock, waiting on the event loop's timers (no task of its own)."""

    def now(self) -> float:
        """Returns `time.time()`."""
        return time.time()

    async def wait(self, wakeup: asyncio.Event, delay: float) -> None:
        """Waits for `wakeup` at most `delay` seconds (a loop timer, not another task)."""
        with contextlib.suppress(TimeoutError):
            async with asyncio.timeout(delay):
                await wakeup.wait()


class ManualClock:
    """A clock that moves only when told (`advance`): for tests and examples. Waiting on it makes no task
    either: `advance` sets the wake-up event of every wait whose delay has passed."""

    def __init__(self, start: float = 0.0) -> None:
        self._now = start
        self._waits: list[tuple[float, asyncio.Event]] = []

    def now(self) -> float:
        """Returns the time it was last moved to."""
        return self._now

    async def wait(self, wakeup: asyncio.Event, delay: float) -> None:
        """Waits until `wakeup` is set or the clock has been moved `delay` past the call."""
        if delay <= 0:
            return
        entry = (self._now + delay, wakeup)
        self._waits.append(entry)
        try:
            await wakeup.wait()
        finally:
            self._waits.remove(entry)

    async def advance(self, seconds: float) -> None:
        """Moves the clock on and lets every waiter (and what it calls) run."""
        self._now += seconds
        for until, wakeup in self._waits:
            if until <= self._now:
                wakeup.set()
        for _ in range(8):  # the alarm's task wakes, pops what is due and calls back: a few hops
            await asyncio.sleep(0)


class Alarm:
    """One timer for many pages: `set(page_id, when)`, `clear(page_id)`, and `on_due(page_id)` called
    once when a page's time comes (the page is then forgotten; set it again for a later deadline). An
    `on_due` that returns an awaitable (an `async def`) has it run as its own task, so a slow write for
    one page never delays another page's time-out; the alarm holds the task until it is done."""

    def __init__(
        self, on_due: Callable[[str], object], clock: AlarmClock | None = None, *, max_sleep_s: float = 60.0
    ) -> None:
        self._on_due = on_due
        self._clock: AlarmClock = clock or SystemClock()
        self._max_sleep_s = max_sleep_s
        self._heap: list[tuple[float, int, str]] = []
        self._when: dict[str, tuple[float, int]] = {}
        self._order = 0
        self._wakeup = asyncio.Event()
        self._task: asyncio.Task[None] | None = None
        self._callbacks: set[asyncio.Task[object]] = set()

    def __len__(self) -> int:
        """Returns how many pages wait."""
        return len(self._when)

    def when(self, page_id: str) -> float | None:
        """Returns when the page is due, or None."""
        entry = self._when.get(page_id)
        return None if entry is None else entry[0]

    def set(self, page_id: str, when: float) -> None:
        """Sets (or moves) the page's alarm; wakes the task only when this is the new earliest.

        >>> Alarm(print).set("p1", float("nan"))
        Traceback (most recent call last):
        ...
        ValueError: an alarm's time must be a finite number of seconds, not nan
        """
        if not math.isfinite(when):
            raise ValueError(f"an alarm's time must be a finite number of seconds, not {when!r}")
        earliest = self._earliest()
        self._order += 1
        self._when[page_id] = (when, self._order)
        heapq.heappush(self._heap, (when, self._order, page_id))
        self._compact()
        if earliest is None or when < earliest:
            self._wakeup.set()

    def clear(self, page_id: str) -> None:
        """Forgets the page's alarm (its heap entry is skipped when it comes up)."""
        if self._when.pop(page_id, None) is not None:
            self._compact()

    def start(self) -> None:
        """Starts the one task (on the running loop)."""
        if self._task is None:
            self._task = asyncio.get_running_loop().create_task(self._run(), name="dotfight-alarm")

    def stop(self) -> None:
        """Cancels the task."""
        if self._task is not None:
            self._task.cancel()
            self._task = None

    def _earliest(self) -> float | None:
        """Returns the earliest live deadline, dropping the stale entries on top of the heap."""
        heap = self._heap
        while heap:
            when, order, page_id = heap[0]
            if self._when.get(page_id) == (when, order):
                return when
            heapq.heappop(heap)
        return None

    def _compact(self) -> None:
        """Rebuilds the heap once stale entries outnumber live ones (amortised O(1) per change)."""
        if len(self._heap) > 2 * len(self._when) + 64:
            self._heap = [(when, order, page_id) for page_id, (when, order) in self._when.items()]
            heapq.heapify(self._heap)

    async def _run(self) -> None:
        """Sleeps until the earliest deadline, calls back for every page due, and sleeps again."""
        while True:
            self._wakeup.clear()
            earliest = self._earliest()
            now = self._clock.now()
            if earliest is not None and earliest <= now:
                _when, _order, page_id = heapq.heappop(self._heap)
                del self._when[page_id]
                self._call_back(page_id)
                continue
            delay = self._max_sleep_s if earliest is None else min(earliest - now, self._max_sleep_s)
            await self._clock.wait(self._wakeup, delay)

    def _call_back(self, page_id: str) -> None:
        """Calls `on_due`; an awaitable it returns runs as a task. A failure is logged, never raised: one
        page's failure must not stop every other page's alarm."""
        try:
            result = self._on_due(page_id)
        except Exception:
            _log.exception("the alarm's callback failed for page %s", page_id)
            return
        if isinstance(result, Awaitable):
            task = asyncio.ensure_future(_logged(result, page_id))
            self._callbacks.add(task)
            task.add_done_callback(self._callbacks.discard)


async def _logged(work: Awaitable[object], page_id: str) -> object:
    """Awaits an `on_due` coroutine, logging its failure."""
    try:
        return await work
    except Exception:
        _log.exception("the alarm's callback failed for page %s", page_id)
        return None
