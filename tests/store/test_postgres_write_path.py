"""PostgreSQL's write path (issue 22 item 3): an action is one statement, the conditional UPDATE and the
log's INSERT in one data-modifying CTE, and every promise of the two statements holds — a move_id
already logged is answered with its first entry and writes nothing, a stale version is refused and
writes nothing, the log's unique constraints still refuse (the page row's UPDATE undone with them), a
group commit's refused write leaves the others, and the NOTIFY is sent only for what committed. Since
the fourth round the NOTIFY is in the same statement and the BEGIN goes with it (one round trip before
the commit's), straight on psycopg: watched through libpq's trace (writer_trace.py)."""

from __future__ import annotations

from collections.abc import Iterator
from concurrent.futures import Future
from datetime import datetime
from typing import Any
from unittest import mock

import psycopg
import pytest
from sqlalchemy import Engine, text
from sqlalchemy.exc import IntegrityError

from dotfight.store.database import Transaction, make_engine
from dotfight.store.migrations import upgrade_to_head
from dotfight.store.models import PageStateRow
from dotfight.store.records import Appended, VersionMoved
from dotfight.store.sql_pages import SqlPageStore
from tests.store.test_sql_hot_path import (
    Stores,
    append,
    checkpoint,
    entry,
    held_writer,
    log_theirs,
    new_page,
    writer_of,
)
from tests.store.writer_trace import statements, traced

CHANNEL = "dotfight_write_path_test"


def notify_on_commit(page_id: str, version: int) -> tuple[str, str, str | None]:
    """The store's NOTIFY of an action as the server's (broadcast.notify_in_transaction), on the test's
    channel, sent whoever follows the page."""
    return CHANNEL, f"{page_id} {version}", None


@pytest.fixture
def pg(postgres_url: str) -> Iterator[Stores]:
    engine = make_engine(postgres_url)
    upgrade_to_head(engine)
    stores = Stores(engine, SqlPageStore(engine, notify=notify_on_commit))
    yield stores
    stores.close()
    engine.dispose()


def fresh_notifying(stores: Stores) -> SqlPageStore:
    """Another store on the same database that NOTIFYs as the first (as another process's)."""
    stores.others.append(SqlPageStore(stores.engine, notify=notify_on_commit))
    return stores.others[-1]


@pytest.fixture
def listener(postgres_url: str) -> Iterator[psycopg.Connection[Any]]:
    """A LISTEN connection on the test's channel (the notices heard are read with `heard`)."""
    url = postgres_url.replace("postgresql+psycopg://", "postgresql://")
    with psycopg.connect(url, autocommit=True) as connection:
        connection.execute(f"LISTEN {CHANNEL}")
        yield connection


def heard(connection: psycopg.Connection[Any]) -> list[str]:
    """The payloads delivered so far (a trivial query lets the connection read what arrived)."""
    connection.execute("SELECT 1")
    return [notice.payload for notice in connection.notifies(timeout=0.2)]


def page_row(engine: Engine, page_id: str) -> tuple[int, datetime]:
    with engine.connect() as connection:
        version, updated_at = connection.execute(
            text("SELECT version, updated_at FROM pages WHERE id = :id"), {"id": page_id}
        ).one()
    return version, updated_at


def logged(engine: Engine, page_id: str) -> list[tuple[int, str | None]]:
    with engine.connect() as connection:
        rows = connection.execute(
            text("SELECT version, move_id FROM actions WHERE page_id = :id ORDER BY version"), {"id": page_id}
        ).all()
    return [(version, move_id) for version, move_id in rows]


def test_an_action_alone_is_one_round_trip_its_statement_its_own_transaction(
    pg: Stores, listener: psycopg.Connection[Any]
) -> None:
    """An action with no checkpoint, in a batch of its own, is its one statement in autocommit: no BEGIN,
    no COMMIT; it moves the page row on, logs the move and NOTIFYs it, committed as it runs."""
    new_page(pg.store, "p1")
    trips = traced(pg.writer)
    assert append(pg.store, "p1", 1, "m1").result(10) == Appended(entry(1, "m1"))
    assert trips() == [[("WITH", 1)]]
    assert append(pg.store, "p1", 2, None).result(10) == Appended(entry(2, None))
    assert page_row(pg.engine, "p1")[0] == 2
    assert logged(pg.engine, "p1") == [(1, "m1"), (2, None)]
    assert heard(listener) == ["p1 1", "p1 2"]


def test_an_action_with_its_checkpoint_is_one_transaction_its_begin_sent_with_the_statement(
    pg: Stores, listener: psycopg.Connection[Any]
) -> None:
    """The checkpoint's own statement must commit with the action or not at all: BEGIN in one pipeline
    with the action's statement, the checkpoint, then the COMMIT."""
    new_page(pg.store, "p1")
    for version in range(1, 8):
        append(pg.store, "p1", version, f"m{version}").result(10)
    heard(listener)
    trips = traced(pg.writer)
    assert append(pg.store, "p1", 8, "m8").result(10) == Appended(entry(8, "m8"))  # checkpointed
    assert [[word for word, _ in trip] for trip in trips()] == [["BEGIN", "WITH"], ["UPDATE"], ["COMMIT"]]
    with pg.engine.connect() as connection:
        saved = connection.execute(text("SELECT version FROM page_states WHERE page_id = 'p1'")).scalar()
    assert saved == 8
    assert heard(listener) == ["p1 8"]


def test_an_action_alone_refused_by_the_log_writes_nothing_and_the_writer_goes_on(
    pg: Stores, listener: psycopg.Connection[Any]
) -> None:
    """In autocommit the statement is its own transaction: the log's unique constraint undoes its page
    row's UPDATE with it (nothing NOTIFYed), and the writer's next action, on the same connection, is in
    no transaction left open."""
    new_page(pg.store, "p1")
    new_page(pg.store, "p2")
    log_theirs(pg.engine, "p1", 1)
    trips = traced(pg.writer)
    with pytest.raises(VersionMoved):
        append(pg.store, "p1", 1, "mine").result(10)
    assert append(pg.store, "p2", 1, "m1").result(10) == Appended(entry(1, "m1"))
    assert trips() == [[("WITH", 1)], [("WITH", 1)]]
    assert page_row(pg.engine, "p1")[0] == 0
    assert logged(pg.engine, "p1") == [(1, "theirs")]
    assert heard(listener) == ["p2 1"]
    driver: Any = pg.writer._connection.connection.dbapi_connection  # type: ignore[union-attr]
    assert driver.info.transaction_status == psycopg.pq.TransactionStatus.IDLE


def test_an_action_alone_whose_connection_drops_while_it_is_sent_is_not_written_again(
    pg: Stores, listener: psycopg.Connection[Any]
) -> None:
    """Its statement is its own commit: once sent, a lost connection may have committed it, so the writer
    answers the database's trouble and does not write it again (a phone asks again with its move id,
    answered from the log); the next action goes through on a new connection."""
    new_page(pg.store, "p1")
    append(pg.store, "p1", 1, "m1").result(10)
    heard(listener)
    connection = pg.writer._connection
    assert connection is not None
    driver: Any = connection.connection.dbapi_connection
    real_execute = driver.cursor().__class__.execute
    sent: list[str] = []

    def execute_then_drop(cursor: Any, query: Any, *args: Any, **kwargs: Any) -> Any:
        real_execute(cursor, query, *args, **kwargs)
        sent.append(str(query)[:4])
        driver.pgconn.finish()  # the connection lost after the statement ran (and committed)
        raise psycopg.OperationalError("the connection was lost")

    with (
        mock.patch.object(type(driver.cursor()), "execute", execute_then_drop),
        pytest.raises(Exception) as raised,
    ):
        append(pg.store, "p1", 2, "m2").result(10)
    assert sent == ["WITH"]  # once, not again on a new connection
    assert not isinstance(raised.value, VersionMoved)
    assert logged(pg.engine, "p1") == [(1, "m1"), (2, "m2")]  # it did commit
    assert append(pg.store, "p1", 3, "m3").result(10) == Appended(entry(3, "m3"))
    assert heard(listener) == ["p1 2", "p1 3"]


def test_a_logged_move_id_is_answered_with_its_first_entry_and_writes_nothing(
    pg: Stores, listener: psycopg.Connection[Any]
) -> None:
    new_page(pg.store, "p1")
    first = append(pg.store, "p1", 1, "again").result(10)
    before = page_row(pg.engine, "p1")
    assert heard(listener) == ["p1 1"]
    fresh = fresh_notifying(pg)
    new_page(fresh, "other")  # the fresh store's writer connected
    trips = traced(writer_of(fresh))
    answer = fresh.append("p1", 1, entry(2, "again"), checkpoint(2)).result(10)
    assert answer == Appended(first.entry, duplicate=True)
    assert [word for word, _ in statements(trips())] == ["WITH", "SELECT"]  # matched nothing: read
    assert page_row(pg.engine, "p1") == before
    assert logged(pg.engine, "p1") == [(1, "again")]
    assert heard(listener) == []


def test_a_stale_version_is_refused_and_writes_nothing(pg: Stores, listener: psycopg.Connection[Any]) -> None:
    new_page(pg.store, "p1")
    append(pg.store, "p1", 1, "m1").result(10)
    before = page_row(pg.engine, "p1")
    assert heard(listener) == ["p1 1"]
    fresh = fresh_notifying(pg)
    new_page(fresh, "other")  # the fresh store's writer connected
    trips = traced(writer_of(fresh))
    with pytest.raises(VersionMoved):
        fresh.append("p1", 0, entry(1, "m-late"), checkpoint(1)).result(10)
    # Refused by the version check (matched nothing, then its move_id looked up: not logged), not left
    # to the log's unique constraint.
    assert [word for word, _ in statements(trips())] == ["WITH", "SELECT"]
    assert page_row(pg.engine, "p1") == before
    assert logged(pg.engine, "p1") == [(1, "m1")]
    assert heard(listener) == []


def test_the_logs_unique_version_still_refuses_and_undoes_the_page_rows_update(
    pg: Stores, listener: psycopg.Connection[Any]
) -> None:
    """Another writer logged version 1 without (yet) moving the page row: the statement's UPDATE matches,
    its INSERT breaks the log's unique (page, version): refused as a version moved, the whole statement
    undone (the page row still at 0)."""
    new_page(pg.store, "p1")
    log_theirs(pg.engine, "p1", 1)
    before = page_row(pg.engine, "p1")
    with pytest.raises(VersionMoved):
        append(pg.store, "p1", 1, "mine").result(10)
    assert page_row(pg.engine, "p1") == before and before[0] == 0
    assert logged(pg.engine, "p1") == [(1, "theirs")]
    assert heard(listener) == []


def test_a_refused_write_in_a_group_commit_leaves_the_others_and_only_theirs_are_notified(
    pg: Stores, listener: psycopg.Connection[Any]
) -> None:
    """The group's one statement (an executemany) counts fewer rows than it has actions: rolled back —
    with the rows it did write, and nothing notified — then written action by action: the stale one and
    the duplicate refused, the others committed, each notified once."""
    for page_id in ("a", "b", "c", "d"):
        new_page(pg.store, page_id)
    append(pg.store, "b", 1, "b-1").result(10)
    append(pg.store, "c", 1, "c-1").result(10)
    assert heard(listener) == ["b 1", "c 1"]
    release = held_writer(pg)
    trips = traced(pg.writer)
    answers = [
        append(pg.store, "a", 1, "a-1"),
        append(pg.store, "b", 1, "b-again"),  # written at version 0: the page is at 1
        pg.store.append("c", 1, entry(2, "c-1"), checkpoint(2)),  # c-1 is logged: a duplicate
        append(pg.store, "d", 1, None),
    ]
    release.set()
    assert answers[0].result(10) == Appended(entry(1, "a-1"))
    with pytest.raises(VersionMoved):
        answers[1].result(10)
    assert answers[2].result(10).duplicate is True
    assert answers[3].result(10) == Appended(entry(1, None))
    assert statements(trips())[0] == ("WITH", True)
    assert [page_row(pg.engine, page_id)[0] for page_id in ("a", "b", "c", "d")] == [1, 1, 1, 1]
    assert [logged(pg.engine, page_id) for page_id in ("a", "b", "c", "d")] == [
        [(1, "a-1")],
        [(1, "b-1")],
        [(1, "c-1")],
        [(1, None)],
    ]
    assert heard(listener) == ["a 1", "d 1"]


def test_a_batch_rolled_back_sends_no_notify_and_its_appends_commit_again_once(
    pg: Stores, listener: psycopg.Connection[Any]
) -> None:
    """A job of the batch fails at the commit's flush, after the appends beside it were written and
    their NOTIFYs sent in the transaction: the batch is rolled back (nothing of it heard), then each job
    runs alone: each append heard once."""
    for page_id in ("a", "b"):
        new_page(pg.store, page_id)
    release = held_writer(pg)
    answers = [append(pg.store, "a", 1, "a-1")]

    def broken(transaction: Transaction) -> tuple[None, None]:
        # The checkpoint of a page that does not exist: refused by its foreign key when the session
        # flushes, just before the commit (after the appends beside it were written and NOTIFYed).
        transaction.session.add(PageStateRow(page_id="no-such-page", version=0, state="{}"))
        return None, None

    failed: Future[None] = Future()
    pg.writer.submit(broken, failed, "a~")  # sorted after a's append, before b's
    answers.append(append(pg.store, "b", 1, "b-1"))
    release.set()
    assert [answer.result(10) for answer in answers] == [Appended(entry(1, "a-1")), Appended(entry(1, "b-1"))]
    with pytest.raises(IntegrityError):
        failed.result(10)
    assert heard(listener) == ["a 1", "b 1"]


def test_a_job_through_sqlalchemy_first_in_its_batch_is_inside_the_transaction(pg: Stores) -> None:
    """The writer's connection runs in the driver's autocommit mode, its BEGIN sent by the first
    statement: a statement through SQLAlchemy (an ORM job's) gets it too, so a job that fails after
    writing leaves nothing written."""
    new_page(pg.store, "p1")
    before = page_row(pg.engine, "p1")

    def fails_after_writing(transaction: Transaction) -> tuple[None, None]:
        transaction.session.execute(text("UPDATE pages SET version = 99 WHERE id = 'p1'"))
        raise RuntimeError("a bug in the job")

    failed: Future[None] = Future()
    pg.writer.submit(fails_after_writing, failed, "p1")
    with pytest.raises(RuntimeError):
        failed.result(10)
    assert page_row(pg.engine, "p1") == before
    assert append(pg.store, "p1", 1, "m1").result(10) == Appended(entry(1, "m1"))  # the writer goes on
