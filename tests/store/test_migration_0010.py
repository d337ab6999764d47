"""Migration 0010 (issue 22): the expiry sweeper's index holds only the pages it reads (open, in setup),
from the previous head on SQLite and PostgreSQL — a page in play's moves write no entry into it
(PostgreSQL: the index does not grow, where 0002's grew with every move), and the downgrade gives the
old index back. (0011 moved the index onto a column of its own: test_migration_0011.py, where the
sweeper's plan and the sweep after an upgrade are checked against the head.)"""

from __future__ import annotations

from datetime import timedelta

from sqlalchemy import Engine, inspect, text

from tests.store.test_migration_0007 import T0, engine, migrate, revision_of

__all__ = ["engine"]  # the fixture, used by name

PREVIOUS_HEAD = "0009_reminders_rematch_seats"
REVISION = "0010_setup_pages_index"
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
    migrate(engine, REVISION)
    assert revision_of(engine) == REVISION
    assert NEW_INDEX in page_indexes(engine) and OLD_INDEX not in page_indexes(engine)
    if postgres:
        before = index_bytes(engine, NEW_INDEX)
        move_many_times(engine, "playing")
        assert index_bytes(engine, NEW_INDEX) == before
    migrate(engine, PREVIOUS_HEAD, down=True)
    assert revision_of(engine) == PREVIOUS_HEAD
    assert OLD_INDEX in page_indexes(engine) and NEW_INDEX not in page_indexes(engine)
