"""The store's side of pages between two people (issue 19), on every backend the suite uses (in memory,
SQLite, PostgreSQL): the clock state and deadline written with the move that changed them, the earliest
deadlines of the pages in play, a page's one rematch, its phrases under a per-side cap, the server's
heartbeat, and the summaries' new fields."""

from __future__ import annotations

import asyncio
import threading
from collections.abc import Iterator
from concurrent.futures import Future
from datetime import UTC, datetime, timedelta
from functools import partial
from pathlib import Path
from typing import Any

import pytest

from dotfight.store.database import make_engine
from dotfight.store.memory import MemoryPageStore
from dotfight.store.migrations import upgrade_to_head
from dotfight.store.records import (
    Checkpoint,
    ClockUpdate,
    Deadline,
    LogEntry,
    NoSuchPage,
    PageRecord,
    Phrase,
    PhraseCapReached,
    RematchRefused,
    SeatRecord,
    VersionMoved,
)
from dotfight.store.sql_pages import SqlPageStore
from tests.store.test_sql_hot_path import writer_statements

Store = MemoryPageStore | SqlPageStore
STATE = {"version": 0, "phase": "bases"}
T0 = datetime(2026, 12, 1, 12, 0, tzinfo=UTC)
LIVE_CLOCK = {"initial_s": 300, "increment_s": 2}


@pytest.fixture(params=["memory", "sqlite", "postgresql"])
def store(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[Store]:
    if request.param == "memory":
        yield MemoryPageStore()
        return
    if request.param == "sqlite":
        url = f"sqlite:///{tmp_path / 'pages.sqlite3'}"
    else:
        url = request.getfixturevalue("postgres_url")
    engine = make_engine(url)
    upgrade_to_head(engine)
    sql = SqlPageStore(engine)
    yield sql
    sql.close()
    engine.dispose()


def record(page_id: str, clock: dict[str, int] | None = LIVE_CLOCK) -> PageRecord:
    return PageRecord(page_id, "live", "quick", {}, "0" * 32, "0" * 64, None, T0, clock=clock)


def seats(page_id: str) -> list[SeatRecord]:
    return [SeatRecord(f"{page_id}-{side}".ljust(64, "0"), side, "seat") for side in ("blue", "red")]


def new_page(
    store: Store, page_id: str, clock: ClockUpdate | None = None, settings: dict[str, int] | None = LIVE_CLOCK
) -> None:
    first = Checkpoint(0, "bases", "blue", None, "open", state=STATE, clock=clock)
    store.create(record(page_id, settings), first, seats(page_id)).result(10)


def clock_at(running: str, deadline: datetime | None) -> ClockUpdate:
    return ClockUpdate({"running": running, "blue_s": 300.0, "red_s": 297.5}, deadline)


def move(
    store: Store, page_id: str, version: int, clock: ClockUpdate | None, *, status: str = "open"
) -> Future[Any]:
    side = "blue" if version % 2 else "red"
    entry = LogEntry(version, side, {"type": "stop"}, [], move_id=f"{page_id}-{version}")
    checkpoint = Checkpoint(version, "play", side, None, status, clock=clock)
    return store.append(page_id, version - 1, entry, checkpoint)


# ---- clock state and deadlines -------------------------------------------------------------------


def test_the_clock_is_kept_with_the_page_and_moves_with_the_move_that_changed_it(store: Store) -> None:
    new_page(store, "p1", clock_at("blue", T0 + timedelta(seconds=30)))
    loaded = store.load("p1")
    assert loaded.record.clock == LIVE_CLOCK
    assert loaded.clock_state == {"running": "blue", "blue_s": 300.0, "red_s": 297.5}
    assert loaded.deadline == T0 + timedelta(seconds=30)
    move(store, "p1", 1, clock_at("red", T0 + timedelta(seconds=90))).result(10)
    assert store.load("p1").clock_state == {"running": "red", "blue_s": 300.0, "red_s": 297.5}
    assert store.load("p1").deadline == T0 + timedelta(seconds=90)
    move(store, "p1", 2, None).result(10)  # a move that leaves the clock as it was
    assert store.load("p1").deadline == T0 + timedelta(seconds=90)
    move(store, "p1", 3, ClockUpdate({"running": None}, None)).result(10)
    assert (store.load("p1").clock_state, store.load("p1").deadline) == ({"running": None}, None)


def test_a_refused_move_writes_no_clock(store: Store) -> None:
    new_page(store, "p1", clock_at("blue", T0))
    move(store, "p1", 1, clock_at("red", T0 + timedelta(seconds=5))).result(10)
    stale = LogEntry(2, "red", {"type": "stop"}, [], move_id="other")
    refused = store.append(
        "p1", 0, stale, Checkpoint(2, "play", "blue", None, "open", clock=clock_at("blue", T0))
    )
    with pytest.raises(VersionMoved):
        refused.result(10)
    assert store.load("p1").deadline == T0 + timedelta(seconds=5)
    # A retried move_id is answered with its first entry, and its new clock is not written either.
    again = move(store, "p1", 1, clock_at("blue", T0 + timedelta(hours=1))).result(10)
    assert again.duplicate and store.load("p1").deadline == T0 + timedelta(seconds=5)


def test_a_clock_move_adds_one_update_of_the_page_row_and_reads_nothing(tmp_path: Path) -> None:
    engine = make_engine(f"sqlite:///{tmp_path / 'pages.sqlite3'}")
    upgrade_to_head(engine)
    sql = SqlPageStore(engine)
    try:
        new_page(sql, "p1", clock_at("blue", T0))
        watched = writer_statements(sql)
        move(sql, "p1", 1, clock_at("red", T0)).result(10)
        move(sql, "p1", 2, None).result(10)
        seen = watched()
    finally:
        sql.close()
        engine.dispose()
    assert [statement.split()[0] for statement in seen] == ["UPDATE", "INSERT", "UPDATE", "UPDATE", "INSERT"]
    # The reminder rides on the same UPDATE: a new deadline brings its own, an unchanged one keeps it.
    assert seen[2].startswith(
        "UPDATE pages SET clock_state=?, deadline=?, reminder_at=CASE WHEN (pages.deadline IS NOT ?)"
        " THEN ? ELSE pages.reminder_at END WHERE pages.id = ?"
    )


def test_a_page_without_a_clock_keeps_none(store: Store) -> None:
    new_page(store, "plain", settings=None)
    move(store, "plain", 1, None).result(10)
    loaded = store.load("plain")
    assert (loaded.record.clock, loaded.clock_state, loaded.deadline) == (None, None, None)
    assert store.next_deadlines(10) == []


def test_the_earliest_deadlines_of_pages_in_play_come_first(store: Store) -> None:
    for number, seconds in enumerate([50, 10, 40, 20, 30]):
        new_page(store, f"p{number}", clock_at("blue", T0 + timedelta(seconds=seconds)))
    new_page(store, "nobody-runs", clock_at("blue", None))
    new_page(store, "over", clock_at("blue", T0))
    move(store, "over", 1, None, status="over").result(10)
    assert store.next_deadlines(3) == [
        Deadline("p1", T0 + timedelta(seconds=10)),
        Deadline("p3", T0 + timedelta(seconds=20)),
        Deadline("p4", T0 + timedelta(seconds=30)),
    ]
    assert [due.page_id for due in store.next_deadlines(100)] == ["p1", "p3", "p4", "p2", "p0"]


def test_moves_written_together_each_keep_their_own_clock(store: Store) -> None:
    pages = [f"g{number}" for number in range(12)]
    for page_id in pages:
        new_page(store, page_id, clock_at("blue", T0))
    futures = [
        move(store, page_id, 1, clock_at("red", T0 + timedelta(seconds=number)))
        for number, page_id in enumerate(pages)
    ]
    for future in futures:
        future.result(10)
    assert [store.load(page_id).deadline for page_id in pages] == [
        T0 + timedelta(seconds=n) for n in range(12)
    ]


# ---- rematches ---------------------------------------------------------------------------------


def rematch_page(page_id: str) -> tuple[PageRecord, Checkpoint, list[SeatRecord]]:
    return record(page_id), Checkpoint(0, "bases", "blue", None, "open", state=STATE), seats(page_id)


def test_a_rematch_is_offered_once_accepted_by_the_other_side_and_made_with_its_page(store: Store) -> None:
    new_page(store, "old")
    assert store.rematch("old") is None
    offer = store.offer_rematch("old", "red", T0, T0 + timedelta(hours=1)).result(10)
    assert (offer.offered_by, offer.offered_at, offer.expires_at, offer.page) == (
        "red",
        T0,
        T0 + timedelta(hours=1),
        None,
    )
    # Offering again for the same side answers the offer that stands (idempotent).
    assert (
        store.offer_rematch("old", "red", T0 + timedelta(minutes=5), T0 + timedelta(hours=2)).result(10)
        == offer
    )
    with pytest.raises(RematchRefused) as refusal:
        store.offer_rematch("old", "blue", T0, T0 + timedelta(hours=1)).result(10)
    assert refusal.value.reason == "offered"
    with pytest.raises(RematchRefused) as refusal:
        store.accept_rematch("old", "red", T0, *rematch_page("mine")).result(10)
    assert refusal.value.reason == "own_offer"
    with pytest.raises(NoSuchPage):
        store.load("mine")
    accepted = store.accept_rematch("old", "blue", T0 + timedelta(minutes=1), *rematch_page("new")).result(10)
    assert (accepted.page, accepted.accepted_at, accepted.offered_by) == (
        "new",
        T0 + timedelta(minutes=1),
        "red",
    )
    assert store.rematch("old") == accepted
    assert store.load("new").record.clock == LIVE_CLOCK and len(store.seats("new")) == 2
    for attempt in (
        lambda: store.accept_rematch("old", "blue", T0, *rematch_page("again")),
        lambda: store.offer_rematch("old", "blue", T0, T0 + timedelta(hours=1)),
    ):
        with pytest.raises(RematchRefused) as refusal:
            attempt().result(10)
        assert refusal.value.reason == "accepted"
    assert store.withdraw_rematch("old", T0).result(10) is False  # an accepted rematch stays
    assert store.rematch("old") == accepted


def test_an_offer_expires_can_be_withdrawn_and_offered_again(store: Store) -> None:
    new_page(store, "old")
    with pytest.raises(RematchRefused) as refusal:
        store.accept_rematch("old", "blue", T0, *rematch_page("new")).result(10)
    assert refusal.value.reason == "none"
    store.offer_rematch("old", "red", T0, T0 + timedelta(minutes=10)).result(10)
    late = T0 + timedelta(minutes=10)
    with pytest.raises(RematchRefused) as refusal:
        store.accept_rematch("old", "blue", late, *rematch_page("new")).result(10)
    assert refusal.value.reason == "expired"
    # Once expired, either side may offer anew.
    fresh = store.offer_rematch("old", "blue", late, late + timedelta(minutes=10)).result(10)
    assert (fresh.offered_by, fresh.offered_at) == ("blue", late)
    assert store.withdraw_rematch("old", late).result(10) is True
    assert store.rematch("old") is None
    assert store.withdraw_rematch("old", late).result(10) is False


def test_a_rematch_of_an_unknown_page_is_no_such_page(store: Store) -> None:
    with pytest.raises(NoSuchPage):
        store.offer_rematch("nope", "blue", T0, T0 + timedelta(hours=1)).result(10)


# ---- phrases -----------------------------------------------------------------------------------


def test_phrases_are_kept_in_order_with_the_version_and_capped_per_side(store: Store) -> None:
    new_page(store, "p1")
    said = [
        Phrase("p1", "blue", "hello", T0, 0),
        Phrase("p1", "red", "good_luck", T0 + timedelta(seconds=1), 0),
    ]
    said += [Phrase("p1", "blue", "nice_shot", T0 + timedelta(seconds=2), 7)]
    for phrase in said:
        assert store.say(phrase, cap=2).result(10) == phrase
    with pytest.raises(PhraseCapReached):
        store.say(Phrase("p1", "blue", "thanks", T0, 7), cap=2).result(10)
    store.say(Phrase("p1", "red", "thanks", T0, 8), cap=2).result(10)  # red's own count
    assert store.phrases("p1") == [*said, Phrase("p1", "red", "thanks", T0, 8)]
    with pytest.raises(NoSuchPage):
        store.say(Phrase("nope", "blue", "hello", T0, 0), cap=2).result(10)


# ---- heartbeat ---------------------------------------------------------------------------------


def test_the_last_beat_before_a_start_is_the_latest_of_the_other_processes(store: Store) -> None:
    assert store.last_beat(T0, excluding="me") is None
    store.beat("old", T0 - timedelta(hours=1), T0 - timedelta(seconds=30)).result(10)
    store.beat("old", T0 - timedelta(hours=1), T0 - timedelta(seconds=20)).result(10)
    store.beat("other", T0 - timedelta(hours=2), T0 - timedelta(seconds=25)).result(10)
    store.beat("me", T0, T0 + timedelta(seconds=5)).result(10)
    assert store.last_beat(T0, excluding="me") == T0 - timedelta(seconds=20)
    assert store.last_beat(T0 - timedelta(seconds=22), excluding="me") == T0 - timedelta(seconds=25)


# ---- races between two processes (PostgreSQL) --------------------------------------------------


@pytest.fixture
def two_processes(postgres_url: str) -> Iterator[tuple[SqlPageStore, SqlPageStore]]:
    """Two stores on one PostgreSQL database, each with its own writer and connections (two processes)."""
    engines = [make_engine(postgres_url), make_engine(postgres_url)]
    upgrade_to_head(engines[0])
    first, second = SqlPageStore(engines[0]), SqlPageStore(engines[1])
    yield first, second
    first.close()
    second.close()
    for engine in engines:
        engine.dispose()


def _at_once(*works: Any) -> list[Any]:
    """Runs the calls on threads released together; returns each one's result or error."""
    start = threading.Barrier(len(works))
    outcomes: list[Any] = [None] * len(works)

    def run(index: int) -> None:
        start.wait()
        try:
            outcomes[index] = works[index]().result(20)
        except Exception as error:
            outcomes[index] = error

    threads = [threading.Thread(target=run, args=(index,)) for index in range(len(works))]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(30)
    return outcomes


def test_two_processes_accepting_at_once_make_one_rematch(
    two_processes: tuple[SqlPageStore, SqlPageStore],
) -> None:
    first, second = two_processes
    for round_number in range(8):
        old = f"old{round_number}"
        new_page(first, old)
        first.offer_rematch(old, "red", T0, T0 + timedelta(hours=1)).result(10)
        outcomes = _at_once(
            partial(first.accept_rematch, old, "blue", T0, *rematch_page(f"a{round_number}")),
            partial(second.accept_rematch, old, "blue", T0, *rematch_page(f"b{round_number}")),
        )
        refused = [outcome for outcome in outcomes if isinstance(outcome, RematchRefused)]
        made = [outcome for outcome in outcomes if not isinstance(outcome, BaseException)]
        assert len(made) == 1 and len(refused) == 1, outcomes
        assert refused[0].reason == "accepted"
        assert first.rematch(old) == made[0]
        loser = f"b{round_number}" if made[0].page == f"a{round_number}" else f"a{round_number}"
        with pytest.raises(NoSuchPage):
            first.load(loser)


def test_two_processes_saying_at_once_stay_under_the_cap(
    two_processes: tuple[SqlPageStore, SqlPageStore],
) -> None:
    first, second = two_processes
    for number in range(8):
        page_id = f"p{number}"
        new_page(first, page_id)
        outcomes = _at_once(
            partial(first.say, Phrase(page_id, "blue", "hello", T0, 0), cap=1),
            partial(second.say, Phrase(page_id, "blue", "thanks", T0, 0), cap=1),
        )
        assert sum(isinstance(outcome, PhraseCapReached) for outcome in outcomes) == 1, outcomes
        assert len(first.phrases(page_id)) == 1


# ---- the summaries (the database's views) ------------------------------------------------------


@pytest.fixture
def sql_store(store: Store) -> SqlPageStore:
    if not isinstance(store, SqlPageStore):
        pytest.skip("summaries are the database's views")
    return store


def end(store: Store, page_id: str, reason: str) -> None:
    events = [{"type": "game_over", "winner": "blue", "reason": reason}, {"type": "phase", "phase": "over"}]
    entry = LogEntry(1, "red", {"type": "time_out" if reason == "time" else "resign"}, events)
    store.append(
        page_id, 0, entry, Checkpoint(1, "over", None, "blue", "over", clock=clock_at("red", None))
    ).result(10)


def test_summaries_carry_the_clock_the_deadline_who_runs_and_how_a_page_ended(
    sql_store: SqlPageStore,
) -> None:
    new_page(sql_store, "running", clock_at("red", T0 + timedelta(seconds=42)))
    new_page(sql_store, "plain", settings=None)
    for page_id, reason in [("timed", "time"), ("resigned", "resigned"), ("left", "abandoned")]:
        new_page(sql_store, page_id, clock_at("red", T0))
        end(sql_store, page_id, reason)
    ids = ["running", "plain", "timed", "resigned", "left"]
    summaries = {summary["id"]: summary for summary in asyncio.run(sql_store.views.summaries(ids))}
    assert {key: summaries["running"][key] for key in ("clock", "deadline", "running", "reason")} == {
        "clock": LIVE_CLOCK,
        "deadline": "2026-12-01T12:00:42Z",
        "running": "red",
        "reason": None,
    }
    assert [summaries["plain"][key] for key in ("clock", "deadline", "running", "reason")] == [None] * 4
    assert [summaries[page_id]["reason"] for page_id in ids[2:]] == ["time", "resigned", "abandoned"]
    assert summaries["timed"]["deadline"] is None
