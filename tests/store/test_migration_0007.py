"""Migration 0007 (issue 19) from the previous head: a database at 0006 with a page in it upgrades in
place on SQLite and PostgreSQL — the page keeps everything, reads as a page without a clock, plays on
with a clock state, and the new tables take rematches, phrases and heartbeats; the downgrade goes back."""

from __future__ import annotations

from collections.abc import Iterator
from datetime import UTC, datetime
from pathlib import Path

import pytest
from alembic.config import Config
from sqlalchemy import Engine, inspect, text

from alembic import command
from dotfight.store.database import make_engine
from dotfight.store.migrations import DEFAULT_SCRIPT_LOCATION, upgrade_to_head
from dotfight.store.records import Checkpoint, ClockUpdate, LogEntry, Phrase
from dotfight.store.sql_pages import SqlPageStore

PREVIOUS_HEAD = "0006_page_states"
T0 = datetime(2026, 12, 1, 12, 0, tzinfo=UTC)


@pytest.fixture(params=["sqlite", "postgresql"])
def engine(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[Engine]:
    url = (
        f"sqlite:///{tmp_path / 'old.sqlite3'}"
        if request.param == "sqlite"
        else request.getfixturevalue("postgres_url")
    )
    database = make_engine(url)
    yield database
    database.dispose()


def migrate(engine: Engine, revision: str, *, down: bool = False) -> None:
    config = Config()
    config.set_main_option("script_location", str(DEFAULT_SCRIPT_LOCATION))
    with engine.begin() as connection:
        config.attributes["connection"] = connection
        (command.downgrade if down else command.upgrade)(config, revision)


def revision_of(engine: Engine) -> str:
    with engine.connect() as connection:
        return str(connection.execute(text("SELECT version_num FROM alembic_version")).scalar_one())


def test_a_database_at_the_previous_head_upgrades_in_place(engine: Engine) -> None:
    migrate(engine, PREVIOUS_HEAD)
    with engine.begin() as connection:
        connection.execute(
            text(
                "INSERT INTO pages (id, rules, preset, seed, seed_sha256, mode, status, phase, side_to_act,"
                " winner, version, bot, created_at, updated_at) VALUES ('old', '{}', 'quick', :seed, :sha,"
                " 'live', 'open', 'bases', 'blue', NULL, 0, NULL, :at, :at)"
            ),
            {"seed": "0" * 32, "sha": "0" * 64, "at": T0},
        )
        connection.execute(
            text("INSERT INTO page_states (page_id, version, state) VALUES ('old', 0, :state)"),
            {"state": '{"version": 0}'},
        )
    upgrade_to_head(engine)
    assert revision_of(engine)[:4] >= "0007"  # the head, or a later migration's
    tables = set(inspect(engine).get_table_names())
    assert {"rematches", "phrases", "server_beats"} <= tables
    assert "ix_pages_deadline" in {index["name"] for index in inspect(engine).get_indexes("pages")}
    store = SqlPageStore(engine)
    try:
        old = store.load("old")
        assert (old.record.clock, old.clock_state, old.deadline, old.version) == (None, None, None, 0)
        assert old.checkpoint == {"version": 0}
        clock = ClockUpdate({"running": "red"}, T0)
        entry = LogEntry(1, "blue", {"type": "quick_setup"}, [], move_id="m1")
        store.append("old", 0, entry, Checkpoint(1, "positioning", "blue", None, "open", clock=clock)).result(
            10
        )
        assert store.load("old").deadline == T0 and store.next_deadlines(5)[0].page_id == "old"
        store.say(Phrase("old", "blue", "hello", T0, 1), cap=3).result(10)
        store.offer_rematch("old", "blue", T0, T0).result(10)
        store.beat("me", T0, T0).result(10)
    finally:
        store.close()
    migrate(engine, PREVIOUS_HEAD, down=True)
    assert revision_of(engine) == PREVIOUS_HEAD
    assert "rematches" not in set(inspect(engine).get_table_names())
    assert "clock" not in {column["name"] for column in inspect(engine).get_columns("pages")}
