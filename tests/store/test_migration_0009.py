"""Migration 0009 (issue 19: stored reminders, drawn rematch seats) from the previous head, on SQLite and
PostgreSQL: link pages in play and a rematch made at 0008 upgrade in place — a page whose reminder is
still to come gets it (the deploy loses none), one whose moment passed gets none and one with its next
move's deadline, the old rematch reads as one without seals (its tokens stay the derived ones), and the
downgrade goes back."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

from sqlalchemy import Engine, inspect, text

from dotfight.store.migrations import upgrade_to_head
from dotfight.store.records import Checkpoint, ClockUpdate, LogEntry
from dotfight.store.sql_pages import SqlPageStore
from tests.store.test_migration_0007 import T0, engine, migrate, revision_of

__all__ = ["engine"]  # the fixture, used by name

PREVIOUS_HEAD = "0008_departures"
PAGE = (
    "INSERT INTO pages (id, rules, preset, seed, seed_sha256, mode, status, phase, side_to_act, winner,"
    " version, bot, created_at, updated_at, clock, clock_state, deadline) VALUES (:id, '{}', 'quick', :seed,"
    " :sha, 'link', :status, 'bases', 'blue', NULL, 0, NULL, :at, :at, :clock, :state, :deadline)"
)


def test_a_database_at_the_previous_head_upgrades_in_place(engine: Engine) -> None:
    migrate(engine, PREVIOUS_HEAD)
    soon = datetime.now(UTC).replace(microsecond=0) + timedelta(hours=1)  # a move under way
    with engine.begin() as connection:
        for page_id, status, deadline in (
            ("old", "open", T0 + timedelta(hours=1)),
            ("done", "over", T0 + timedelta(hours=1)),
            ("again", "open", T0 + timedelta(hours=1)),
            ("under_way", "open", soon),
        ):
            connection.execute(
                text(PAGE),
                {
                    "id": page_id,
                    "seed": "0" * 32,
                    "sha": "0" * 64,
                    "status": status,
                    "at": T0,
                    "clock": '{"per_move_s": 3600}',
                    "state": '{"running": "blue"}',
                    "deadline": deadline,
                },
            )
            connection.execute(
                text("INSERT INTO page_states (page_id, version, state) VALUES (:id, 0, :state)"),
                {"id": page_id, "state": '{"version": 0}'},
            )
        connection.execute(
            text(
                "INSERT INTO rematches (page_id, offered_by, offered_at, expires_at, new_page_id,"
                " accepted_at) VALUES ('done', 'red', :at, :at, 'again', :at)"
            ),
            {"at": T0},
        )
    upgrade_to_head(engine)
    assert revision_of(engine)[:4] >= "0009"
    indexes = {index["name"] for index in inspect(engine).get_indexes("pages")}
    assert "ix_pages_reminder_at" in indexes
    assert "ix_rematches_expires_at" in {index["name"] for index in inspect(engine).get_indexes("rematches")}
    store = SqlPageStore(engine)
    try:
        # The move under way is reminded a fifth of its hour before its deadline; the others' moments passed.
        [waiting] = store.next_reminders(5)
        assert (waiting.page_id, waiting.at, waiting.side) == (
            "under_way",
            soon - timedelta(minutes=12),
            "blue",
        )
        old = store.rematch("done")
        assert old is not None and (old.page, old.offered_seat, old.accepted_seal) == ("again", None, None)
        assert store.next_offer_ends(T0 - timedelta(days=1), 5) == []  # made: no offer stands
        reminder = T0 + timedelta(hours=1.8)
        clock = ClockUpdate({"running": "red"}, T0 + timedelta(hours=2), reminder)
        entry = LogEntry(1, "blue", {"type": "quick_setup"}, [], move_id="m1")
        checkpoint = Checkpoint(1, "bases", "red", None, "open", clock=clock)
        store.append("old", 0, entry, checkpoint).result(10)
        due = store.next_reminders(5)[0]
        assert (due.page_id, due.at, due.side) == ("old", reminder, "red")
        assert store.claim_reminder("old", reminder).result(10) is True
    finally:
        store.close()
    migrate(engine, PREVIOUS_HEAD, down=True)
    assert revision_of(engine) == PREVIOUS_HEAD
    assert "reminder_at" not in {column["name"] for column in inspect(engine).get_columns("pages")}
    assert "offered_seal" not in {column["name"] for column in inspect(engine).get_columns("rematches")}
