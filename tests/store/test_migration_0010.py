"""Migration 0010 (issue 22): the expiry sweeper's index holds only the pages it reads (open, in setup),
from the previous head on SQLite and PostgreSQL — the sweeper's query still reads it (each database's
own plan), the sweep after the upgrade expires what it did before, a page in play's moves write no entry
into it (PostgreSQL: the index does not grow, where 0002's grew with every move), and the downgrade
gives the old index back."""

from __future__ import annotations

from datetime import timedelta
from typing import Any

from sqlalchemy import Engine, event, inspect, text
from sqlalchemy.orm import Session

from dotfight.store import expiry
from dotfight.store.migrations import upgrade_to_head
from tests.store.test_migration_0007 import T0, engine, migrate, revision_of

__all__ = ["engine"]  # the fixture, used by name

PREVIOUS_HEAD = "0009_reminders_rematch_seats"
OLD_INDEX, NEW_INDEX = "ix_pages_phase_updated_at", "ix_pages_setup_updated_at"
PAGE = (
    "INSERT INTO pages (id, rules, preset, seed, seed_sha256, mode, status, phase, side_to_act, winner,"
    " version, bot, created_at, updated_at) VALUES (:id, '{}', 'quick', :seed, :sha, 'live', :status,"
    " :phase, 'blue', NULL, 0, NULL, :at, :at)"
)
# Enough moves to fill more than one index page of 8 KiB with the entries a full index gets.
MOVES = 1000


def page_indexes(engine: Engine) -> set[str]:
    return {index["name"] for index in inspect(engine).get_indexes("pages")}


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


def index_bytes(engine: Engine, name: str) -> int:
    with engine.connect() as connection:
        size = connection.execute(text("SELECT pg_relation_size(CAST(:name AS regclass))"), {"name": name})
        return int(size.scalar_one())


def move_many_times(engine: Engine, page_id: str) -> None:
    """Moves a page on as an action does (its version and `updated_at`), one commit a move."""
    for version in range(1, MOVES + 1):
        with engine.begin() as connection:
            connection.execute(
                text("UPDATE pages SET version = :version, updated_at = :at WHERE id = :id"),
                {"version": version, "at": T0 + timedelta(days=40, seconds=version), "id": page_id},
            )


def test_the_sweepers_index_holds_only_the_pages_in_setup(engine: Engine) -> None:
    migrate(engine, PREVIOUS_HEAD)
    with engine.begin() as connection:
        for page_id, status, phase in (
            ("idle_setup", "open", "bases"),
            ("idle_placing", "open", "positioning"),
            ("playing", "open", "battle"),
            ("over_in_setup", "over", "bases"),
        ):
            parameters = {"id": page_id, "seed": "0" * 32, "sha": "0" * 64, "at": T0 - timedelta(days=1)}
            connection.execute(text(PAGE), {**parameters, "status": status, "phase": phase})
    postgres = engine.dialect.name == "postgresql"
    if postgres:  # what 0002's index costs: every move of a page in play adds an entry
        before = index_bytes(engine, OLD_INDEX)
        move_many_times(engine, "playing")
        assert index_bytes(engine, OLD_INDEX) > before
    upgrade_to_head(engine)
    assert revision_of(engine) >= "0010"
    assert NEW_INDEX in page_indexes(engine) and OLD_INDEX not in page_indexes(engine)
    assert NEW_INDEX in sweeper_plan(engine)
    if postgres:
        before = index_bytes(engine, NEW_INDEX)
        move_many_times(engine, "playing")
        assert index_bytes(engine, NEW_INDEX) == before
    with Session(engine) as session, session.begin():
        expired = expiry.expire_idle_setup_pages(session, T0)
    assert sorted(expired) == ["idle_placing", "idle_setup"]
    with engine.connect() as connection:
        left = connection.execute(text("SELECT id FROM pages ORDER BY id")).scalars().all()
    assert left == ["over_in_setup", "playing"]
    migrate(engine, PREVIOUS_HEAD, down=True)
    assert revision_of(engine) == PREVIOUS_HEAD
    assert OLD_INDEX in page_indexes(engine) and NEW_INDEX not in page_indexes(engine)
