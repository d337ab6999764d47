"""The one database writer: a thread that commits whatever writes are waiting, together (group commit).

With `synchronous=FULL` every commit waits for the disk to flush, which takes milliseconds. Writes that
arrive while one commit is flushing are committed together in the next transaction, so the disk is
flushed once for many actions and throughput follows the load instead of the disk's flush rate. Each
write still commits before anyone hears of it, and a write never waits for another page's lock.

A job is a `prepare(session)` callable that checks what it must, then writes, and returns its result with
an optional hook to run after the commit (e.g. updating an in-memory cache). A job that refuses (raises
ApiError) must do so before writing anything; it is answered with its error and the others go on. If
the commit itself fails (a constraint, e.g. another worker process took a version), the batch is rolled
back and each job is run again in a transaction of its own.
"""

from __future__ import annotations

import asyncio
import logging
import queue
import threading
from collections.abc import Callable
from concurrent.futures import Future
from typing import Any, Generic, TypeVar

from sqlalchemy.orm import Session, sessionmaker

from dotfight.server.errors import ApiError

logger = logging.getLogger(__name__)

T = TypeVar("T")
AfterCommit = Callable[[], None] | None
Prepare = Callable[[Session], tuple[T, AfterCommit]]

# Most jobs committed in one transaction (a bound on how long the first of them waits).
MAX_BATCH = 64


class _Job(Generic[T]):
    def __init__(self, prepare: Prepare[T]) -> None:
        self.prepare = prepare
        self.future: Future[T] = Future()


class BatchWriter:
    """Runs write jobs on one thread, committing the jobs that are waiting in one transaction."""

    def __init__(self, sessions: sessionmaker[Session]) -> None:
        self._sessions = sessions
        self._jobs: queue.SimpleQueue[_Job[Any] | None] = queue.SimpleQueue()
        self._thread = threading.Thread(target=self._loop, name="dotfight-writer", daemon=True)
        self._thread.start()

    async def run(self, prepare: Prepare[T]) -> T:
        """Runs one job and returns its result once it is committed (or raises its refusal)."""
        job = _Job(prepare)
        self._jobs.put(job)
        return await asyncio.wrap_future(job.future)

    def close(self) -> None:
        """Finishes the jobs already submitted, then stops the thread."""
        self._jobs.put(None)
        self._thread.join()

    def _loop(self) -> None:
        while True:
            job = self._jobs.get()
            if job is None:
                return
            batch = [job]
            stop = False
            while len(batch) < MAX_BATCH:
                try:
                    more = self._jobs.get_nowait()
                except queue.Empty:
                    break
                if more is None:
                    stop = True
                    break
                batch.append(more)
            # A job whose caller gave up before it started is dropped; a started one cannot be cancelled.
            self._write([job for job in batch if job.future.set_running_or_notify_cancel()])
            if stop:
                return

    def _write(self, batch: list[_Job[Any]]) -> None:
        if not batch:
            return
        outcomes: list[tuple[_Job[Any], Any, AfterCommit, ApiError | None]] = []
        try:
            with self._sessions() as session, session.begin():
                for job in batch:
                    try:
                        result, after_commit = job.prepare(session)
                    except ApiError as refusal:
                        outcomes.append((job, None, None, refusal))
                        continue
                    outcomes.append((job, result, after_commit, None))
        except Exception as error:
            if len(batch) == 1:
                batch[0].future.set_exception(error)
                return
            logger.info("a batch of %d writes failed (%r): writing them one by one", len(batch), error)
            for job in batch:
                self._write([job])
            return
        for job, result, after_commit, refused in outcomes:
            if refused is not None:
                job.future.set_exception(refused)
                continue
            if after_commit is not None:
                try:
                    after_commit()
                except Exception:  # the write is committed: its caller must still hear so
                    logger.exception("an after-commit hook failed")
            job.future.set_result(result)
