"""RULES.md §6, the lunge: shake, the full-length bent path, where he lands, lunge again, stop."""

from __future__ import annotations

import itertools
import math

import pytest

from dotfight.engine import IllegalAction, RuleSet, apply, resolve_lunge
from dotfight.engine.rng import normal
from tests.engine.conftest import LEGACY_SPREADS, Page, flick, of_type, steady_rules, types

D = math.hypot(1000, 1400)
SOFT = 0.2 * D + 0.8 * D * (1 / 300) ** 2  # the reach of a 1-unit pull


def _far_red(page: Page) -> None:
    page.man("red", 950, 50, "faraway")  # keeps red alive so no scenario ends the page by accident


def test_a_lunge_into_an_enemy_base_with_a_survivor_is_shot(page: Page) -> None:
    page.base("red", 500, 800 - SOFT, 80, men=0)
    page.man("red", 450, 800 - SOFT, "survivor")
    page.man("blue", 500, 800, "runner")
    page.man("blue", 100, 1300)
    _far_red(page)
    state = page.build()
    after, events = flick(state, "blue", "runner", "lunge", (0, -1))
    assert types(events) == ["ink", "wall", "crossed_out", "turn"]
    shot = events[2]
    assert shot == {
        "type": "crossed_out",
        "soldier": "runner",
        "at": shot["at"],
        "by": "garrison",
        "cause": "shot",
    }
    assert shot["at"] == pytest.approx([500, 800 - SOFT], abs=1e-9)
    runner = after.soldier("runner")
    assert not runner.alive and runner.cross is not None and runner.cross.side == "red"
    assert after.soldier("survivor").alive


def test_a_lunge_that_crosses_out_the_last_man_inside_lands_safely(page: Page) -> None:
    page.base("red", 500, 800 - SOFT, 80, men=0)
    page.man("red", 500, 800 - SOFT + 40, "only")
    page.man("blue", 500, 800, "runner")
    _far_red(page)
    state = page.build()
    after, events = flick(state, "blue", "runner", "lunge", (0, -1))
    assert types(events) == ["ink", "wall", "crossed_out", "landed", "bonus"]
    assert events[2]["soldier"] == "only" and events[2]["by"] == "runner" and events[2]["cause"] == "lunge"
    assert events[3]["at"] == pytest.approx([500, 800 - SOFT], abs=1e-9)
    assert after.soldier("runner").alive
    assert (after.soldier("runner").x, after.soldier("runner").y) == pytest.approx(
        (500, 800 - SOFT), abs=1e-9
    )


def test_landing_in_an_empty_enemy_ring_is_safe(page: Page) -> None:
    page.base("red", 500, 800 - SOFT, 80, men=0)
    page.man("blue", 500, 800, "runner")
    _far_red(page)
    state = page.build()
    after, events = flick(state, "blue", "runner", "lunge", (0, -1))
    assert types(events) == ["ink", "wall", "landed", "turn"]
    assert after.soldier("runner").alive


def test_a_lunge_off_the_page_ends_at_the_edge_and_is_crossed_out_there(page: Page) -> None:
    page.man("blue", 300, 300, "runner")
    page.man("blue", 100, 1300)
    _far_red(page)
    state = page.build()
    after, events = flick(state, "blue", "runner", "lunge", (0, -300))
    assert types(events) == ["ink", "crossed_out", "turn"]
    assert events[1] == {
        "type": "crossed_out",
        "soldier": "runner",
        "at": [300.0, 0.0],
        "by": "runner",
        "cause": "off_page",
    }
    assert events[0]["points"] == [[300, 300], [300, 0]]
    cross = after.soldier("runner").cross
    assert cross is not None and cross.side == "blue"


def test_landing_in_an_own_base_joins_its_garrison(page: Page) -> None:
    home = page.base("blue", 500, 800 - SOFT, 80, men=3)
    page.man("blue", 500, 800, "runner")
    _far_red(page)
    state = page.build()
    assert state.garrison(state.base(home)) == 3
    after, events = flick(state, "blue", "runner", "lunge", (0, -1))
    assert types(events) == ["ink", "wall", "landed", "turn"]
    assert after.garrison(after.base(home)) == 4


def test_a_lunge_keeps_its_full_length_when_shaken() -> None:
    rules = RuleSet.preset("classic", **LEGACY_SPREADS)  # real shake
    page = Page(rules, seed=99)
    page.base("red", 500, 560, 80)  # his run crosses this full red base
    page.man("blue", 500, 720, "runner")
    page.man("blue", 100, 1300)
    page.man("red", 950, 50)
    state = page.build()
    _, events = flick(state, "blue", "runner", "lunge", (0, -1))
    points = events[0]["points"]
    assert len(points) >= 3  # bent at least once
    run = sum(math.dist(a, b) for a, b in itertools.pairwise(points))
    assert events[-1]["type"] != "crossed_out" or events[-1]["cause"] != "off_page"
    assert run == pytest.approx(SOFT, abs=1e-9)


def test_a_lunge_draws_launch_then_one_per_wall_or_man_in_order() -> None:
    rules = RuleSet.preset("classic", **LEGACY_SPREADS)
    page = Page(rules, seed=1234)
    page.base("blue", 500, 1000, 80)
    page.base("red", 500, 500, 80)
    page.man("red", 950, 50)
    state = page.build()
    after, events = flick(state, "blue", "b1s1", "lunge", (0, -150))
    ink_events = [
        e
        for e in events
        if e["type"] in ("wall", "crossed_out") and e.get("cause") not in ("shot", "off_page")
    ]
    assert after.rng == state.rng + 1 + len(ink_events)
    # The first wall is the one at his back: free, shake exactly 0, though a number is drawn for it.
    assert events[1]["type"] == "wall" and events[1]["base"] == "b1" and events[1]["shake"] == 0.0
    # Each later wall turns the run by its spread times the next draw, in order.
    draw = state.rng + 1
    for event in ink_events:
        if event["type"] == "wall" and event["base"] != "b1":
            spread = rules.shake_empty + (rules.shake_full - rules.shake_empty) * event["fullness"]
            assert event["shake"] == pytest.approx(spread * normal(state.seed, draw), abs=1e-12)
        draw += 1


def test_the_launch_angle_uses_the_first_draw() -> None:
    rules = steady_rules(wildness=0.1)
    page = Page(rules, seed=5)
    page.man("blue", 500, 1000, "runner")
    page.man("red", 950, 50)
    state = page.build()
    _, events = flick(state, "blue", "runner", "lunge", (0, -150))
    (x0, y0), (x1, y1) = events[0]["points"][:2]
    sigma = 0.1 * 0.5**2
    assert math.atan2(y1 - y0, x1 - x0) == pytest.approx(-math.pi / 2 + sigma * normal(5, 0), abs=1e-12)


def _chain_page(rules: RuleSet | None = None) -> Page:
    page = Page(rules or steady_rules())
    page.man("blue", 500, 1000, "runner")
    page.man("blue", 100, 1300, "mate")
    page.man("red", 500, 900, "a")
    page.man("red", 500, 850, "b")
    page.man("red", 950, 50, "faraway")
    return page


def test_each_lunge_kill_earns_a_lunge_again_and_never_two_with_one_bullet() -> None:
    state = _chain_page().build()
    after, events = flick(state, "blue", "runner", "lunge", (0, -1))
    assert types(events) == ["ink", "crossed_out", "crossed_out", "landed", "bonus"]
    assert events[-1] == {"type": "bonus", "reason": "lunge_again", "credits": 2}
    turn = after.turn
    assert turn is not None and turn.side == "blue" and turn.flicks_left == 0
    assert turn.chain is not None and (turn.chain.soldier, turn.chain.credits, turn.chain.link) == (
        "runner",
        2,
        1,
    )
    assert after.flickable("blue") == ["runner"]


def test_with_a_chain_pending_only_that_soldiers_lunge_may_follow() -> None:
    state, _ = flick(_chain_page().build(), "blue", "runner", "lunge", (0, -1))
    for soldier, kind in (("mate", "snipe"), ("mate", "lunge"), ("runner", "snipe")):
        with pytest.raises(IllegalAction) as refusal:
            flick(state, "blue", soldier, kind, (0, -100))
        assert refusal.value.code == "illegal_action" and refusal.value.reason == "chain_pending"


def test_chain_links_spend_credits_and_shake_more() -> None:
    rules = steady_rules(lunge_link_shake=0.05)
    state, _ = flick(_chain_page(rules).build(), "blue", "runner", "lunge", (0, -1))
    before = state
    state, events = flick(state, "blue", "runner", "lunge", (-1, 0))  # link 1: spread 0.05 × 1
    (x0, y0), (x1, y1) = events[0]["points"][:2]
    expected = math.pi + 0.05 * normal(before.seed, before.rng)
    assert (x1 - x0, y1 - y0) == pytest.approx(
        (SOFT * math.cos(expected), SOFT * math.sin(expected)), abs=1e-9
    )
    assert state.turn is not None and state.turn.chain is not None
    assert (state.turn.chain.credits, state.turn.chain.link) == (1, 2)
    assert state.turn.flicks_left == 0  # a chain lunge uses no normal flick
    before = state
    state, events = flick(state, "blue", "runner", "lunge", (1, 0))  # link 2: spread 0.10
    (x0, y0), (x1, y1) = events[0]["points"][:2]
    assert math.atan2(y1 - y0, x1 - x0) == pytest.approx(0.10 * normal(before.seed, before.rng), abs=1e-12)
    assert types(events)[-1] == "turn" and state.actor == "red"  # credits spent: the turn passes


def test_stop_drops_the_chain_and_the_turn_passes_when_no_flick_is_left() -> None:
    state, _ = flick(_chain_page().build(), "blue", "runner", "lunge", (0, -1))
    after, events = apply(state, "blue", {"type": "stop"})
    assert events[0] == {"type": "bonus", "reason": "lunge_again", "credits": 0}
    assert types(events) == ["bonus", "turn"] and after.actor == "red"


def test_stop_on_a_chain_keeps_the_turn_when_flicks_are_left() -> None:
    page = _chain_page()
    page.man("blue", 120, 1300, "third")
    page.man("blue", 140, 1300, "fourth")
    state = page.build(flicks=2, last_stand=True)
    state, _ = flick(state, "blue", "runner", "lunge", (0, -1))
    assert state.turn is not None and state.turn.flicks_left == 1
    after, events = apply(state, "blue", {"type": "stop"})
    assert types(events) == ["bonus"]
    assert after.turn is not None and after.turn.chain is None and after.turn.flicks_left == 1
    assert after.actor == "blue"


def test_a_lunger_who_dies_keeps_no_credits(page: Page) -> None:
    page.man("blue", 500, 200, "runner")
    page.man("blue", 100, 1300)
    page.man("red", 500, 150, "victim")
    _far_red(page)
    state = page.build()
    after, events = flick(state, "blue", "runner", "lunge", (0, -300))  # kills, then runs off the top
    assert types(events) == ["ink", "crossed_out", "crossed_out", "turn"]
    assert after.actor == "red" and after.turn is not None and after.turn.chain is None


@pytest.mark.parametrize(("last_stand", "factor"), [(False, 1.0), (True, 0.5)])
def test_crossing_out_a_man_turns_the_run_by_shake_man_times_a_fresh_draw(
    last_stand: bool, factor: float
) -> None:
    rules = steady_rules(shake_man=0.04)
    page = Page(rules, seed=77)
    page.man("blue", 500, 1000, "runner")
    page.man("red", 500, 850, "victim")
    page.man("red", 950, 50, "faraway")
    state = page.build(flicks=2 if last_stand else 1, last_stand=last_stand)
    _, events = flick(state, "blue", "runner", "lunge", (0, -1))
    first, kink, end = events[0]["points"]
    assert kink == pytest.approx([500, 857], abs=1e-9)  # the entry point into his dot
    turned = math.atan2(end[1] - kink[1], end[0] - kink[0]) - math.atan2(
        kink[1] - first[1], kink[0] - first[0]
    )
    assert turned == pytest.approx(factor * 0.04 * normal(77, state.rng + 1), abs=1e-12)
    assert math.dist(first, kink) + math.dist(kink, end) == pytest.approx(SOFT, abs=1e-9)


def test_a_full_wall_shakes_with_the_full_spread_and_an_empty_one_barely() -> None:
    rules = steady_rules(shake_empty=0.0175, shake_full=0.995)
    page = Page(rules, seed=3)
    page.base("red", 300, 700, 60)  # full
    page.base("red", 700, 700, 60, men=0)  # an empty ring
    page.man("blue", 300 + 20, 900, "left")
    page.man("blue", 700 + 20, 900, "right")
    page.man("red", 950, 50)
    state = page.build()
    for soldier, spread in (("left", 0.995), ("right", 0.0175)):
        _, events = resolve_lunge(state, soldier, (0, -1))
        wall = of_type(events, "wall")[0]
        assert wall["shake"] == pytest.approx(spread * normal(3, state.rng + 1), abs=1e-12)
