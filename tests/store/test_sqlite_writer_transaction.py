"""The writer's SQLite transaction is sqlite3's own (writer._transaction): BEGIN IMMEDIATE and the commit
go to the driver, not through SQLAlchemy's transaction, on the hot path. What callers rely on is kept:
a job that writes through SQLAlchemy (an ORM session, a Core statement) is committed with the batch and
never on its own, a failed commit is rolled back and raised as SQLAlchemy raises it, and nothing of a
batch that failed is written."""

from __future__ import annotations

import threading
from collections.abc import Iterator
from concurrent.futures import Future
from pathlib import Path
from typing import Any

import pytest
from sqlalchemy import Engine, event, text
from sqlalchemy.exc import IntegrityError

from dotfight.store import driver
from dotfight.store.database import Transaction, make_engine
from dotfight.store.writer import AfterCommit, BatchWriter


@pytest.fixture
def engine(tmp_path: Path) -> Iterator[Engine]:
    engine = make_engine(f"sqlite:///{tmp_path / 'writer.sqlite3'}")
    with engine.begin() as connection:
        connection.exec_driver_sql("CREATE TABLE things (name TEXT PRIMARY KEY)")
        connection.exec_driver_sql(
            "CREATE TABLE tags (name TEXT REFERENCES things (name) DEFERRABLE INITIALLY DEFERRED)"
        )
    yield engine
    engine.dispose()


def names(engine: Engine) -> list[str]:
    with engine.connect() as connection:
        return [row[0] for row in connection.exec_driver_sql("SELECT name FROM things ORDER BY name")]


def on_driver(name: str) -> Any:
    def job(transaction: Transaction) -> tuple[str, AfterCommit]:
        driver.rows_written(transaction.connection, "INSERT INTO things (name) VALUES (?)", (name,))
        return name, None

    return job


def through_session(name: str) -> Any:
    def job(transaction: Transaction) -> tuple[str, AfterCommit]:
        transaction.session.execute(text("INSERT INTO things (name) VALUES (:name)"), {"name": name})
        return name, None

    return job


def held(writer: BatchWriter) -> threading.Event:
    """Keeps the writer busy until the event returned is set: the jobs submitted meanwhile are one batch."""
    started, release = threading.Event(), threading.Event()

    def wait(_: Transaction) -> tuple[None, AfterCommit]:
        started.set()
        release.wait(10)
        return None, None

    writer.submit(wait, Future())
    assert started.wait(10)
    return release


def test_the_hot_paths_commit_goes_to_sqlite3_without_sqlalchemys_transaction(engine: Engine) -> None:
    events: list[str] = []
    for name in ("begin", "commit", "rollback"):
        event.listen(engine, name, lambda *_, name=name: events.append(name))
    writer = BatchWriter(engine)
    try:
        answers: list[Future[str]] = [Future() for _ in range(3)]
        for n, answer in enumerate(answers):
            writer.submit(on_driver(f"d{n}"), answer)
        assert [answer.result(10) for answer in answers] == ["d0", "d1", "d2"]
    finally:
        writer.close()
    assert events == []
    assert names(engine) == ["d0", "d1", "d2"]  # committed: another connection reads them


def test_a_session_job_in_a_batch_commits_with_the_batch_and_not_before(engine: Engine) -> None:
    writer = BatchWriter(engine)
    try:
        release = held(writer)
        first, second, third = Future[str](), Future[str](), Future[str]()
        writer.submit(through_session("s1"), first, "a")
        writer.submit(on_driver("d1"), second, "b")

        def fails(_: Transaction) -> tuple[None, AfterCommit]:
            # Had the session committed its own transaction, s1 and d1 would be on disk by now.
            seen.append(names(engine))
            raise RuntimeError("this job breaks")

        seen: list[list[str]] = []
        writer.submit(fails, third, "c")
        release.set()
        # The batch failed and was rolled back, then each job was written alone.
        assert first.result(10) == "s1" and second.result(10) == "d1"
        with pytest.raises(RuntimeError):
            third.result(10)
    finally:
        writer.close()
    assert seen == [[], ["d1", "s1"]]  # in the batch: nothing on disk; alone, after the other two
    assert names(engine) == ["d1", "s1"]


def test_a_failed_commit_is_rolled_back_and_raised_as_sqlalchemy_raises_it(engine: Engine) -> None:
    """A deferred foreign key is checked at COMMIT: sqlite3's commit fails, the writer rolls back (the
    connection takes the next batch) and the job hears IntegrityError, not sqlite3's own error."""

    def orphan(transaction: Transaction) -> tuple[None, AfterCommit]:
        driver.rows_written(transaction.connection, "INSERT INTO tags (name) VALUES (?)", ("nobody",))
        return None, None

    writer = BatchWriter(engine)
    try:
        refused: Future[None] = Future()
        writer.submit(orphan, refused)
        with pytest.raises(IntegrityError):
            refused.result(10)
        after: Future[str] = Future()
        writer.submit(on_driver("d1"), after)
        assert after.result(10) == "d1"
    finally:
        writer.close()
    assert names(engine) == ["d1"]
    with engine.connect() as connection:
        assert connection.exec_driver_sql("SELECT count(*) FROM tags").scalar() == 0
