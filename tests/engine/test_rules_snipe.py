"""RULES.md §5, the snipe: ordered power loss at walls and men, the wall at your back, the page edge,
two with one bullet. Spreads are zero, so every number is checked exactly."""

from __future__ import annotations

import math

import pytest

from dotfight.engine import IllegalAction
from tests.engine.conftest import Page, flick, of_type, send, types

D = math.hypot(1000, 1400)


def _red_base_with_two_on_the_line(page: Page) -> str:
    """A full red base (8) at (500, 500) r=80: two men on the line x=500, six well off it."""
    base = page.base("red", 500, 500, 80, men=0)
    page.man("red", 500, 540, "on1")
    page.man("red", 500, 470, "on2")
    for k, (x, y) in enumerate([(440, 480), (440, 520), (560, 480), (560, 520), (450, 450), (550, 450)]):
        page.man("red", x, y, f"off{k}")
    page.base("red", 150, 200, 60)  # more red soldiers elsewhere, so nobody wins
    return base


def test_snipe_through_a_full_base_loses_85_percent_at_the_wall_and_less_at_the_far_wall(page: Page) -> None:
    _red_base_with_two_on_the_line(page)
    page.man("blue", 500, 620, "gun")
    state = page.build()
    after, events = flick(state, "blue", "gun", "snipe", (0, -300))

    assert types(events)[:5] == ["ink", "wall", "crossed_out", "crossed_out", "wall"]
    near_wall, far_wall = of_type(events, "wall")
    assert near_wall["fullness"] == 1.0
    assert near_wall["loss"] == pytest.approx(0.85, abs=1e-12)
    assert near_wall["at"] == pytest.approx([500, 580], abs=1e-9)
    # Two of eight are crossed out on the way in: the far wall holds 6/8, cheaper by 0.82 × 2/8.
    assert far_wall["fullness"] == 0.75
    assert near_wall["loss"] - far_wall["loss"] == pytest.approx(0.82 * 0.25, abs=1e-12)
    assert [e["soldier"] for e in of_type(events, "crossed_out")] == ["on1", "on2"]
    assert [e["at"] for e in of_type(events, "crossed_out")] == [
        pytest.approx([500, 547], abs=1e-9),
        pytest.approx([500, 477], abs=1e-9),
    ]

    # R walks: minus distance, times (1 - q), event by event.
    r = D - 40
    r = r * 0.15 - 33
    r = r * 0.95 - 70
    r = r * 0.95 - 57
    r = r * (1 - far_wall["loss"])
    ink = events[0]
    assert ink["points"][0] == [500, 620]
    assert ink["points"][1] == pytest.approx([500, 420 - r], abs=1e-9)
    assert ink["reach"] == pytest.approx(D, abs=1e-12) and ink["power"] == 1.0
    assert not after.soldier("on1").alive and after.soldier("on1").cross is not None
    assert after.soldier("off0").alive


def test_the_wall_at_your_back_is_free(page: Page) -> None:
    page.base("blue", 500, 1000, 80)
    page.base("red", 500, 300, 80, men=1)
    page.man("red", 900, 100)
    state = page.build()
    _, events = flick(state, "blue", "b1s1", "snipe", (0, -300))  # b1s1 is the centre dot
    back = of_type(events, "wall")[0]
    assert back["base"] == "b1" and back["loss"] == 0.0 and back["fullness"] == 1.0
    assert back["at"] == pytest.approx([500, 920], abs=1e-9)


def test_own_soldiers_are_passed_freely_and_cost_nothing(page: Page) -> None:
    page.man("blue", 500, 1300, "gun")
    page.man("blue", 500, 1200, "friend")
    page.man("red", 100, 100)
    state = page.build()
    after, events = flick(state, "blue", "gun", "snipe", (0, -150))  # t = 0.5: L = 0.4 D
    assert types(events) == ["ink", "turn"]
    assert after.soldier("friend").alive
    assert events[0]["points"][1] == pytest.approx([500, 1300 - 0.4 * D], abs=1e-9)


def test_the_ink_stops_at_the_page_edge(page: Page) -> None:
    page.man("blue", 300, 200, "gun")
    page.man("red", 900, 900)
    state = page.build()
    _, events = flick(state, "blue", "gun", "snipe", (0, -300))
    assert events[0]["points"][1] == pytest.approx([300, 0], abs=1e-9)


def test_an_event_beyond_the_end_of_the_line_does_not_happen(page: Page) -> None:
    soft = 0.2 * D + 0.8 * D * (1 / 300) ** 2  # the reach of a 1-unit pull
    page.man("blue", 500, 1300, "gun")
    page.man("red", 500, 1300 - soft - 7 - 1e-6, "far")  # his dot begins just past the end
    page.man("red", 100, 100)
    state = page.build()
    after, events = flick(state, "blue", "gun", "snipe", (0, -1))
    assert types(events) == ["ink", "turn"]
    assert after.soldier("far").alive
    assert events[0]["reach"] == pytest.approx(soft, abs=1e-9)


def test_a_man_whose_dot_the_line_just_touches_is_crossed_out(page: Page) -> None:
    page.man("blue", 500, 1300, "gun")
    page.man("red", 507, 1000, "grazed")  # exactly dot_radius off the line
    page.man("red", 100, 100)
    state = page.build()
    after, events = flick(state, "blue", "gun", "snipe", (0, -300))
    assert [e["soldier"] for e in of_type(events, "crossed_out")] == ["grazed"]
    assert of_type(events, "crossed_out")[0]["at"] == pytest.approx([500, 1000], abs=1e-6)
    assert not after.soldier("grazed").alive


def test_two_with_one_bullet_earns_one_bonus_flick(page: Page) -> None:
    page.man("blue", 500, 1300, "gun")
    page.man("red", 500, 1000, "a")
    page.man("red", 500, 900, "b")
    page.man("red", 100, 100, "c")
    state = page.build()
    after, events = flick(state, "blue", "gun", "snipe", (0, -300))
    assert types(events) == ["ink", "crossed_out", "crossed_out", "bonus"]
    assert events[-1] == {"type": "bonus", "reason": "two_with_one_bullet", "credits": 1}
    assert after.turn is not None and after.turn.side == "blue" and after.turn.flicks_left == 1
    # The bonus flick is an ordinary flick: any soldier, any kind; then the turn passes.
    again, more = flick(after, "blue", "gun", "lunge", (-1, 0))
    assert types(more)[-1] == "turn" and again.actor == "red"


def test_one_kill_passes_the_turn_without_a_bonus(page: Page) -> None:
    page.man("blue", 500, 1300, "gun")
    page.man("red", 500, 1000, "a")
    page.man("red", 100, 100, "c")
    state = page.build()
    after, events = flick(state, "blue", "gun", "snipe", (0, -300))
    assert types(events) == ["ink", "crossed_out", "turn"]
    assert events[-1]["side"] == "red" and after.actor == "red"


def test_garrison_is_counted_at_the_moment_of_crossing(page: Page) -> None:
    """A base's second wall is as strong as the men still standing when the line reaches it."""
    page.base("red", 500, 600, 80, men=0)
    for k in range(4):
        page.man("red", 500, 650 - 30 * k, f"r{k}")  # four in a row on the line
    page.man("red", 150, 150)
    page.man("blue", 500, 700, "gun")  # inside the red ring? no: 100 below its centre, outside (r=80)
    state = page.build()
    _, events = flick(state, "blue", "gun", "snipe", (0, -300))
    walls = of_type(events, "wall")
    assert [w["fullness"] for w in walls] == [4 / 8, 0.0]
    assert walls[1]["loss"] == pytest.approx(0.03, abs=1e-12)


def test_a_convoy_on_the_road_is_crossed_out_by_a_line_through_it(page: Page) -> None:
    page.base("blue", 300, 1100, 80)
    page.base("blue", 700, 1100, 80, men=0)
    page.base("red", 500, 300, 80)
    state = page.build()
    state, events = send(state, "blue", "b1", "b2", ["b1s1"])
    road = of_type(events, "send")[0]["soldiers"][0]
    assert (road["x"], road["y"]) == pytest.approx((500, 1100), abs=1e-9)
    state, _ = flick(state, "blue", "b1s2", "snipe", (-300, 0))  # blue's flick goes elsewhere
    assert state.actor == "red"
    _, events = flick(state, "red", "b3s1", "snipe", (0, 300))  # straight down x=500 through the road
    crossed = [e["soldier"] for e in of_type(events, "crossed_out")]
    assert "b1s1" in crossed


def test_a_snipe_out_of_turn_is_refused_and_changes_nothing(page: Page) -> None:
    page.man("blue", 500, 1300, "gun")
    page.man("red", 500, 1000, "a")
    state = page.build()
    before = state.to_json()
    with pytest.raises(IllegalAction) as refusal:
        flick(state, "red", "a", "snipe", (0, 300))
    assert refusal.value.code == "not_your_turn"
    assert state.to_json() == before
