"""RULES.md §3, §9, §10: the turn, last stand, stop, winning in event order, resignation."""

from __future__ import annotations

import math

import pytest

from dotfight.engine import IllegalAction, RuleSet, Side, apply
from dotfight.engine.rng import normal
from tests.engine.conftest import Page, flick, of_type, play_ready, steady_rules, types


def _last_stand_page(blue_men: int, rules: RuleSet | None = None) -> Page:
    page = Page(rules or steady_rules())
    for k in range(blue_men):
        page.man("blue", 100 + 40 * k, 1300, f"blue{k}")
    page.man("red", 500, 300, "gunner")
    for k in range(4):
        page.man("red", 900, 100 + 40 * k, f"red{k}")  # red stays out of last stand
    return page


@pytest.mark.parametrize(("blue_men", "flicks", "last_stand"), [(4, 2, True), (5, 1, False), (1, 2, True)])
def test_last_stand_is_decided_at_the_start_of_the_turn(blue_men: int, flicks: int, last_stand: bool) -> None:
    state = _last_stand_page(blue_men).build(side="red")
    after, events = flick(state, "red", "gunner", "snipe", (300, 0))  # misses everyone
    assert events[-1] == {
        "type": "turn",
        "side": "blue",
        "flicks": flicks,
        "last_stand": last_stand,
        "number": 2,
    }
    assert after.turn is not None and after.turn.flicks_left == flicks


def test_a_last_stand_turn_has_two_flicks_then_passes() -> None:
    state = _last_stand_page(3).build(flicks=2, last_stand=True)
    state, events = flick(state, "blue", "blue0", "snipe", (0, -1))
    assert types(events) == ["ink"] and state.actor == "blue"
    state, events = flick(state, "blue", "blue1", "snipe", (0, -1))
    assert types(events) == ["ink", "turn"] and state.actor == "red"


def test_last_stand_halves_every_spread() -> None:
    rules = RuleSet.preset("classic")
    page = _last_stand_page(3, rules)
    steady = page.build(flicks=2, last_stand=True)
    shaky = page.build(flicks=1, last_stand=False)
    for state, factor in ((steady, 0.5), (shaky, 1.0)):
        _, events = flick(state, "blue", "blue0", "snipe", (0, -300))
        (x0, y0), (x1, y1) = events[0]["points"]
        expected = -math.pi / 2 + factor * rules.wildness * normal(state.seed, state.rng)
        assert math.atan2(y1 - y0, x1 - x0) == pytest.approx(expected, abs=1e-12)


def test_stop_before_the_first_flick_is_refused() -> None:
    state = _last_stand_page(5).build()
    with pytest.raises(IllegalAction) as refusal:
        apply(state, "blue", {"type": "stop"})
    assert refusal.value.code == "illegal_action" and refusal.value.reason == "stop_before_flick"


def test_stop_after_the_first_flick_forfeits_what_is_left() -> None:
    state = _last_stand_page(3).build(flicks=2, last_stand=True)
    state, _ = flick(state, "blue", "blue0", "snipe", (0, -1))
    after, events = apply(state, "blue", {"type": "stop"})
    assert types(events) == ["turn"] and events[0]["side"] == "red" and after.actor == "red"


def test_first_turn_of_play_follows_the_play_phase_event() -> None:
    from dotfight.engine import new_page

    state = new_page(RuleSet.preset("quick"), 9)
    state, _ = apply(state, "blue", {"type": "quick_setup"})
    state, _ = apply(state, "blue", {"type": "ready"})
    state, events = apply(state, "red", {"type": "ready"})
    assert types(events) == ["positioned", "phase", "turn"]
    assert events[1:] == [
        {"type": "phase", "phase": "play"},
        {"type": "turn", "side": "blue", "flicks": 1, "last_stand": False, "number": 1},
    ]


def test_a_snipe_that_crosses_out_the_last_enemy_wins_at_that_moment(page: Page) -> None:
    page.base("red", 500, 500, 60, men=0)
    page.man("red", 500, 700, "last")
    page.man("blue", 500, 1000, "gun")
    state = page.build()
    after, events = flick(state, "blue", "gun", "snipe", (0, -300))
    assert types(events) == ["ink", "crossed_out", "game_over", "wall", "wall", "phase"]
    assert events[2] == {"type": "game_over", "winner": "blue", "reason": "all_crossed_out"}
    assert events[-1] == {"type": "phase", "phase": "over"}
    assert after.phase == "over" and after.winner == "blue" and after.actor is None
    assert after.end_reason == "all_crossed_out"
    with pytest.raises(IllegalAction) as refusal:
        flick(after, "red", "last", "snipe", (0, 300))
    assert refusal.value.code == "game_over"


def test_a_lunger_who_crosses_out_the_last_enemy_and_runs_off_the_page_still_wins(page: Page) -> None:
    page.man("blue", 500, 300, "runner")
    page.man("red", 500, 200, "last")
    state = page.build()
    after, events = flick(state, "blue", "runner", "lunge", (0, -300))
    assert types(events) == ["ink", "crossed_out", "game_over", "crossed_out", "phase"]
    assert events[3]["cause"] == "off_page" and events[3]["soldier"] == "runner"
    assert after.winner == "blue" and not after.soldier("runner").alive


def test_a_side_whose_last_man_is_shot_loses(page: Page) -> None:
    soft = 0.2 * math.hypot(1000, 1400) + 0.8 * math.hypot(1000, 1400) * (1 / 300) ** 2
    page.base("red", 500, 800 - soft, 80, men=0)
    page.man("red", 450, 800 - soft, "survivor")
    page.man("blue", 500, 800, "runner")
    state = page.build()
    after, events = flick(state, "blue", "runner", "lunge", (0, -1))
    assert types(events) == ["ink", "wall", "crossed_out", "game_over", "phase"]
    assert after.winner == "red"


@pytest.mark.parametrize("who", ["blue", "red"])
def test_either_side_may_resign_at_any_time_even_out_of_turn(who: str) -> None:
    state = play_ready(RuleSet.preset("classic"))
    assert state.actor == "blue"
    after, events = apply(state, who, {"type": "resign"})
    winner = "red" if who == "blue" else "blue"
    assert events == [
        {"type": "game_over", "winner": winner, "reason": "resigned"},
        {"type": "phase", "phase": "over"},
    ]
    assert after.winner == winner and after.end_reason == "resigned" and after.phase == "over"
    with pytest.raises(IllegalAction) as refusal:
        apply(after, winner, {"type": "resign"})
    assert refusal.value.code == "game_over"


def test_resigning_during_setup_ends_the_page() -> None:
    from dotfight.engine import new_page

    state = new_page(RuleSet.preset("classic"), 1)
    after, events = apply(state, "red", {"type": "resign"})
    assert after.winner == "blue" and types(events) == ["game_over", "phase"]


def test_turn_numbers_count_up_across_sides() -> None:
    state = _last_stand_page(5).build()
    numbers = []
    moves: tuple[tuple[Side, str], ...] = (("blue", "blue0"), ("red", "gunner"), ("blue", "blue1"))
    for side, soldier in moves:
        state, events = flick(state, side, soldier, "snipe", (0, -1 if side == "blue" else 1))
        numbers.append(of_type(events, "turn")[0]["number"])
    assert numbers == [2, 3, 4]


def test_a_turn_with_flicks_left_but_nobody_to_make_them_passes() -> None:
    page = Page(steady_rules())
    page.base("blue", 300, 1100, 80, men=0)  # b1
    page.base("blue", 700, 1100, 80, men=0)  # b2
    page.man("blue", 300, 1100, "walker")
    page.man("blue", 500, 200, "runner")
    for k in range(5):
        page.man("red", 100 + 40 * k, 100, f"red{k}")
    state = page.build(flicks=2, last_stand=True)
    state, _ = apply(state, "blue", {"type": "send", "from": "b1", "to": "b2", "soldiers": ["walker"]})
    after, events = flick(state, "blue", "runner", "lunge", (0, -300))  # runs off the top of the page
    assert types(events) == ["ink", "crossed_out", "turn"] and events[-1]["side"] == "red"
    assert after.actor == "red" and after.soldier("walker").alive
