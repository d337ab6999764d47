"""Clocks in the move path (issue 19, items 1 and 2), with a controllable clock: the page authority
charges each action from its arrival less its allowance, adds the increment per finished turn, gives each
setup move its own time, restarts a link page's deadline only when the side to act changes, refuses a
late move, and writes the clock and its deadline with the move."""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

import pytest

from dotfight.engine import State
from dotfight.server.page_view import LoadedPage
from dotfight.server.pages.authority import Arrival, CreatePage, PageAuthority, Seat
from dotfight.server.pages.errors import EngineRefusal
from dotfight.server.people.clock import SETUP_MOVE_S, ClockState
from dotfight.server.people.lag import ALLOWANCE_CAP_S
from dotfight.store.memory import MemoryPageStore
from tests.server.people.people_pages import SETUP, flick, send

START = 1_796_083_200.0  # 2026-12-01T00:00:00Z
BLUE, RED = Seat("blue"), Seat("red")


class FakeTime:
    """The authority's time, moved by the test."""

    def __init__(self, at: float = START) -> None:
        self.at = at

    def __call__(self) -> float:
        return self.at


@pytest.fixture
def time_now() -> FakeTime:
    return FakeTime()


@pytest.fixture
def authority(time_now: FakeTime) -> PageAuthority:
    return PageAuthority(MemoryPageStore(), now=time_now)


async def _create(authority: PageAuthority, mode: str, clock: dict[str, int] | None) -> str:
    created = await authority.create(CreatePage("quick", None, 7, mode, clock=clock))
    return created.page.meta.id


async def _act(
    authority: PageAuthority,
    page_id: str,
    side: str,
    action: dict[str, Any],
    at: float,
    allowance: float = 0.0,
) -> LoadedPage:
    page = await authority.page(page_id)
    await authority.act(page_id, Seat(side), action, page.state.version, None, Arrival(at, allowance))
    return await authority.page(page_id)


async def _set_up(authority: PageAuthority, page_id: str, at: float) -> LoadedPage:
    page = await authority.page(page_id)
    for side, action in SETUP:
        page = await _act(authority, page_id, side, action, at)
    return page


def _clock(page: LoadedPage) -> ClockState:
    assert page.clock is not None
    return page.clock


def _stored(store: MemoryPageStore, page_id: str) -> tuple[dict[str, Any] | None, datetime | None]:
    loaded = store.load(page_id)
    return loaded.clock_state, loaded.deadline


def _turn_ending_flicks(state: State) -> int:
    turn = state.turn
    assert turn is not None
    return turn.flicks_left


async def test_a_live_page_charges_the_running_side_from_the_commit_to_the_arrival(
    authority: PageAuthority, time_now: FakeTime
) -> None:
    page_id = await _create(authority, "live", {"initial_s": 60, "increment_s": 0})
    page = await _set_up(authority, page_id, START + 10)
    clock = _clock(page)
    # Setup used no one's clock; play starts at the last setup move's arrival.
    assert (clock.blue_s, clock.red_s, clock.running, clock.since, clock.setup) == (
        60.0,
        60.0,
        "blue",
        START + 10,
        False,
    )
    # A send does not end blue's turn: blue is charged 7 s less 0.25 s of allowance.
    page = await _act(authority, page_id, "blue", send(page.state), START + 17, allowance=0.25)
    clock = _clock(page)
    assert clock.blue_s == pytest.approx(60 - 6.75) and clock.running == "blue" and clock.since == START + 17
    # A client claiming a huge lag gets the cap, no more.
    page = await _act(authority, page_id, "blue", flick(page.state), START + 20, allowance=30.0)
    assert _clock(page).blue_s == pytest.approx(60 - 6.75 - (3 - ALLOWANCE_CAP_S))


async def test_the_increment_is_added_per_finished_turn_not_per_action(
    authority: PageAuthority, time_now: FakeTime
) -> None:
    page_id = await _create(authority, "live", {"initial_s": 60, "increment_s": 5})
    page = await _set_up(authority, page_id, START)
    flicks = _turn_ending_flicks(page.state)
    at = START
    for _ in range(flicks):
        at += 2
        before = page
        page = await _act(authority, page_id, "blue", flick(page.state), at)
    # Each action costs 2 s; only the one that passed the turn to red added 5.
    assert before.state.actor == "blue" and page.state.actor == "red"
    assert _clock(page).blue_s == pytest.approx(60 - 2 * flicks + 5)
    assert _clock(page).running == "red" and _clock(page).since == at and _clock(page).red_s == 60.0


async def test_each_setup_move_has_its_own_time_and_the_clocks_stay_whole(
    authority: PageAuthority, time_now: FakeTime
) -> None:
    page_id = await _create(authority, "live", {"initial_s": 60, "increment_s": 0})
    page = await authority.page(page_id)
    assert _clock(page).deadline == START + SETUP_MOVE_S  # blue's setup move runs from the creation
    page = await _act(authority, page_id, "blue", {"type": "quick_setup"}, START + 80)
    # quick_setup and the positioning after it are one setup move of blue's: its deadline holds.
    assert _clock(page).running == "blue" and _clock(page).deadline == START + SETUP_MOVE_S
    page = await _act(authority, page_id, "blue", {"type": "ready"}, START + 85)
    assert _clock(page).running == "red" and _clock(page).deadline == START + 85 + SETUP_MOVE_S
    assert (_clock(page).blue_s, _clock(page).red_s) == (60.0, 60.0)
    snapshot = page.public_snapshot()
    assert snapshot["clock"]["blue_s"] == 60 and snapshot["clock"]["running"] == "red"


async def test_a_link_deadline_restarts_only_when_the_side_to_act_changes(
    authority: PageAuthority, time_now: FakeTime
) -> None:
    page_id = await _create(authority, "link", {"per_move_s": 3600})
    page = await _set_up(authority, page_id, START + 100)
    assert _clock(page).running == "blue" and _clock(page).deadline == START + 100 + 3600
    page = await _act(authority, page_id, "blue", send(page.state), START + 1000)
    assert _clock(page).deadline == START + 100 + 3600  # the same side: the same deadline
    flicks = _turn_ending_flicks(page.state)
    for n in range(flicks):
        page = await _act(authority, page_id, "blue", flick(page.state), START + 2000 + n)
    assert page.state.actor == "red"
    assert _clock(page).running == "red" and _clock(page).deadline == START + 2000 + flicks - 1 + 3600


async def test_the_clock_and_its_deadline_are_written_with_the_move(
    authority: PageAuthority, time_now: FakeTime
) -> None:
    store = authority.store
    assert isinstance(store, MemoryPageStore)
    page_id = await _create(authority, "link", {"per_move_s": 3600})
    state, deadline = _stored(store, page_id)
    assert state is not None and deadline == datetime.fromtimestamp(START + 3600, UTC)
    page = await _set_up(authority, page_id, START + 50)
    state, deadline = _stored(store, page_id)
    assert ClockState.from_json(state or {}) == page.clock
    assert deadline == datetime.fromtimestamp(START + 50 + 3600, UTC)
    assert store.next_deadlines(5)[0].deadline == deadline
    # A fresh authority on the same store (a restart) reads the same clock back.
    again = await PageAuthority(store, now=time_now).page(page_id)
    assert again.clock == page.clock
    page = await _act(authority, page_id, "blue", {"type": "resign"}, START + 60)
    assert _stored(store, page_id)[1] is None and store.next_deadlines(5) == []


async def test_a_late_move_is_refused_changes_nothing_and_calls_for_the_time_out(
    authority: PageAuthority, time_now: FakeTime
) -> None:
    late: list[str] = []
    authority.on_late_move = late.append
    page_id = await _create(authority, "live", {"initial_s": 30, "increment_s": 0})
    page = await _set_up(authority, page_id, START)
    action = flick(page.state)
    with pytest.raises(EngineRefusal) as refused:
        await _act(authority, page_id, "blue", action, START + 30 + 0.2, allowance=0.1)
    assert (refused.value.code, refused.value.reason) == ("illegal_action", "out_of_time")
    assert late == [page_id]
    after = await authority.page(page_id)
    assert after.state.version == page.state.version and after.clock == page.clock
    # The same move a little less late, with a lag allowance that covers it, is in time.
    page = await _act(authority, page_id, "blue", action, START + 30 + 0.2, allowance=0.3)
    assert page.state.version == after.state.version + 1
    assert _clock(page).blue_s == pytest.approx(0.1)  # charged 30.2 s less 0.3 s


async def test_a_move_that_ends_the_page_stops_the_clock_and_the_answer_carries_it(
    authority: PageAuthority, time_now: FakeTime
) -> None:
    page_id = await _create(authority, "live", {"initial_s": 60, "increment_s": 0})
    page = await _set_up(authority, page_id, START)
    time_now.at = START + 4
    first = page
    applied = await authority.act(page_id, BLUE, flick(first.state), first.state.version, "m1")
    assert applied.clock is not None and applied.clock["running"] == "red"  # the quick turn: one flick
    assert applied.clock["now"] == "2026-12-01T00:00:04.000Z"
    # The HTTP allowance (no lag measured) is taken off what blue is charged.
    assert applied.clock["blue_s"] == pytest.approx(60 - 4 + 0.1)
    page = await authority.page(page_id)
    resigned = await authority.act(page_id, RED, {"type": "resign"}, page.state.version, "m2")
    assert resigned.clock is not None and resigned.clock["running"] is None
    assert resigned.clock["deadline"] is None
    # A retried move_id gets its first answer, with the clock as it stands.
    again = await authority.act(page_id, BLUE, flick(first.state), first.state.version, "m1")
    assert again.duplicate and again.clock is not None and again.clock["running"] is None


async def test_a_page_without_a_clock_is_unchanged(authority: PageAuthority, time_now: FakeTime) -> None:
    page_id = await _create(authority, "link", None)
    page = await _set_up(authority, page_id, START + 10**6)  # no time limit: days later is fine
    assert page.clock is None and page.public_snapshot()["clock"] is None
    applied = await authority.act(page_id, BLUE, flick(page.state), page.state.version, None)
    assert applied.clock is None
    assert authority.store.load(page_id).clock_state is None
