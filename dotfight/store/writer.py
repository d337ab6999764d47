"""The one database writer: a thread that commits whatever writes are waiting, together (group commit).

With `synchronous=FULL` every commit waits for the disk to flush, which takes milliseconds. Writes that
arrive while one commit is flushing are committed together in the next transaction, so the disk is
flushed once for many actions and throughput follows the load instead of the disk's flush rate. Each
write still commits before anyone hears of it, and a write never waits for another page's lock.

A job is a `prepare(transaction)` callable (`store.database.Transaction`: the Core connection, and an ORM
session on it made only when a job asks) that checks what it must, then writes, and returns its result
with an optional hook to run after the commit (e.g. updating an in-memory cache). The writer is
`SqlPageStore`'s own (sql_pages.py builds it and is its only user). Jobs of one kind may also be
written together: the appends of play side by side in a batch go to the store's `together` function
at once (one executemany per statement); if that finds a row that does not match, the transaction is
rolled back and the batch runs again job by job, so the one refused is found and the others go on.
Jobs only touch the database: the engine's work is done before a job is queued (pages/authority.py),
so one page's expensive move never holds up another page's write. A job that refuses (raises
JobRefused) must do so before writing anything; it is answered with its error and the others go on.
If the commit fails on a constraint (e.g. another worker process took a version), the batch is rolled
back and each job is run again in a transaction of its own.

Each job names the row it locks first (its `order`: the page id), and a batch runs its jobs sorted by
it: two processes (or a process and a person's tool) writing several pages at once then lock their rows
in the same order and can never wait on each other in a circle (PostgreSQL's deadlock detector would
abort one of them after a second's stall).

A busy or missing database is answered, never waited out: every job has a deadline (the busy timeout
after it was queued); the transaction waits for the write lock only until the earliest deadline of its
batch, and when the database is locked, gone or full every job of the batch fails with
DatabaseUnavailable at once (nothing was written; the caller may try again).

On PostgreSQL a batch of one job that writes with one statement, all or nothing (`alone`: an action
with no checkpoint, the common case at a human pace), is sent in autocommit with no transaction around
it: the statement is its own, committed as it runs (one round trip, no BEGIN or COMMIT), and a refusal
found from its row count wrote nothing. Every other batch is a transaction, as below.

The writer keeps one connection for its whole life and begins and commits on it directly: no session,
pool checkout or reset-on-return rollback per commit (at one action per commit those cost more than the
action's own statements). A connection found broken is replaced at the next batch; a batch that lost its
connection before its commit was sent (nothing was written) is tried once more on a new one, as the
pool's pre-ping used to do at every checkout. A statement in autocommit is its own commit, so its batch
is tried again only when the connection is found gone before it is sent (driver.committing_alone).
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import queue
import threading
import time
from collections.abc import Callable, Iterator, Sequence
from concurrent.futures import Future
from typing import Any, Generic, TypeVar

from sqlalchemy import Connection, Engine
from sqlalchemy.exc import DBAPIError

from dotfight.store import driver
from dotfight.store.database import (
    DEFAULT_BUSY_TIMEOUT_S,
    DatabaseUnavailable,
    Transaction,
    begin_write,
    is_database_trouble,
)
from dotfight.store.records import Answer, JobRefused

logger = logging.getLogger(__name__)

T = TypeVar("T")
# A hook run once the job's transaction is committed (e.g. updating an in-memory cache), or None.
AfterCommit = Callable[[], None] | None
# A writer job: does its database work in the writer's transaction (its Core connection, or an ORM
# session on it), returns its result and an optional hook run after the commit.
Job = Callable[[Transaction], tuple[T, AfterCommit]]
# Writes several jobs of one kind in one go, answering each as it would alone; None: they cannot be
# written together (the writer rolls back and writes them one by one).
Together = Callable[[Transaction, Sequence[Job[Any]]], "list[tuple[Any, AfterCommit]] | None"]
# Says why the database cannot take a write now (its file gone, its disk full), or None.
WriteCheck = Callable[[], str | None]

# Most jobs committed in one transaction (a bound on how long the first of them waits).
MAX_BATCH = 64


class _NotTogether(Exception):
    """Jobs written together found they could not be (a row did not match): the batch is rolled back."""


class _Job(Generic[T]):
    __slots__ = ("alone", "deadline", "future", "order", "prepare", "together")

    def __init__(
        self,
        prepare: Job[T],
        future: Answer[T],
        deadline: float,
        order: str,
        together: Together | None,
        alone: bool,
    ) -> None:
        self.prepare = prepare
        self.future = future
        self.deadline = deadline
        self.order = order
        self.together = together
        self.alone = alone


def _runs(batch: list[_Job[Any]]) -> Iterator[list[_Job[Any]]]:
    """The batch in order, cut into runs of jobs written together (consecutive, the same `together`)
    and single jobs."""
    run: list[_Job[Any]] = []
    for job in batch:
        if run and (job.together is None or job.together is not run[0].together):
            yield run
            run = []
        run.append(job)
    if run:
        yield run


_Outcome = tuple[_Job[Any], Any, AfterCommit, JobRefused | None]


def _prepared(transaction: Transaction, run: list[_Job[Any]]) -> list[_Outcome]:
    """Runs one job, or a run of jobs written together, in the batch's transaction."""
    if len(run) > 1:
        together = run[0].together
        assert together is not None
        results = together(transaction, [job.prepare for job in run])
        if results is None:
            raise _NotTogether()
        return [
            (job, result, after_commit, None)
            for job, (result, after_commit) in zip(run, results, strict=True)
        ]
    job = run[0]
    try:
        result, after_commit = job.prepare(transaction)
    except JobRefused as refusal:
        return [(job, None, None, refusal)]
    return [(job, result, after_commit, None)]


class BatchWriter:
    """Runs write jobs on one thread, committing the jobs that are waiting in one transaction."""

    def __init__(
        self,
        database: Engine,
        busy_timeout_s: float = DEFAULT_BUSY_TIMEOUT_S,
        check: WriteCheck | None = None,
    ) -> None:
        self._database = database
        self._connection: Connection | None = None  # the writer's own, opened at the first batch
        # The PostgreSQL backend serving that connection (the sender of its NOTIFYs), once it is open.
        self.backend_pid: int | None = None
        self._busy_timeout_s = busy_timeout_s
        self._check = check
        self._jobs: queue.SimpleQueue[_Job[Any] | None] = queue.SimpleQueue()
        self._thread = threading.Thread(target=self._loop, name="dotfight-writer", daemon=True)
        self._thread.start()

    async def run(self, prepare: Job[T], order: str = "") -> T:
        """Runs one job and returns its result once it is committed (or raises its refusal)."""
        future: Future[T] = Future()
        self.submit(prepare, future, order)
        return await asyncio.wrap_future(future)

    def submit(
        self,
        prepare: Job[T],
        future: Answer[T],
        order: str = "",
        together: Together | None = None,
        alone: bool = False,
        /,
    ) -> None:
        """Queues one job from any thread; `future` (a Future, or any `Answer`) gets its result once it is
        committed. `order` names the row the job locks first (a page id): a batch runs its jobs in that
        order. `together` writes the jobs given the same one that sit side by side in a batch in one go
        (the appends of play: one executemany per statement). `alone` says the job writes with one
        statement, all or nothing, and writes nothing when it refuses (an append with no checkpoint):
        in a batch of its own on PostgreSQL it is then sent with no transaction around it (autocommit:
        the statement is its own, one round trip instead of a BEGIN's pipeline and a COMMIT's)."""
        deadline = time.monotonic() + self._busy_timeout_s
        self._jobs.put(_Job(prepare, future, deadline, order, together, alone))

    def close(self) -> None:
        """Finishes the jobs already submitted, then stops the thread."""
        self._jobs.put(None)
        self._thread.join()

    def _loop(self) -> None:
        try:
            self._serve()
        finally:
            self._let_go()

    def _serve(self) -> None:
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
            batch = [job for job in batch if job.future.set_running_or_notify_cancel()]
            # Rows locked in one order by every process: no deadlock between two batches (stable, so a
            # page's jobs keep their order).
            batch.sort(key=lambda job: job.order)
            self._write(batch)
            if stop:
                return

    def _ready(self, batch: list[_Job[Any]]) -> list[_Job[Any]]:
        """Returns the jobs of a batch worth trying: none when the database cannot take a write (its file
        gone, its disk full); not those that already waited their whole busy timeout in the queue."""
        problem = self._check() if self._check is not None else None
        now = time.monotonic()
        ready = []
        for job in batch:
            if problem is None and job.deadline > now:
                ready.append(job)
            else:
                reason = problem or "the database stayed busy for the whole busy timeout"
                job.future.set_exception(DatabaseUnavailable(reason))
        return ready

    def _connected(self) -> Connection:
        """The writer's connection, opened again when the last one broke (or was never opened)."""
        connection = self._connection
        if connection is None or connection.closed or connection.invalidated:
            self._let_go()
            connection = self._connection = self._database.connect()
            if connection.dialect.name == "postgresql":
                driver.deferring_begin(connection)  # each BEGIN sent with its transaction's first statement
                self.backend_pid = driver.backend_pid(connection)
        return connection

    def _let_go(self) -> None:
        connection, self._connection = self._connection, None
        if connection is not None:
            try:
                connection.close()
            except Exception:  # already broken: nothing more to give back
                logger.debug("the writer's connection did not close cleanly", exc_info=True)

    def _write(self, batch: list[_Job[Any]], together: bool = True, reconnected: bool = False) -> None:
        batch = self._ready(batch)
        if not batch:
            return
        wait_s = min(job.deadline for job in batch) - time.monotonic()
        outcomes: list[_Outcome] = []
        committing = False
        try:
            connection = self._connected()
            if len(batch) == 1 and batch[0].alone and connection.dialect.name == "postgresql":
                begin_write(connection, wait_s)  # the row locks' timeout
                driver.committing_alone(connection)  # raises, nothing sent, if the connection is gone
                # The statement commits as it runs: a connection lost from here on may have committed.
                committing = True
                outcomes = _committed_alone(connection, batch[0])
            else:
                with _transaction(connection):  # committed on leaving the block, rolled back on an error
                    begin_write(connection, wait_s)
                    transaction = Transaction(connection)
                    try:
                        for run in _runs(batch) if together else ([job] for job in batch):
                            outcomes.extend(_prepared(transaction, run))
                        transaction.finish()
                    finally:
                        transaction.close()
                    # Leaving the block sends the commit: a connection lost from here on may have
                    # committed, so the batch is not written again (only its callers are told).
                    committing = True
        except _NotTogether:
            # Rolled back: the same jobs one by one in a transaction, where the one that cannot be
            # written refuses alone and the others go on.
            self._write(batch, together=False)
            return
        except Exception as error:
            if not committing and not reconnected and _lost_connection(error):
                # The connection broke (a database restarted since the last batch) before the commit
                # was sent: nothing was written; once more on a new connection.
                logger.info("the writer's connection was lost (%r): connecting again", error)
                self._write(batch, together, reconnected=True)
                return
            if len(batch) == 1 or is_database_trouble(error):
                # Locked, gone or unreachable: every job would meet the same; none was written.
                for job in batch:
                    job.future.set_exception(error)
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


def _committed_alone(connection: Connection, job: _Job[Any]) -> list[_Outcome]:
    """Runs a job that writes with one statement (`alone`) on the writer's PostgreSQL connection in
    autocommit: its statement is its own transaction, committed as it runs, and a refusal it finds
    after it (the statement matched nothing) wrote nothing. What it reads through SQLAlchemy (a
    refusal's look-up) is in a transaction of SQLAlchemy's own, ended here."""
    transaction = Transaction(connection)
    try:
        outcomes = _prepared(transaction, [job])
        transaction.finish()
    finally:
        transaction.close()
        if connection.in_transaction():
            connection.rollback()  # only read in: nothing to commit
    return outcomes


@contextlib.contextmanager
def _transaction(connection: Connection) -> Iterator[None]:
    """The batch's transaction: committed when the block ends, rolled back when it raises.

    On SQLite the writer's BEGIN IMMEDIATE (begin_write) opens it on sqlite3 itself, and sqlite3 commits
    it, without SQLAlchemy's transaction (its begin, commit and their events cost more than the
    statements of an action, which go to the driver too); a job that runs a statement through SQLAlchemy
    makes it begin its own in the same transaction, and SQLAlchemy's commit then ends both.
    """
    if connection.dialect.name != "sqlite":
        with connection.begin():
            yield
        return
    try:
        yield
        if connection.in_transaction():
            connection.commit()
        else:
            driver.commit(connection)
    except BaseException:
        try:
            driver.rollback(connection)  # a failed commit (a full disk) leaves sqlite3's transaction open
        except Exception:  # the batch's own error says more; nothing was committed either way
            logger.debug("the writer's rollback failed", exc_info=True)
        raise


def _lost_connection(error: BaseException) -> bool:
    """Tells whether an error means the connection itself was lost (SQLAlchemy invalidated it)."""
    return isinstance(error, DBAPIError) and error.connection_invalidated
