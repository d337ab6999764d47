"""The database store's hot path (issue 12): an action is one UPDATE of the small page row (which also
checks, inside the database, that the move_id is not logged yet) and one INSERT into the log — nothing
read first, no ORM unit of work — and the private state is checkpointed in `page_states` every few
versions, never in the page row. A move_id already in the log is answered with its first entry, and the
other writes committed beside it stand. On PostgreSQL the UPDATE and the INSERT are one statement
(test_postgres_write_path.py)."""

from __future__ import annotations

import json
import logging
import threading
import time
from collections.abc import Callable, Iterator
from concurrent.futures import Future
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest
from sqlalchemy import Engine, event, func, inspect, select, text
from sqlalchemy.orm import Session

from dotfight.store.database import Transaction, make_engine
from dotfight.store.migrations import upgrade_to_head
from dotfight.store.models import ActionRow, PageStateRow
from dotfight.store.records import Appended, Checkpoint, LogEntry, PageRecord, SeatRecord, VersionMoved
from dotfight.store.sql_pages import SqlPageStore
from dotfight.store.writer import BatchWriter
from tests.store import writer_trace

STATE = {"private": "state", "soldiers": list(range(50))}


@dataclass
class Stores:
    engine: Engine
    store: SqlPageStore
    others: list[SqlPageStore] = field(default_factory=list)

    @property
    def writer(self) -> BatchWriter:
        """The store's own writer (to keep it busy, or to break its connection)."""
        return writer_of(self.store)

    def fresh_store(self) -> SqlPageStore:
        """Another store on the same database (as after a restart: it remembers nothing)."""
        self.others.append(SqlPageStore(self.engine))
        return self.others[-1]

    def close(self) -> None:
        """Stops the stores' writers."""
        for store in (self.store, *self.others):
            store.close()


def writer_of(store: SqlPageStore) -> BatchWriter:
    """A store's own writer."""
    return store._writer


@pytest.fixture
def stores(tmp_path: Path) -> Iterator[Stores]:
    engine = make_engine(f"sqlite:///{tmp_path / 'pages.sqlite3'}")
    upgrade_to_head(engine)
    stores = Stores(engine, SqlPageStore(engine))
    yield stores
    stores.close()
    engine.dispose()


@pytest.fixture(params=["sqlite", "postgresql"])
def any_stores(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[Stores]:
    """The stores on SQLite and on PostgreSQL (whose driver reports an executemany's rows its own way)."""
    if request.param == "sqlite":
        url = f"sqlite:///{tmp_path / 'pages.sqlite3'}"
    else:
        url = request.getfixturevalue("postgres_url")
    engine = make_engine(url)
    upgrade_to_head(engine)
    stores = Stores(engine, SqlPageStore(engine))
    yield stores
    stores.close()
    engine.dispose()


def new_page(store: SqlPageStore, page_id: str) -> None:
    record = PageRecord(page_id, "live", "quick", {}, "0" * 32, "0" * 64, None, datetime.now(UTC))
    first = Checkpoint(0, "battle", "blue", None, "open", state=STATE)
    seats = [SeatRecord(f"{page_id}-blue".ljust(64, "0"), "blue", "seat")]
    store.create(record, first, seats).result(10)


def entry(version: int, move_id: str | None) -> LogEntry:
    side = "blue" if version % 2 else "red"
    return LogEntry(version, side, {"type": "flick", "n": version}, [{"type": "turn", "n": version}], move_id)


def checkpoint(version: int, every: int = 8) -> Checkpoint:
    side = "red" if version % 2 else "blue"
    state = {**STATE, "version": version} if version % every == 0 else None
    return Checkpoint(version, "battle", side, None, "open", state=state)


def append(store: SqlPageStore, page_id: str, version: int, move_id: str | None) -> Future[Appended]:
    return store.append(page_id, version - 1, entry(version, move_id), checkpoint(version))


def writer_statements(store: SqlPageStore) -> Callable[[], list[str]]:
    """Watches the SQL the store's writer (connected already) sends from now on, its values as `?`
    (PRAGMAs and the transaction's own left out): read from sqlite3's trace (writer_trace.py)."""
    return writer_trace.sqlite_traced(writer_of(store))


def test_an_action_is_an_update_and_an_insert_with_nothing_read_first(stores: Stores) -> None:
    new_page(stores.store, "p1")
    watched = writer_statements(stores.store)
    appended = append(stores.store, "p1", 1, "move-1").result(10)
    assert appended == Appended(entry(1, "move-1"))
    seen = watched()
    assert [statement.split()[0] for statement in seen] == ["UPDATE", "INSERT"]
    assert seen[0].startswith("UPDATE pages SET")
    assert "WHERE pages.id = ? AND pages.version = ? AND NOT (EXISTS (SELECT actions.id" in seen[0]
    assert seen[1].startswith("INSERT INTO actions")
    assert "state" not in seen[0].replace("status", "")  # the page row never carries the private state


def test_the_private_state_is_checkpointed_in_its_own_table_every_few_versions(stores: Stores) -> None:
    new_page(stores.store, "p1")
    assert "state_cache" not in {column["name"] for column in inspect(stores.engine).get_columns("pages")}
    for version in range(1, 8):
        append(stores.store, "p1", version, f"m{version}").result(10)
    with Session(stores.engine) as session:
        kept = session.get(PageStateRow, "p1")
        assert kept is not None and kept.version == 0  # from the page's creation
    watched = writer_statements(stores.store)
    append(stores.store, "p1", 8, "m8").result(10)
    seen = watched()
    assert [statement.split()[0] for statement in seen] == ["UPDATE", "INSERT", "UPDATE"]
    assert seen[2].startswith("UPDATE page_states SET")
    loaded = stores.fresh_store().load("p1")
    assert (loaded.version, loaded.checkpoint_version, loaded.entries) == (8, 8, ())
    assert loaded.checkpoint == {**STATE, "version": 8}


def test_a_page_without_a_checkpoint_row_gets_one_and_loads_from_its_log(stores: Stores) -> None:
    new_page(stores.store, "p1")
    with stores.engine.begin() as connection:
        connection.execute(text("DELETE FROM page_states"))
    for version in range(1, 4):
        append(stores.store, "p1", version, None).result(10)
    loaded = stores.store.load("p1")
    assert (loaded.checkpoint, loaded.checkpoint_version, len(loaded.entries)) == (None, 0, 3)
    append(stores.store, "p1", 4, None).result(10)
    assert stores.store.append("p1", 4, entry(5, None), checkpoint(5, every=5)).result(10).duplicate is False
    loaded = stores.store.load("p1")
    assert (loaded.checkpoint_version, loaded.entries) == (5, ())


def test_a_move_id_in_the_log_is_answered_with_its_first_entry(stores: Stores) -> None:
    new_page(stores.store, "p1")
    first = append(stores.store, "p1", 1, "again").result(10)
    fresh = stores.fresh_store()
    new_page(fresh, "other")  # its writer connected
    watched = writer_statements(fresh)
    answer = fresh.append("p1", 1, entry(2, "again"), checkpoint(2)).result(10)
    assert answer == Appended(first.entry, duplicate=True)
    seen = watched()
    # The UPDATE matched nothing (the move_id is logged), so the entry was read; nothing was written.
    assert [statement.split()[0] for statement in seen] == ["UPDATE", "SELECT"]
    with Session(stores.engine) as session:
        assert session.scalar(select(func.count()).select_from(ActionRow)) == 1
    assert stores.store.version("p1") == 1


def test_a_logged_move_id_in_a_batch_spoils_none_of_the_other_writes(stores: Stores) -> None:
    for page_id in ("a", "b", "c"):
        new_page(stores.store, page_id)
    first_b = append(stores.store, "b", 1, "b-move").result(10)
    forgetful = stores.fresh_store()
    release = threading.Event()

    def hold(transaction: Transaction) -> tuple[None, None]:
        release.wait(10)  # the writer is busy: the appends below queue up and commit as one batch
        return None, None

    held: Future[None] = Future()
    writer_of(forgetful).submit(hold, held, "")
    answers = [
        append(forgetful, "a", 1, "a-move"),
        forgetful.append("b", 1, entry(2, "b-move"), checkpoint(2)),  # logged before: a duplicate
        append(forgetful, "c", 1, "c-move"),
    ]
    release.set()
    a, b, c = (answer.result(10) for answer in answers)
    assert a == Appended(entry(1, "a-move")) and c == Appended(entry(1, "c-move"))
    assert b == Appended(first_b.entry, duplicate=True)
    assert [stores.store.version(page_id) for page_id in ("a", "b", "c")] == [1, 1, 1]


def writer_executions(stores: Stores) -> Callable[[], list[tuple[str, bool]]]:
    """Watches what the writer executes from now on: the function returned gives each statement's first
    word and whether it went as one executemany (PRAGMAs, BEGIN, COMMIT and PostgreSQL's SET of the lock
    timeout left out). The writer sends its statements straight to the driver: read from libpq's trace
    or sqlite3's (writer_trace.py)."""
    if stores.engine.dialect.name == "postgresql":
        trips = writer_trace.traced(stores.writer)
        return lambda: writer_trace.statements(trips())
    statements = writer_trace.sqlite_traced(stores.writer, transactions=True)
    return lambda: writer_trace.runs(statements())


def log_theirs(engine: Engine, page_id: str, version: int) -> None:
    """Logs `version` of the page as another writer would, without moving its row on (move_id "theirs")."""
    with engine.begin() as connection:
        connection.execute(
            text(
                "INSERT INTO actions (page_id, version, side, action, events, move_id, created_at)"
                " VALUES (:page, :version, 'blue', '{}', '[]', 'theirs', :at)"
            ),
            {"page": page_id, "version": version, "at": datetime.now(UTC)},
        )


def held_writer(stores: Stores) -> threading.Event:
    """Keeps the writer busy until the event is set: what is appended meanwhile commits as one batch."""
    release = threading.Event()

    def hold(transaction: Transaction) -> tuple[None, None]:
        release.wait(10)
        return None, None

    stores.writer.submit(hold, Future(), "")
    return release


def test_a_group_commits_appends_are_one_update_and_one_insert_for_all(any_stores: Stores) -> None:
    stores = any_stores
    pages = ["a", "b", "c", "d"]
    for page_id in pages:
        new_page(stores.store, page_id)
    release = held_writer(stores)
    seen = writer_executions(stores)
    answers = [append(stores.store, "a", 1, "a-1"), append(stores.store, "b", 1, None)]
    answers += [append(stores.store, "c", 1, "c-1"), append(stores.store, "d", 1, "d-1")]
    release.set()
    assert [answer.result(10) for answer in answers] == [
        Appended(entry(1, "a-1")),
        Appended(entry(1, None)),
        Appended(entry(1, "c-1")),
        Appended(entry(1, "d-1")),
    ]
    # SQLite: one UPDATE for all (executemany), one INSERT for all; PostgreSQL: the two as one statement
    # (a data-modifying CTE), one executemany for all.
    if stores.engine.dialect.name == "postgresql":
        assert seen() == [("WITH", True)]
    else:
        assert seen() == [("UPDATE", True), ("INSERT", True)]
    loaded = stores.fresh_store()
    assert [loaded.version(page_id) for page_id in pages] == [1, 1, 1, 1]
    assert [entry.move_id for page_id in pages for entry in loaded.log(page_id, 0)] == [
        "a-1",
        None,
        "c-1",
        "d-1",
    ]


def test_a_checkpoint_in_a_group_commit_is_written_beside_it(any_stores: Stores) -> None:
    stores = any_stores
    for page_id in ("a", "b"):
        new_page(stores.store, page_id)
    for version in range(1, 8):
        append(stores.store, "a", version, f"a-{version}").result(10)
    release = held_writer(stores)
    answers = [append(stores.store, "a", 8, "a-8"), append(stores.store, "b", 1, "b-1")]
    release.set()
    assert [answer.result(10).duplicate for answer in answers] == [False, False]
    loaded = stores.fresh_store().load("a")
    assert (loaded.version, loaded.checkpoint_version, loaded.checkpoint) == (8, 8, {**STATE, "version": 8})


def test_a_page_moved_on_in_a_group_commit_is_refused_alone(any_stores: Stores) -> None:
    """The executemany's UPDATE matches fewer rows than it has actions: rolled back, the batch is written
    action by action, the stale one is refused (VersionMoved) and the others commit."""
    stores = any_stores
    for page_id in ("a", "b", "c"):
        new_page(stores.store, page_id)
    append(stores.store, "b", 1, "b-1").result(10)
    release = held_writer(stores)
    seen = writer_executions(stores)
    answers = [
        append(stores.store, "a", 1, "a-1"),
        append(stores.store, "b", 1, "b-again"),  # written at version 0: the page is at 1
        append(stores.store, "c", 1, None),
    ]
    release.set()
    assert answers[0].result(10) == Appended(entry(1, "a-1"))
    with pytest.raises(VersionMoved):
        answers[1].result(10)
    assert answers[2].result(10) == Appended(entry(1, None))
    if stores.engine.dialect.name == "postgresql":
        # The group's one statement (rolled back), then a: moved and logged; b: matched nothing, SELECT
        # of its move_id (not logged); c: moved and logged.
        one_by_one = [("WITH", False), ("WITH", False), ("SELECT", False), ("WITH", False)]
        assert seen() == [("WITH", True), *one_by_one]
    else:
        executed = seen()
        assert executed[0] == ("UPDATE", True) and "INSERT" not in [word for word, many in executed if many]
        # a: UPDATE, INSERT; b: UPDATE (no row), SELECT of its move_id (not logged); c: UPDATE, INSERT.
        words = [word for word, _ in executed[1:]]
        assert words == ["UPDATE", "INSERT", "UPDATE", "SELECT", "UPDATE", "INSERT"]
    assert [stores.store.version(page_id) for page_id in ("a", "b", "c")] == [1, 1, 1]
    assert [entry.move_id for entry in stores.store.log("b", 0)] == ["b-1"]


def test_a_commit_on_the_writer_takes_no_connection_from_the_pool_and_rolls_nothing_back(
    stores: Stores,
) -> None:
    """At one action per commit the session, the pool's checkout and its reset-on-return rollback cost
    more than the action's statements: the writer keeps one connection and begins and commits on it."""
    new_page(stores.store, "p1")
    pool_events: list[str] = []

    def seen(name: str) -> Any:
        def record(*_: Any) -> None:
            if threading.current_thread().name == "dotfight-writer":
                pool_events.append(name)

        return record

    for name in ("checkout", "checkin", "reset"):
        event.listen(stores.engine, name, seen(name))
    rollbacks: list[str] = []
    event.listen(stores.engine, "rollback", lambda *_: rollbacks.append("rollback"))
    for version in range(1, 6):
        append(stores.store, "p1", version, f"m{version}").result(10)
    assert pool_events == []
    assert rollbacks == []
    loaded = stores.fresh_store().load("p1")
    assert [logged.move_id for logged in loaded.entries] == ["m1", "m2", "m3", "m4", "m5"]


def test_a_broken_writer_connection_is_replaced_at_the_next_commit(stores: Stores) -> None:
    new_page(stores.store, "p1")
    append(stores.store, "p1", 1, "m1").result(10)
    writer_connection = stores.writer._connection  # idle between commits
    assert writer_connection is not None
    writer_connection.invalidate()
    assert append(stores.store, "p1", 2, "m2").result(10) == Appended(entry(2, "m2"))
    assert stores.writer._connection is not writer_connection
    assert [logged.version for logged in stores.fresh_store().load("p1").entries] == [1, 2]


def writer_backend_pid(writer: BatchWriter) -> int:
    """The PostgreSQL backend of the writer's connection (connected already)."""
    assert writer._connection is not None
    driver: Any = writer._connection.connection.dbapi_connection
    pid: int = driver.info.backend_pid
    return pid


def writer_backend_alive(engine: Engine, pid: int) -> bool:
    with engine.connect() as connection:
        query = text("SELECT count(*) FROM pg_stat_activity WHERE pid = :pid")
        return bool(connection.execute(query, {"pid": pid}).scalar())


def test_a_writer_connection_the_database_dropped_is_replaced_and_the_write_goes_through(
    postgres_url: str, caplog: pytest.LogCaptureFixture
) -> None:
    """The database restarted (or dropped the connection) between two commits: the batch that finds
    out before its commit was sent wrote nothing, and is written again on a new connection."""
    engine = make_engine(postgres_url)
    upgrade_to_head(engine)
    stores = Stores(engine, SqlPageStore(engine))
    try:
        new_page(stores.store, "p1")
        append(stores.store, "p1", 1, "m1").result(10)
        writer_pid = writer_backend_pid(stores.writer)
        with engine.connect() as connection:
            dropped = connection.execute(
                text(
                    "SELECT count(pg_terminate_backend(pid)) FROM pg_stat_activity"
                    " WHERE datname = current_database() AND pid <> pg_backend_pid()"
                )
            ).scalar()
        assert dropped and dropped >= 1
        # Gone before the next batch (pg_terminate_backend only signals): an action is one statement in
        # autocommit, so a connection lost while it is sent is not written again (it may have
        # committed); one found gone before anything is sent is.
        gone_by = time.monotonic() + 10
        while writer_backend_alive(engine, writer_pid) and time.monotonic() < gone_by:
            time.sleep(0.01)
        with caplog.at_level(logging.INFO, logger="dotfight.store.writer"):
            assert append(stores.store, "p1", 2, "m2").result(10) == Appended(entry(2, "m2"))
        assert "the writer's connection was lost" in caplog.text  # found out by the batch, not before
        assert [logged.version for logged in stores.fresh_store().load("p1").entries] == [1, 2]
    finally:
        stores.close()
        engine.dispose()


def test_the_prepared_statements_store_exactly_what_sqlalchemy_core_would(any_stores: Stores) -> None:
    """The hot path binds its parameters through the columns' own processors (JSON text, the database's
    time format), so a logged row is the same, byte for byte, as SQLAlchemy's own INSERT writes."""
    stores = any_stores
    new_page(stores.store, "p1")
    new_page(stores.store, "p2")
    append(stores.store, "p1", 1, "m1").result(10)
    logged = entry(1, "m1")
    with stores.engine.begin() as connection:
        at = connection.execute(select(ActionRow.created_at).where(ActionRow.page_id == "p1")).scalar_one()
        connection.execute(
            ActionRow.__table__.insert(),  # type: ignore[attr-defined]
            {
                "page_id": "p2",
                "version": 1,
                "side": logged.side,
                "action": logged.action,
                "events": logged.events,
                "move_id": "m1",
                "created_at": at,
            },
        )
        raw = connection.exec_driver_sql(
            "SELECT page_id, CAST(action AS TEXT), CAST(events AS TEXT), CAST(created_at AS TEXT)"
            " FROM actions"
        ).all()
    rows = {row[0]: row[1:] for row in raw}
    assert rows["p1"] == rows["p2"]
    assert json.loads(rows["p1"][0]) == logged.action


def test_the_logs_json_is_stored_compact_and_what_orjson_refuses_is_stored_too(any_stores: Stores) -> None:
    """The writer serialises the log's JSON columns with orjson (compact text, a tenth of stdlib json's
    time); an integer beyond 64 bits, which orjson refuses, still goes in by stdlib json, unchanged."""
    stores = any_stores
    new_page(stores.store, "p1")
    plain = LogEntry(1, "blue", {"type": "flick", "at": [0.5, 1]}, [{"type": "turn", "n": 1}], "m1")
    huge = LogEntry(2, "red", {"type": "flick", "n": 2**70}, [{"type": "turn", "n": 2}], "m2")
    assert stores.store.append("p1", 0, plain, checkpoint(1)).result(10) == Appended(plain)
    assert stores.store.append("p1", 1, huge, checkpoint(2)).result(10) == Appended(huge)
    cast = "CAST(action AS TEXT)" if stores.engine.dialect.name == "sqlite" else "action::text"
    with stores.engine.connect() as connection:
        stored = connection.exec_driver_sql(f"SELECT {cast} FROM actions ORDER BY version").scalars().all()
    assert stored == ['{"type":"flick","at":[0.5,1]}', '{"type":"flick","n":1180591620717411303424}']
    loaded = stores.fresh_store().load("p1")
    assert [logged.action for logged in loaded.entries] == [plain.action, huge.action]


def test_the_logs_unique_version_refuses_on_the_drivers_cursor_as_through_sqlalchemy(stores: Stores) -> None:
    """Another writer logged version 1 without moving the page row: the UPDATE matches, the INSERT breaks
    the log's unique (page, version) on sqlite3's own cursor, and the error comes back as SQLAlchemy
    raises it (IntegrityError), so the store refuses it as a version moved and nothing is written."""
    new_page(stores.store, "p1")
    log_theirs(stores.engine, "p1", 1)
    with pytest.raises(VersionMoved):
        append(stores.store, "p1", 1, "mine").result(10)
    assert stores.fresh_store().version("p1") == 0
    assert [logged.move_id for logged in stores.store.log("p1", 0)] == ["theirs"]
