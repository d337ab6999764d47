"""Live Fischer clocks and link per-move deadlines (dotfight/server/people/clock.py), on real engine pages
with times handed in: nothing here sleeps."""

from __future__ import annotations

import json
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from dotfight.engine import Side, State, apply, other_side
from dotfight.server.people.clock import (
    SETUP_MOVE_S,
    ClockError,
    ClockState,
    LateMove,
    LinkClock,
    LiveClock,
    after_commit,
    credit_downtime,
    due,
    in_time,
    parse_clock,
    reminder_at,
    start_clock,
    time_out_at,
    view,
)
from dotfight.server.people.lag import ALLOWANCE_CAP_S
from tests.server.people.people_pages import SETUP, blank_page, flick, in_play, send

LIVE = LiveClock(initial_s=60, increment_s=5)
T0 = 1_796_083_200.0  # 2026-12-01T00:00:00Z


def commit(
    page: State, clock: ClockState, action: dict[str, Any], at: float, allowance: float = 0.0
) -> tuple[State, ClockState]:
    """Applies the side to act's action and the clock's transition; returns both."""
    assert page.actor is not None
    after, _ = apply(page, page.actor, action)
    return after, after_commit(page, after, clock, at, allowance)


def live_in_play(settings: LiveClock = LIVE, at: float = T0) -> tuple[State, ClockState]:
    """A quick live page set up at `at` (every setup move at that moment): blue's time starts then."""
    page = blank_page()
    clock = start_clock(settings, page, at)
    for _side, action in SETUP:
        page, clock = commit(page, clock, action, at)
    return page, clock


# ---- settings ---------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("mode", "raw", "expected"),
    [
        ("live", {"initial_s": 15, "increment_s": 0}, LiveClock(15, 0)),
        ("live", {"initial_s": 10800, "increment_s": 180}, LiveClock(10800, 180)),
        ("live", {"initial_s": 300}, LiveClock(300, 0)),
        ("link", {"per_move_s": 3600}, LinkClock(3600)),
        ("link", {"per_move_s": 1209600}, LinkClock(1209600)),
        ("live", None, None),
        ("local", None, None),
    ],
)
def test_clocks_within_protocols_ranges_are_read(mode: str, raw: object, expected: object) -> None:
    assert parse_clock(mode, raw) == expected


@pytest.mark.parametrize(
    ("mode", "raw", "field", "reason"),
    [
        ("live", {"initial_s": 14}, "clock.initial_s", "out_of_range"),
        ("live", {"initial_s": 10801}, "clock.initial_s", "out_of_range"),
        ("live", {"initial_s": 60, "increment_s": -1}, "clock.increment_s", "out_of_range"),
        ("live", {"initial_s": 60, "increment_s": 181}, "clock.increment_s", "out_of_range"),
        ("live", {"initial_s": 60.5}, "clock.initial_s", "out_of_range"),
        ("live", {"initial_s": True}, "clock.initial_s", "out_of_range"),
        ("live", {"initial_s": "60"}, "clock.initial_s", "out_of_range"),
        ("live", {"increment_s": 2}, "clock.initial_s", "missing_field"),
        ("live", {"per_move_s": 3600}, "clock.per_move_s", "unknown_field"),
        ("link", {"per_move_s": 3599}, "clock.per_move_s", "out_of_range"),
        ("link", {"per_move_s": 1209601}, "clock.per_move_s", "out_of_range"),
        ("link", {"initial_s": 60}, "clock.initial_s", "unknown_field"),
        ("link", [3600], "clock", "bad_clock"),
        ("bot", {"initial_s": 60}, "clock", "clock_not_allowed"),
        ("local", {"per_move_s": 3600}, "clock", "clock_not_allowed"),
    ],
)
def test_a_bad_clock_is_a_bad_request_naming_the_input(
    mode: str, raw: object, field: str, reason: str
) -> None:
    with pytest.raises(ClockError) as refused:
        parse_clock(mode, raw)
    assert isinstance(refused.value, ValueError)
    assert (refused.value.code, refused.value.field, refused.value.reason) == ("bad_request", field, reason)
    assert field in refused.value.message


# ---- the live page's setup -------------------------------------------------------------------------


def test_a_live_pages_setup_moves_each_have_their_own_bounded_time() -> None:
    page = blank_page()
    clock = start_clock(LIVE, page, T0)
    assert (clock.running, clock.setup, clock.deadline) == ("blue", True, T0 + SETUP_MOVE_S)
    # blue's quick setup and its positioning are one setup move: the side to act did not change
    page, clock = commit(page, clock, SETUP[0][1], T0 + 20)
    assert (clock.running, clock.since, clock.deadline) == ("blue", T0, T0 + SETUP_MOVE_S)
    page, clock = commit(page, clock, SETUP[1][1], T0 + 80)
    assert (clock.running, clock.since, clock.deadline) == ("red", T0 + 80, T0 + 80 + SETUP_MOVE_S)
    shown = view(clock, T0 + 100)
    assert shown is not None
    assert (shown["blue_s"], shown["red_s"], shown["running"]) == (60.0, 60.0, "red")
    assert shown["deadline"] == "2026-12-01T00:02:50.000Z"
    # the first turn of play starts the clocks: blue's time from the commit that made it its move
    page, clock = commit(page, clock, SETUP[2][1], T0 + 130)
    assert (clock.running, clock.setup, clock.since, clock.blue_s, clock.red_s) == (
        "blue",
        False,
        T0 + 130,
        60.0,
        60.0,
    )
    assert clock.deadline == T0 + 130 + 60


def test_a_setup_move_late_is_refused_and_its_time_out_is_due_after_the_cap() -> None:
    page = blank_page()
    clock = start_clock(LIVE, page, T0)
    with pytest.raises(LateMove) as late:
        commit(page, clock, SETUP[0][1], T0 + SETUP_MOVE_S + 0.5, allowance=0.2)
    assert late.value.code == "illegal_action"
    assert not due(clock, T0 + SETUP_MOVE_S + ALLOWANCE_CAP_S - 0.01)
    assert due(clock, T0 + SETUP_MOVE_S + ALLOWANCE_CAP_S)


# ---- the live page's play ----------------------------------------------------------------------------


def test_the_running_side_is_charged_from_since_less_its_allowance_and_gains_the_increment() -> None:
    page, clock = live_in_play()
    page, clock = commit(page, clock, flick(page), T0 + 10.0, allowance=0.25)
    assert clock.blue_s == pytest.approx(60 - 9.75 + 5)
    assert (clock.running, clock.since, clock.red_s) == ("red", T0 + 10.0, 60.0)
    assert clock.deadline == pytest.approx(T0 + 10 + 60)
    page, clock = commit(page, clock, flick(page), T0 + 40.0, allowance=0.0)
    assert clock.red_s == pytest.approx(60 - 30 + 5)
    assert clock.blue_s == pytest.approx(55.25)  # blue's time did not run during red's turn


def test_the_allowance_is_capped() -> None:
    page, clock = live_in_play(LiveClock(60, 0))
    _, clock = commit(page, clock, flick(page), T0 + 10.0, allowance=30.0)
    assert clock.blue_s == pytest.approx(60 - 10 + ALLOWANCE_CAP_S)


def test_the_increment_comes_per_finished_turn_of_play_not_per_action() -> None:
    page, clock = live_in_play()
    page, clock = commit(page, clock, send(page), T0 + 4.0)
    assert (clock.running, clock.blue_s, clock.since) == ("blue", 56.0, T0 + 4.0)
    page, clock = commit(page, clock, flick(page), T0 + 10.0)
    assert (clock.running, clock.blue_s) == ("red", 60 - 10 + 5)


def test_a_move_in_time_is_applied_right_up_to_the_deadline_plus_its_allowance() -> None:
    page, clock = live_in_play(LiveClock(15, 0))
    assert in_time(clock, T0 + 15.4, 0.5) and not in_time(clock, T0 + 15.5, 0.5)
    _, clock_after = commit(page, clock, flick(page), T0 + 15.4, allowance=0.5)
    assert clock_after.blue_s > 0 and clock_after.running == "red"
    with pytest.raises(LateMove):
        commit(page, clock, flick(page), T0 + 15.5, allowance=0.5)
    # the time-out is written only once no allowance could make a move in time
    assert not due(clock, T0 + 15 + ALLOWANCE_CAP_S - 0.001) and due(clock, T0 + 15 + ALLOWANCE_CAP_S)


def test_an_ended_page_stops_the_clock_and_a_time_out_leaves_the_late_side_at_zero() -> None:
    page, clock = live_in_play(LiveClock(15, 0))
    after, _ = apply(page, "blue", {"type": "resign"})  # the engine applies `time_out` like `resign`
    stopped = after_commit(page, after, clock, T0 + 16 + ALLOWANCE_CAP_S, 0.0)
    assert (stopped.running, stopped.since, stopped.deadline, stopped.blue_s) == (None, None, None, 0.0)
    shown = view(stopped, T0 + 100)
    assert shown is not None and (shown["running"], shown["deadline"], shown["blue_s"]) == (None, None, 0.0)


# ---- link pages --------------------------------------------------------------------------------------


def test_a_link_deadline_restarts_only_when_the_side_to_act_changes() -> None:
    day = LinkClock(86400)
    page = blank_page()
    clock = start_clock(day, page, T0)
    assert (clock.running, clock.deadline, clock.setup) == ("blue", T0 + 86400, False)
    page, clock = commit(page, clock, SETUP[0][1], T0 + 100)  # blue still arranges: the same move
    assert clock.deadline == T0 + 86400
    page, clock = commit(page, clock, SETUP[1][1], T0 + 3000)
    assert (clock.running, clock.deadline) == ("red", T0 + 3000 + 86400)
    page, clock = commit(page, clock, SETUP[2][1], T0 + 5000)
    assert (clock.running, clock.deadline) == ("blue", T0 + 5000 + 86400)
    page, clock = commit(page, clock, send(page), T0 + 7000)  # blue's turn goes on
    assert (clock.running, clock.deadline) == ("blue", T0 + 5000 + 86400)
    page, clock = commit(page, clock, flick(page), T0 + 9000)
    assert (clock.running, clock.deadline) == ("red", T0 + 9000 + 86400)
    shown = view(clock, T0 + 9000 + 3600)
    assert shown == {
        "per_move_s": 86400,
        "blue_s": 86400.0,
        "red_s": 86400.0 - 3600,
        "running": "red",
        "deadline": "2026-12-02T02:30:00.000Z",
        "now": "2026-12-01T03:30:00.000Z",
    }


# ---- restarts, the snapshot's view, the stored form ----------------------------------------------------


def test_downtime_is_charged_to_nobody() -> None:
    page, clock = live_in_play(LiveClock(60, 0))
    # the server was down from 10 s into blue's time until 40 s: blue's 30 s of thinking before and after
    credited = credit_downtime(clock, T0 + 10, T0 + 40)
    assert credited.deadline == pytest.approx(T0 + 90)
    _, after = commit(page, credited, flick(page), T0 + 50.0)
    assert after.blue_s == pytest.approx(60 - 20)
    assert credit_downtime(clock, T0 + 40, T0 + 30) == clock  # no downtime
    finished = ClockState(LIVE, 10.0, 20.0, None, None)
    assert credit_downtime(finished, T0, T0 + 100) == finished


def test_the_view_counts_the_running_side_down_to_now_and_no_clock_is_null() -> None:
    _, clock = live_in_play(LiveClock(60, 0), at=T0 + 0.25)
    shown = view(clock, T0 + 12.5)
    assert shown == {
        "initial_s": 60,
        "increment_s": 0,
        "blue_s": 47.75,
        "red_s": 60.0,
        "running": "blue",
        "deadline": "2026-12-01T00:01:00.250Z",
        "now": "2026-12-01T00:00:12.500Z",
    }
    late = view(clock, T0 + 500)
    assert late is not None and late["blue_s"] == 0.0
    assert view(None, T0) is None


SIDES = st.sampled_from(["blue", "red", None])
TIMES = st.floats(min_value=0, max_value=4e9, allow_nan=False)
SETTINGS = st.one_of(
    st.builds(LiveClock, st.integers(15, 10800), st.integers(0, 180)),
    st.builds(LinkClock, st.integers(3600, 1209600)),
)


@given(SETTINGS, TIMES, TIMES, SIDES, st.one_of(st.none(), TIMES), st.booleans())
def test_the_stored_form_round_trips_exactly(
    settings_: LiveClock | LinkClock,
    blue_s: float,
    red_s: float,
    running: Any,
    since: float | None,
    setup: bool,
) -> None:
    clock = ClockState(settings_, blue_s, red_s, running, since, setup)
    stored = json.loads(json.dumps(clock.to_json()))
    assert ClockState.from_json(stored) == clock
    assert stored["deadline"] == clock.deadline


@settings(max_examples=40, deadline=None)
@given(
    st.lists(
        st.tuples(st.floats(0, 20, allow_nan=False), st.floats(0, 3, allow_nan=False), st.integers(0, 40)),
        min_size=1,
        max_size=12,
    ),
    st.integers(0, 180),
)
def test_time_is_conserved_over_random_play(moves: list[tuple[float, float, int]], increment: int) -> None:
    """Each in-time move charges exactly its elapsed time less its capped allowance to the running side,
    only that side, adds the increment once per passed turn, never leaves a negative time, and the
    deadline is always `since` plus the running side's time."""
    page, clock = live_in_play(LiveClock(120, increment))
    now = T0
    for think, lag, pick in moves:
        now += think
        if not in_time(clock, now, lag):
            assert due(clock, now + ALLOWANCE_CAP_S)
            break
        running, before = clock.running, clock
        assert running is not None and before.since is not None
        action = send(page) if pick % 5 == 0 and not (page.turn and page.turn.sent) else flick(page, pick)
        after_page, clock = commit(page, clock, action, now, lag)
        passed = (
            after_page.turn is not None
            and page.turn is not None
            and after_page.turn.number != page.turn.number
        )
        expected = before.left(running) - max(0.0, now - before.since - min(lag, ALLOWANCE_CAP_S))
        if after_page.phase == "over":
            assert clock.running is None
            break
        assert clock.left(running) == pytest.approx(expected + (increment if passed else 0))
        waiting = other_side(running)
        assert clock.left(waiting) == before.left(waiting)
        assert clock.left(running) > 0 and clock.running == after_page.actor
        assert clock.since is not None and clock.deadline == clock.since + clock.left(running_next(clock))
        assert ClockState.from_json(json.loads(json.dumps(clock.to_json()))) == clock
        page = after_page


def running_next(clock: ClockState) -> Side:
    """Returns the side whose time runs (the page is in play)."""
    assert clock.running is not None
    return clock.running


def test_clock_from_in_play_page_is_blue_running_from_creation() -> None:
    clock = start_clock(LIVE, in_play(), T0)
    assert (clock.running, clock.setup, clock.deadline) == ("blue", False, T0 + 60)


@pytest.mark.parametrize(
    "broken",
    [
        {},
        {"settings": {"per_move_s": 3600}, "blue_s": 1.0, "red_s": 1.0, "running": "green", "since": 0.0},
        {"settings": {"per_move_s": 1}, "blue_s": 1.0, "red_s": 1.0, "running": None, "since": None},
        {
            "settings": {"per_move_s": 3600},
            "blue_s": "1",
            "red_s": 1.0,
            "running": None,
            "since": None,
            "setup": False,
        },
        {
            "settings": {"initial_s": 60},
            "blue_s": 1.0,
            "red_s": float("nan"),
            "running": "red",
            "since": 0.0,
            "setup": False,
        },
    ],
)
def test_a_stored_clock_it_did_not_write_is_refused_clearly(broken: dict[str, Any]) -> None:
    with pytest.raises(ClockError) as refused:
        ClockState.from_json(broken)
    assert refused.value.code == "bad_request"


def test_the_alarm_time_is_the_deadline_plus_the_cap_and_link_pages_are_reminded_at_a_fifth_left() -> None:
    page = blank_page()
    week = start_clock(LinkClock(604800), page, T0)
    assert time_out_at(week) == T0 + 604800 + ALLOWANCE_CAP_S
    assert reminder_at(week) == pytest.approx(T0 + 604800 * 0.8)
    page, week = commit(page, week, SETUP[0][1], T0 + 500_000)  # the same move: the reminder stays
    assert reminder_at(week) == pytest.approx(T0 + 604800 * 0.8)
    page, week = commit(page, week, SETUP[1][1], T0 + 500_001)  # red's move: a new reminder
    assert reminder_at(week) == pytest.approx(T0 + 500_001 + 604800 * 0.8)
    _, live = live_in_play()
    assert reminder_at(live) is None and time_out_at(live) == T0 + 60 + ALLOWANCE_CAP_S
    assert time_out_at(ClockState(LIVE, 1.0, 2.0, None, None)) is None
