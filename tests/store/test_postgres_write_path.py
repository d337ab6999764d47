"""PostgreSQL's write path (issue 22 item 3): an action is one statement, the conditional UPDATE and the
log's INSERT in one data-modifying CTE, and every promise of the two statements holds — a move_id
already logged is answered with its first entry and writes nothing, a stale version is refused and
writes nothing, the log's unique constraints still refuse (the page row's UPDATE undone with them), a
group commit's refused write leaves the others, and the NOTIFY is sent only for what committed."""

from __future__ import annotations

import threading
from collections.abc import Iterator
from concurrent.futures import Future
from datetime import datetime
from typing import Any

import psycopg
import pytest
from sqlalchemy import Engine, event, text
from sqlalchemy.exc import IntegrityError

from dotfight.store.database import Transaction, make_engine
from dotfight.store.migrations import upgrade_to_head
from dotfight.store.models import PageStateRow
from dotfight.store.records import Appended, VersionMoved
from dotfight.store.sql_pages import SqlPageStore
from tests.store.test_sql_hot_path import Stores, append, checkpoint, entry, held_writer, new_page

CHANNEL = "dotfight_write_path_test"


def notify_on_commit(transaction: Transaction, page_id: str, version: int) -> None:
    """The store's in-transaction hook as the server's (broadcast.notify_in_transaction): a NOTIFY
    gathered into the action's transaction, sent just before its commit."""
    transaction.gathered(send_notifies).append(f"{page_id} {version}")


def send_notifies(connection: Any, payloads: list[str]) -> None:
    for payload in payloads:
        connection.exec_driver_sql(
            "SELECT pg_notify(%(channel)s, %(payload)s)", {"channel": CHANNEL, "payload": payload}
        )


@pytest.fixture
def pg(postgres_url: str) -> Iterator[Stores]:
    engine = make_engine(postgres_url)
    upgrade_to_head(engine)
    stores = Stores(engine, SqlPageStore(engine, in_transaction=notify_on_commit))
    yield stores
    stores.close()
    engine.dispose()


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


def writer_sql(engine: Engine) -> list[tuple[str, bool]]:
    """Collects each statement the writer thread sends from now on (its first word, and whether it went
    as one executemany), the lock timeout's SET left out."""
    seen: list[tuple[str, bool]] = []

    def record(_conn: Any, _cursor: Any, statement: str, _parameters: Any, _context: Any, many: bool) -> None:
        if threading.current_thread().name == "dotfight-writer" and not statement.startswith("SET"):
            seen.append((statement.split()[0], many))

    event.listen(engine, "before_cursor_execute", record)
    return seen


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


def test_an_action_is_one_statement_then_its_notify(pg: Stores, listener: psycopg.Connection[Any]) -> None:
    new_page(pg.store, "p1")
    seen = writer_sql(pg.engine)
    assert append(pg.store, "p1", 1, "m1").result(10) == Appended(entry(1, "m1"))
    assert seen == [("WITH", False), ("SELECT", False)]  # the move and its log row; the NOTIFY
    assert append(pg.store, "p1", 2, None).result(10) == Appended(entry(2, None))
    assert page_row(pg.engine, "p1")[0] == 2
    assert logged(pg.engine, "p1") == [(1, "m1"), (2, None)]
    assert heard(listener) == ["p1 1", "p1 2"]


def test_a_logged_move_id_is_answered_with_its_first_entry_and_writes_nothing(
    pg: Stores, listener: psycopg.Connection[Any]
) -> None:
    new_page(pg.store, "p1")
    first = append(pg.store, "p1", 1, "again").result(10)
    before = page_row(pg.engine, "p1")
    assert heard(listener) == ["p1 1"]
    seen = writer_sql(pg.engine)
    answer = pg.fresh_store().append("p1", 1, entry(2, "again"), checkpoint(2)).result(10)
    assert answer == Appended(first.entry, duplicate=True)
    assert [word for word, _ in seen] == ["WITH", "SELECT"]  # matched nothing, so the entry was read
    assert page_row(pg.engine, "p1") == before
    assert logged(pg.engine, "p1") == [(1, "again")]
    assert heard(listener) == []


def test_a_stale_version_is_refused_and_writes_nothing(pg: Stores, listener: psycopg.Connection[Any]) -> None:
    new_page(pg.store, "p1")
    append(pg.store, "p1", 1, "m1").result(10)
    before = page_row(pg.engine, "p1")
    assert heard(listener) == ["p1 1"]
    seen = writer_sql(pg.engine)
    with pytest.raises(VersionMoved):
        pg.fresh_store().append("p1", 0, entry(1, "m-late"), checkpoint(1)).result(10)
    # Refused by the version check (matched nothing, then its move_id looked up: not logged), not left
    # to the log's unique constraint.
    assert [word for word, _ in seen] == ["WITH", "SELECT"]
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
    with pg.engine.begin() as connection:
        connection.execute(
            text(
                "INSERT INTO actions (page_id, version, side, action, events, move_id, created_at)"
                " VALUES ('p1', 1, 'blue', '{}', '[]', 'theirs', now())"
            )
        )
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
    seen = writer_sql(pg.engine)
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
    assert seen[0] == ("WITH", True)
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
        # flushes, just before the commit (after the gathered NOTIFYs went out).
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
