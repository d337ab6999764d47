"""The time-out writer and the downtime credit (issue 19, items 3 and 4), with a controllable clock: one
alarm per process ends a page at its deadline plus the lag cap, armed by local commits and by the poll of
the earliest deadlines (a page whose watching process died), once however many processes notice; link
pages remind the side to act once per move; a downtime is credited to the running clocks once."""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from datetime import UTC, datetime
from typing import Any

import pytest

from dotfight.server.heartbeat import DOWN_AFTER_BEATS, Heartbeat
from dotfight.server.page_view import LoadedPage
from dotfight.server.pages.authority import Arrival, CreatePage, PageAuthority, Seat
from dotfight.server.pages.errors import EngineRefusal
from dotfight.server.people.alarm import ManualClock
from dotfight.server.people.clock import SETUP_MOVE_S
from dotfight.server.people.lag import ALLOWANCE_CAP_S
from dotfight.server.timeouts import TimeOuts
from dotfight.store.memory import MemoryPageStore
from tests.server.people.people_pages import SETUP, flick

START = 1_796_083_200.0
POLL_S = 2.0


class Process:
    """One server process on a shared store: its authority and its time-out writer, on one fake clock."""

    def __init__(self, store: MemoryPageStore, clock: ManualClock, trusted: list[bool] | None = None) -> None:
        self.authority = PageAuthority(store, now=clock.now)
        self.reminded: list[tuple[str, str, float]] = []
        self.timeouts = TimeOuts(
            self.authority,
            store,
            POLL_S,
            trusted=(lambda: trusted[0]) if trusted is not None else (lambda: True),
            remind=self._remind,
            clock=clock,
        )
        self.authority.add_listener(self.timeouts.committed)
        self.authority.on_late_move = self.timeouts.late_move
        self.authority.on_created = self.timeouts.created

    async def _remind(self, page: LoadedPage, side: str, left: float) -> None:
        self.reminded.append((page.meta.id, side, left))

    async def __aenter__(self) -> Process:
        await self.timeouts.start()
        return self

    async def __aexit__(self, *_: object) -> None:
        self.timeouts.stop()


@pytest.fixture
def clock() -> ManualClock:
    return ManualClock(START)


@pytest.fixture
def store() -> MemoryPageStore:
    return MemoryPageStore()


async def _until(done: Callable[[], object], clock: ManualClock, step: float = 0.0) -> None:
    """Moves the clock on by `step` until `done()` (the alarm's work reads and writes through the
    store's threads and back), at most 80 steps (then the test's assertion fails)."""
    for _ in range(80):
        if done():
            return
        await clock.advance(step)
        await asyncio.sleep(0.001)


async def _until_ended(store: MemoryPageStore, page_id: str, clock: ManualClock, step: float) -> None:
    """Moves the clock on by `step` until the page has its time-out."""
    await _until(lambda: _endings(store, page_id), clock, step)


async def _live_page_in_play(process: Process, initial_s: int = 30) -> LoadedPage:
    authority = process.authority
    created = await authority.create(CreatePage("quick", None, 7, "live", clock={"initial_s": initial_s}))
    page_id = created.page.meta.id
    for side, action in SETUP:
        page = await authority.page(page_id)
        await authority.act(page_id, Seat(side), action, page.state.version, None)
    return await authority.page(page_id)


def _endings(store: MemoryPageStore, page_id: str) -> list[dict[str, Any]]:
    return [entry.action for entry in store.log(page_id, 0) if entry.action["type"] == "time_out"]


async def test_a_live_page_ends_on_time_at_its_deadline_plus_the_cap_by_itself(
    store: MemoryPageStore, clock: ManualClock
) -> None:
    async with Process(store, clock) as process:
        page = await _live_page_in_play(process)
        deadline = page.clock.deadline if page.clock else None
        assert deadline == START + 30
        await clock.advance(30 + ALLOWANCE_CAP_S - 0.01)
        assert _endings(store, page.meta.id) == []  # a move could still be in time
        await clock.advance(0.02)
        await _until_ended(store, page.meta.id, clock, 0)
        ended = await process.authority.page(page.meta.id)
        assert ended.over and ended.state.winner == "red"
        [entry] = [e for e in store.log(page.meta.id, 0) if e.action["type"] == "time_out"]
        assert (entry.side, entry.move_id) == ("blue", f"time_out@{page.state.version}")
        assert {"type": "game_over", "winner": "red", "reason": "time"} in entry.events
        assert ended.clock is not None and ended.clock.running is None
        assert list(process.timeouts.delays) == [pytest.approx(ALLOWANCE_CAP_S, abs=0.05)]


async def test_two_processes_noticing_at_once_write_one_time_out(
    store: MemoryPageStore, clock: ManualClock
) -> None:
    first, second = Process(store, clock), Process(store, clock)
    page = await _live_page_in_play(first)
    clock._now = START + 30 + ALLOWANCE_CAP_S
    await second.authority.page(page.meta.id)  # the second process holds the page too
    answers = await asyncio.gather(
        first.timeouts.time_out(page.meta.id), second.timeouts.time_out(page.meta.id)
    )
    assert any(answer is not None and not answer.duplicate for answer in answers)
    assert len(_endings(store, page.meta.id)) == 1
    # The one that lost the race wrote at the version it read, under the same move_id: its first answer.
    late = await second.authority.act(
        page.meta.id,
        Seat("blue"),
        {"type": "time_out"},
        page.state.version,
        f"time_out@{page.state.version}",
        Arrival(clock.now(), 0.0),
    )
    assert late.duplicate and late.version == page.state.version + 1
    assert len(_endings(store, page.meta.id)) == 1


async def test_the_poll_ends_a_page_whose_watching_process_died(
    store: MemoryPageStore, clock: ManualClock
) -> None:
    watcher, other = Process(store, clock), Process(store, clock)
    page = await _live_page_in_play(watcher)  # committed on the watcher, which then dies: never started
    async with other:
        assert other.timeouts.waiting() == 1  # armed from the store's deadlines at start
        await _until_ended(store, page.meta.id, clock, 0.5)
        assert len(_endings(store, page.meta.id)) == 1
        assert clock.now() - (START + 30) <= ALLOWANCE_CAP_S + POLL_S


async def test_a_page_created_after_the_poll_is_armed_by_the_next_poll(
    store: MemoryPageStore, clock: ManualClock
) -> None:
    watcher, other = Process(store, clock), Process(store, clock)
    async with other:
        assert other.timeouts.waiting() == 0
        page = await _live_page_in_play(watcher)
        await other.timeouts.poll()
        assert other.timeouts.waiting() == 1
        await clock.advance(30 + ALLOWANCE_CAP_S)
        await _until_ended(store, page.meta.id, clock, 0)
        assert len(_endings(store, page.meta.id)) == 1


async def test_a_move_in_time_moves_the_alarm_and_no_time_out_is_written(
    store: MemoryPageStore, clock: ManualClock
) -> None:
    async with Process(store, clock) as process:
        page = await _live_page_in_play(process)
        await clock.advance(29)
        await process.authority.act(
            page.meta.id, Seat("blue"), flick(page.state), page.state.version, None, Arrival(clock.now(), 0.0)
        )
        await clock.advance(2)  # blue's old deadline plus the cap has passed: red runs now
        moved = await process.authority.page(page.meta.id)
        assert not moved.over and _endings(store, page.meta.id) == []
        assert moved.clock is not None and moved.clock.running == "red"


async def test_no_time_out_is_written_while_the_heartbeat_is_not_trusted(
    store: MemoryPageStore, clock: ManualClock
) -> None:
    trusted = [False]
    process = Process(store, clock, trusted)
    page = await _live_page_in_play(process)
    clock._now = START + 60
    assert await process.timeouts.time_out(page.meta.id) is None
    assert _endings(store, page.meta.id) == []
    trusted[0] = True
    assert await process.timeouts.time_out(page.meta.id) is not None
    assert len(_endings(store, page.meta.id)) == 1


async def test_a_link_page_reminds_the_side_to_act_once_per_move(
    store: MemoryPageStore, clock: ManualClock
) -> None:
    async with Process(store, clock) as process:
        authority = process.authority
        created = await authority.create(CreatePage("quick", None, 7, "link", clock={"per_move_s": 3600}))
        page_id = created.page.meta.id
        page = await authority.page(page_id)
        await authority.act(page_id, Seat("blue"), {"type": "quick_setup"}, page.state.version, None)
        await clock.advance(3600 * 0.8 - 1)
        assert process.reminded == []
        await clock.advance(2)
        await _until(lambda: process.reminded, clock)
        [(reminded, side, left)] = process.reminded
        assert (reminded, side) == (page_id, "blue") and left == pytest.approx(3600 * 0.2 - 1)
        await clock.advance(100)
        assert len(process.reminded) == 1  # once per move
        page = await authority.page(page_id)
        await authority.act(page_id, Seat("blue"), {"type": "ready"}, page.state.version, None)
        await clock.advance(3600 * 0.8 + 1)  # red's move: red is reminded once
        await _until(lambda: len(process.reminded) == 2, clock)
        assert [side for _, side, _ in process.reminded] == ["blue", "red"]


async def test_a_downtime_is_credited_to_the_running_clocks_once(
    store: MemoryPageStore, clock: ManualClock
) -> None:
    before = Process(store, clock)
    beat = Heartbeat(store, before.authority, 1.0)
    await beat.beat()
    page = await _live_page_in_play(before)
    assert page.clock is not None and page.clock.deadline == START + 30
    # Every process goes down for 100 s; two come back at once.
    clock._now = START + 5
    await beat.beat()
    clock._now = START + 105
    first, second = Process(store, clock), Process(store, clock)
    beats = [Heartbeat(store, first.authority, 1.0), Heartbeat(store, second.authority, 1.0)]
    credited = [await one.beat() for one in beats]
    assert credited[0] is not None and credited[0].pages == (page.meta.id,)
    assert credited[1] is None  # the second reads the first's beat: no gap
    assert credited[0].down_from == datetime.fromtimestamp(START + 5, UTC)
    after = await second.authority.page(page.meta.id)
    assert after.clock is not None and after.clock.deadline == START + 30 + 100
    assert beats[0].trusted and beats[1].trusted
    # A beat a little late is not downtime.
    clock._now = START + 105 + DOWN_AFTER_BEATS - 0.1
    beats[0]._failing = True
    assert await beats[0].beat() is None
    assert store.next_deadlines(1)[0].deadline == datetime.fromtimestamp(START + 130, UTC)


async def test_a_late_move_is_refused_and_the_time_out_written(
    store: MemoryPageStore, clock: ManualClock
) -> None:
    async with Process(store, clock) as process:
        page = await _live_page_in_play(process)
        process.timeouts.stop()  # only the late move may set the alarm now
        process.timeouts._alarm.clear(page.meta.id)
        process.timeouts._alarm.start()
        clock._now = START + 30.5
        with pytest.raises(EngineRefusal):
            await process.authority.act(
                page.meta.id, Seat("blue"), flick(page.state), page.state.version, None
            )
        assert process.timeouts.waiting() == 1
        await clock.advance(ALLOWANCE_CAP_S)
        await _until_ended(store, page.meta.id, clock, 0)
        assert [entry["type"] for entry in _endings(store, page.meta.id)] == ["time_out"]


async def test_a_live_page_left_in_setup_ends_on_time_after_its_setup_move(
    store: MemoryPageStore, clock: ManualClock
) -> None:
    async with Process(store, clock) as process:
        created = await process.authority.create(
            CreatePage("quick", None, 7, "live", clock={"initial_s": 600, "increment_s": 0})
        )
        await clock.advance(SETUP_MOVE_S + ALLOWANCE_CAP_S - 0.1)
        assert _endings(store, created.page.meta.id) == []
        await clock.advance(0.2)
        await _until_ended(store, created.page.meta.id, clock, 0)
        ended = await process.authority.page(created.page.meta.id)
        assert ended.over and ended.state.winner == "red"  # blue never drew
