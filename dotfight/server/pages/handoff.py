"""Handing an action between threads cheaply: the page authority's engine threads and the answers they
(and the database writer) give back to the event loop.

An action crosses three threads: the event loop hands it to an engine thread, the engine thread hands
its log entry to the writer, and the writer answers the loop once the entry is durable. With
`concurrent.futures` each crossing makes a `Future` (a `Condition` and an `RLock`), and
`asyncio.wrap_future` wakes the loop once per action; here a crossing is a put on a `SimpleQueue`,
and the answers given while the loop has not yet run (a group commit's actions, answered one after
another on the writer's thread) wake it once for all of them.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import queue
import threading
from collections.abc import Callable
from typing import Any, TypeVar

logger = logging.getLogger(__name__)

T = TypeVar("T")
_Call = tuple[Callable[..., None], tuple[Any, ...]]


class WorkThreads:
    """A few threads taking calls from one queue: a thread pool without a Future per call (each call
    answers its caller itself, e.g. through `LoopReplies`).

    >>> threads = WorkThreads(2, "example")
    >>> done = threading.Event()
    >>> threads.submit(done.set)
    >>> done.wait(5)
    True
    >>> threads.shutdown()
    """

    def __init__(self, count: int, name: str) -> None:
        self._count = count
        self._name = name
        self._calls: queue.SimpleQueue[_Call | None] = queue.SimpleQueue()
        self._threads: list[threading.Thread] = []
        self._start_lock = threading.Lock()

    def submit(self, call: Callable[..., None], *args: Any) -> None:
        """Queues `call(*args)` for the next free thread (the threads start at the first call)."""
        if not self._threads:
            self._start()
        self._calls.put((call, args))

    def _start(self) -> None:
        with self._start_lock:
            if self._threads:
                return
            for number in range(self._count):
                thread = threading.Thread(target=self._serve, name=f"{self._name}_{number}", daemon=True)
                thread.start()
                self._threads.append(thread)

    def _serve(self) -> None:
        while (item := self._calls.get()) is not None:
            call, args = item
            try:
                call(*args)
            except Exception:  # a call answers its caller itself; one that fails to is a bug, logged
                logger.exception("%s: a call failed", self._name)

    def shutdown(self) -> None:
        """Finishes the calls queued, then stops the threads."""
        with self._start_lock:
            threads, self._threads = self._threads, []
        for _ in threads:
            self._calls.put(None)
        for thread in threads:
            thread.join()


class LoopReplies:
    """Answers an event loop's futures from any thread, waking the loop once for all the answers given
    before it ran (one `call_soon_threadsafe` per group commit rather than one per action).

    >>> async def example() -> list[int]:
    ...     replies = LoopReplies(asyncio.get_running_loop())
    ...     futures = [asyncio.get_running_loop().create_future() for _ in range(3)]
    ...     writer = threading.Thread(target=lambda: [replies.settle(f, n) for n, f in enumerate(futures)])
    ...     writer.start()
    ...     writer.join()
    ...     return list(await asyncio.gather(*futures))
    >>> asyncio.run(example())
    [0, 1, 2]
    """

    def __init__(self, loop: asyncio.AbstractEventLoop) -> None:
        self.loop = loop
        self._lock = threading.Lock()
        self._waiting: list[tuple[asyncio.Future[Any], Any]] = []

    def settle(self, future: asyncio.Future[T], outcome: T | BaseException) -> None:
        """Gives `future` its result (or its exception, when `outcome` is one), on the loop's thread."""
        with self._lock:
            self._waiting.append((future, outcome))
            first = len(self._waiting) == 1
        if first:  # later answers ride on this wake-up until the loop has taken them
            with contextlib.suppress(RuntimeError):  # a closed loop: nobody waits for these any more
                self.loop.call_soon_threadsafe(self._deliver)

    def _deliver(self) -> None:
        with self._lock:
            waiting, self._waiting = self._waiting, []
        for future, outcome in waiting:
            if future.done():  # its caller was cancelled meanwhile
                continue
            if isinstance(outcome, BaseException):
                future.set_exception(outcome)
            else:
                future.set_result(outcome)
