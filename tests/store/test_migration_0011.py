"""Migration 0011 (issue 22): the expiry sweeper's index is on `setup_moved_at`, a column a move in play
leaves as it was, instead of `updated_at`, which every move changes — so on PostgreSQL a page row's
UPDATE in play is a HOT one (no new entry in any index of `pages`, no dead row for vacuum), where at
0010 none was. From 0010 on SQLite and PostgreSQL: the column is filled for the pages in setup, the
sweeper's query reads the new index (each database's own plan), the sweep after the upgrade expires what
it did before, the store keeps the column as pages are made and moved, and the downgrade gives 0010's
index back."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from typing import Any

from sqlalchemy import Connection, Engine, event, select, text
from sqlalchemy.orm import Session

from dotfight.store import appends, expiry
from dotfight.store.migrations import upgrade_to_head
from dotfight.store.models import PageRow
from dotfight.store.people import as_utc
from dotfight.store.records import Checkpoint, LogEntry, PageRecord, SeatRecord
from dotfight.store.sql_pages import SqlPageStore
from tests.store.test_migration_0007 import T0, engine, migrate, revision_of
from tests.store.test_migration_0010 import PAGE, page_indexes

__all__ = ["engine"]  # the fixture, used by name

PREVIOUS = "0010_setup_pages_index"
OLD_INDEX, NEW_INDEX = "ix_pages_setup_updated_at", "ix_pages_setup_moved_at"
PAGES = (
    ("idle_setup", "open", "bases", T0 - timedelta(days=1)),
    ("idle_placing", "open", "positioning", T0 - timedelta(days=1)),
    ("fresh_setup", "open", "bases", T0 + timedelta(hours=1)),
    ("playing", "open", "battle", T0 - timedelta(days=1)),
    ("over_in_setup", "over", "bases", T0 - timedelta(days=1)),
)
MOVES = 5


def add_pages(engine: Engine) -> None:
    with engine.begin() as connection:
        for page_id, status, phase, at in PAGES:
            parameters = {"id": page_id, "seed": "0" * 32, "sha": "0" * 64, "at": at}
            connection.execute(text(PAGE), {**parameters, "status": status, "phase": phase})


def sweeper_plan(engine: Engine) -> str:
    """The database's plan of the query the sweeper sends, as it sends it (its SQL and parameters caught
    on their way to the driver; PostgreSQL told to avoid a scan of the whole table, which it would prefer
    on a table this small)."""
    sent: list[tuple[str, Any]] = []

    def catch(_conn: Any, _cursor: Any, statement: str, parameters: Any, *_: Any) -> None:
        if statement.startswith("SELECT") and not sent:
            sent.append((statement, parameters))

    event.listen(engine, "before_cursor_execute", catch)
    try:
        with Session(engine) as session:
            expiry.expire_idle_setup_pages(session, T0 - timedelta(days=30))  # finds none: writes nothing
    finally:
        event.remove(engine, "before_cursor_execute", catch)
    [(statement, parameters)] = sent
    with engine.connect() as connection:
        if engine.dialect.name == "sqlite":
            rows = connection.exec_driver_sql(f"EXPLAIN QUERY PLAN {statement}", parameters).all()
            return " ".join(str(row[-1]) for row in rows)
        connection.exec_driver_sql("SET enable_seqscan = off")
        rows = connection.exec_driver_sql(f"EXPLAIN {statement}", parameters).all()
        return " ".join(str(row[0]) for row in rows)


def update_counters(connection: Connection) -> tuple[int, int]:
    """The page-row updates this backend counted and has not reported yet, and how many of those were
    HOT (PostgreSQL's own counters: exact, kept until the backend reports them at some idle moment after
    a commit, so two reads inside one transaction differ by exactly that transaction's updates)."""
    counted = connection.execute(
        text(
            "SELECT pg_stat_get_xact_tuples_updated(CAST('pages' AS regclass)),"
            " pg_stat_get_xact_tuples_hot_updated(CAST('pages' AS regclass))"
        )
    ).one()
    return int(counted[0]), int(counted[1])


def updates_since(connection: Connection, before: tuple[int, int]) -> tuple[int, int]:
    """The page-row updates, and the HOT ones among them, counted since `before` (`update_counters`)."""
    updated, hot = update_counters(connection)
    return updated - before[0], hot - before[1]


def move_as_an_action_does(connection: Connection, version: int) -> bool:
    """Moves the page in play on by one version with the statement an action writes (appends.move_on)."""
    summary = {"version": version, "phase": "battle", "side_to_act": "red", "winner": None, "status": "open"}
    entry = {"version": version, "side": "blue", "action": {"n": version}, "events": [], "move_id": None}
    return appends.move_on(connection, ("playing", version - 1, summary, entry), T0 + timedelta(days=2))


def test_the_sweepers_index_moves_onto_setup_moved_at_and_sweeps_as_before(engine: Engine) -> None:
    migrate(engine, PREVIOUS)
    add_pages(engine)
    postgres = engine.dialect.name == "postgresql"
    if postgres:  # the defect: at 0010 `updated_at` is an indexed column, so no move is a HOT update
        with engine.begin() as connection:
            before = update_counters(connection)
            for version in range(1, MOVES + 1):
                connection.execute(
                    text("UPDATE pages SET version = :version, updated_at = :at WHERE id = 'playing'"),
                    {"version": version, "at": T0 + timedelta(days=2, seconds=version)},
                )
            assert updates_since(connection, before) == (MOVES, 0)
        with engine.begin() as connection:
            connection.execute(text("UPDATE pages SET version = 0 WHERE id = 'playing'"))
    upgrade_to_head(engine)
    assert revision_of(engine) >= "0011"
    assert NEW_INDEX in page_indexes(engine) and OLD_INDEX not in page_indexes(engine)
    with engine.connect() as connection:
        kept = dict(connection.execute(text("SELECT id, setup_moved_at FROM pages")).all())
    filled = {page_id for page_id, at in kept.items() if at is not None}
    assert filled == {"idle_setup", "idle_placing", "fresh_setup"}  # open and in setup, as 0010's WHERE
    assert NEW_INDEX in sweeper_plan(engine)
    if postgres:  # the fix: the action's own statement, each move in play a HOT update
        with engine.begin() as connection:
            before = update_counters(connection)
            for version in range(1, MOVES + 1):
                assert move_as_an_action_does(connection, version)
            assert updates_since(connection, before) == (MOVES, MOVES)
    with Session(engine) as session, session.begin():
        expired = expiry.expire_idle_setup_pages(session, T0)
    assert sorted(expired) == ["idle_placing", "idle_setup"]
    with engine.connect() as connection:
        left = connection.execute(text("SELECT id FROM pages ORDER BY id")).scalars().all()
    assert left == ["fresh_setup", "over_in_setup", "playing"]
    migrate(engine, PREVIOUS, down=True)
    assert revision_of(engine) == PREVIOUS
    assert OLD_INDEX in page_indexes(engine) and NEW_INDEX not in page_indexes(engine)
    with engine.connect() as connection:
        columns = connection.execute(text("SELECT * FROM pages")).keys()
    assert "setup_moved_at" not in columns


def test_the_store_keeps_setup_moved_at_while_a_page_is_in_setup_and_clears_it_after(engine: Engine) -> None:
    upgrade_to_head(engine)
    store = SqlPageStore(engine)
    try:
        made = datetime.now(UTC)
        record = PageRecord("p1", "live", "quick", {}, "0" * 32, "0" * 64, None, made)
        seats = [SeatRecord("p1-blue".ljust(64, "0"), "blue", "seat")]
        store.create(record, Checkpoint(0, "bases", "blue", None, "open", state={"s": 0}), seats).result(10)

        def setup_moved_at() -> datetime | None:
            with engine.connect() as connection:
                at = connection.execute(select(PageRow.setup_moved_at).where(PageRow.id == "p1")).scalar_one()
            return None if at is None else as_utc(at)

        created = setup_moved_at()
        assert created is not None and made <= created
        moves = (("positioning", "red"), ("battle", "blue"), ("battle", "red"))
        kept = []
        for version, (phase, side) in enumerate(moves, start=1):
            entry = LogEntry(version, "blue" if side == "red" else "red", {"n": version}, [], None)
            store.append("p1", version - 1, entry, Checkpoint(version, phase, side, None, "open")).result(10)
            kept.append(setup_moved_at())
        placed, *in_play = kept
        assert placed is not None and placed >= created  # a move in setup: the sweeper's clock restarts
        assert in_play == [None, None]  # past setup: out of the sweeper's index
        with Session(engine) as session, session.begin():
            assert expiry.expire_idle_setup_pages(session, datetime.now(UTC) + timedelta(days=1)) == []
    finally:
        store.close()
