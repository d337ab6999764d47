"""Worker processes for work that must not run in the server's own process (where it would hold the GIL
the event loop, the writer and every other page need): Dawood-bot's thinking, and the engine's work on
pages whose rules make a move expensive.

Work is handed over by value (JSON-able arguments, the engine's `State.to_json()`), through a
`concurrent.futures.ProcessPoolExecutor` whose processes fork from a clean forkserver that has the
worker modules imported already. A call that does not come back within its timeout has its processes
replaced (a running call cannot be cancelled otherwise) and raises WorkerTimeout. Every worker ends
when the server's process does, even one killed with SIGKILL (`_end_with_the_server`).
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import multiprocessing
import multiprocessing.connection
import os
import threading
from collections.abc import Callable, Iterator, Sequence
from concurrent.futures import Future, ProcessPoolExecutor
from concurrent.futures.process import BrokenProcessPool
from typing import Any, TypeVar

logger = logging.getLogger(__name__)

T = TypeVar("T")


class WorkerFailed(Exception):
    """A call's worker process died (e.g. out of memory); the pool was replaced."""


class WorkerTimeout(WorkerFailed):
    """A call did not come back within its timeout (its worker processes were replaced)."""


def _end_with_the_server() -> None:
    """Runs first in every worker process: a thread ends the worker when the server's process is gone.

    A worker waits for calls on a pipe whose both ends it holds, and it holds the forkserver's "alive"
    pipe too, so a server that was killed without stopping its pool (SIGKILL, the OOM killer) left
    its workers, their forkserver and the resource tracker running for ever. The parent's sentinel
    (multiprocessing's own pipe for exactly this) reads at end of file once the server is gone.
    """
    parent = multiprocessing.parent_process()
    if parent is None:
        return

    def watch() -> None:
        multiprocessing.connection.wait([parent.sentinel])
        os._exit(0)  # nothing of the server's is left to answer: no clean-up to run

    threading.Thread(target=watch, name="end-with-the-server", daemon=True).start()


def _nothing() -> None:
    """Submitted at start so that the processes are up before the first real call."""


class WorkerPool:
    """A few worker processes, started from a forkserver with `preload` imported."""

    def __init__(self, name: str, processes: int, timeout_s: float, preload: Sequence[str]) -> None:
        self._name = name
        self._processes = processes
        self._timeout_s = timeout_s
        self._preload = list(preload)
        self._lock = threading.Lock()
        self._executor = self._new_executor()

    def _new_executor(self) -> ProcessPoolExecutor:
        # forkserver: workers fork from a clean server of their own (never from this process and its
        # threads), with the engine (and the bot) already imported.
        context = multiprocessing.get_context("forkserver")
        context.set_forkserver_preload(self._preload)
        return ProcessPoolExecutor(self._processes, mp_context=context, initializer=_end_with_the_server)

    def warm_up(self) -> None:
        """Starts the worker processes now rather than at the first call."""
        for _ in range(self._processes):
            self._executor.submit(_nothing)

    def _submit(self, work: Callable[..., T], args: tuple[Any, ...]) -> tuple[ProcessPoolExecutor, Future[T]]:
        with self._lock:
            executor = self._executor
            return executor, executor.submit(work, *args)

    async def run(self, work: Callable[..., T], *args: Any) -> T:
        """Runs `work(*args)` in a worker process without blocking the event loop."""
        executor, future = self._submit(work, args)
        with self._watching(executor):
            return await asyncio.wait_for(asyncio.wrap_future(future), self._timeout_s)

    def call(self, work: Callable[..., T], *args: Any) -> T:
        """Runs `work(*args)` in a worker process, waiting in this (worker) thread."""
        executor, future = self._submit(work, args)
        with self._watching(executor):
            return future.result(self._timeout_s)

    @contextlib.contextmanager
    def _watching(self, executor: ProcessPoolExecutor) -> Iterator[None]:
        """Turns a call that ran out of time or lost its process into WorkerTimeout / WorkerFailed,
        replacing the worker processes."""
        try:
            yield
        except TimeoutError:  # asyncio's and concurrent.futures' alike (both are TimeoutError)
            self._replace(executor)
            raise WorkerTimeout(f"{self._name} took over {self._timeout_s:g} s") from None
        except BrokenProcessPool:
            self._replace(executor)
            raise WorkerFailed(f"a worker process of {self._name} died") from None

    def _replace(self, stuck: ProcessPoolExecutor) -> None:
        logger.error(
            "%s: a call failed or took over %g s; worker processes replaced", self._name, self._timeout_s
        )
        with self._lock:
            if self._executor is not stuck:
                return  # another caller replaced them already
            self._executor = self._new_executor()
        self._stop(stuck)

    @staticmethod
    def _stop(executor: ProcessPoolExecutor) -> None:
        # ProcessPoolExecutor cannot cancel a running call: its processes are ended instead.
        processes = list((getattr(executor, "_processes", None) or {}).values())
        executor.shutdown(wait=False, cancel_futures=True)
        for process in processes:
            process.kill()

    def close(self) -> None:
        """Stops the worker processes (at shutdown)."""
        self._stop(self._executor)
