"""The downtime credit in the store (issue 19, item 4), on memory, SQLite and PostgreSQL: a beat after no
process beat for the gap credits the stretch to every running clock in the same transaction; two
processes crediting at once credit it once (PostgreSQL: the beats' table locked for the credit)."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from functools import partial

from dotfight.server.heartbeat import credited
from dotfight.server.pages.authority import clock_update
from dotfight.server.people.clock import ClockState, LiveClock
from dotfight.store.records import ClockUpdate, Downtime
from dotfight.store.sql_pages import SqlPageStore
from tests.store.test_people_store import Store, _at_once, new_page, store, two_processes

__all__ = ["store", "two_processes"]  # the fixtures, used by name

T0 = datetime(2026, 12, 1, 12, 0, tzinfo=UTC)
GAP = timedelta(seconds=2.5)


def running_clock(since: datetime) -> ClockUpdate:
    """Blue's 60 s running since `since`."""
    return clock_update(ClockState(LiveClock(60), 60.0, 60.0, "blue", since.timestamp()))


def deadline_of(store: Store, page_id: str) -> datetime | None:
    return store.load(page_id).deadline


def test_a_beat_after_a_downtime_credits_the_running_clocks(store: Store) -> None:
    new_page(store, "running", running_clock(T0))
    new_page(store, "no-clock")
    store.beat("p1", T0, T0 + timedelta(seconds=10)).result(10)
    # Beats a second apart are no downtime.
    assert store.beat_crediting("p2", T0, T0 + timedelta(seconds=11), GAP, credited).result(10) is None
    assert deadline_of(store, "running") == T0 + timedelta(seconds=60)
    # Nobody beat from 11 s to 111 s: the 100 s go back to blue, once.
    up = T0 + timedelta(seconds=111)
    downtime = store.beat_crediting("p3", up, up, GAP, credited).result(10)
    assert downtime == Downtime(T0 + timedelta(seconds=11), up, ("running",))
    assert deadline_of(store, "running") == T0 + timedelta(seconds=160)
    state = store.load("running").clock_state
    assert (
        state is not None and ClockState.from_json(state).since == (T0 + timedelta(seconds=100)).timestamp()
    )
    assert store.beat_crediting("p4", up, up + timedelta(seconds=1), GAP, credited).result(10) is None
    assert deadline_of(store, "running") == T0 + timedelta(seconds=160)


def test_two_processes_coming_back_at_once_credit_the_downtime_once(
    two_processes: tuple[SqlPageStore, SqlPageStore],
) -> None:
    first, second = two_processes
    for round_number in range(6):
        page_id = f"running{round_number}"
        start = T0 + timedelta(hours=round_number)
        new_page(first, page_id, running_clock(start))
        first.beat("before", start, start).result(10)
        up = start + timedelta(seconds=100)
        outcomes = _at_once(
            partial(first.beat_crediting, f"a{round_number}", up, up, GAP, credited),
            partial(second.beat_crediting, f"b{round_number}", up, up, GAP, credited),
        )
        assert sorted(outcome is None for outcome in outcomes) == [False, True], outcomes
        assert deadline_of(first, page_id) == start + timedelta(seconds=160)  # 100 s once, not twice
