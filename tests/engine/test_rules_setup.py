"""RULES.md §2, setup: drawing bases in turn with placement checks, jotting, positioning, quick setup."""

from __future__ import annotations

import itertools
import math
from typing import Any

import pytest

from dotfight.engine import IllegalAction, RuleSet, State, apply, new_page
from tests.engine.conftest import types


def _draw(state: State, side: str, x: float, y: float, r: float) -> tuple[State, list[dict[str, Any]]]:
    return apply(state, side, {"type": "draw_base", "x": x, "y": y, "r": r})


def _blank(preset: str = "classic", **overrides: Any) -> State:
    return new_page(RuleSet.preset(preset, **overrides), 11)


def test_bases_are_drawn_in_turn_blue_first_and_jotted_full() -> None:
    state = _blank()
    assert state.phase == "bases" and state.actor == "blue"
    with pytest.raises(IllegalAction) as refusal:
        _draw(state, "red", 500, 300, 80)
    assert refusal.value.code == "not_your_turn"
    state, events = _draw(state, "blue", 500, 1100, 80)
    assert types(events) == ["base_drawn"]
    drawn = events[0]
    assert drawn["base"] == {"id": "b1", "side": "blue", "x": 500, "y": 1100, "r": 80}
    assert [s["id"] for s in drawn["soldiers"]] == [f"b1s{k}" for k in range(1, 9)]
    assert state.actor == "red"
    state, events = _draw(state, "red", 500, 300, 80)
    assert events[0]["base"]["id"] == "b2" and events[0]["soldiers"][0]["id"] == "b2s1"
    assert state.actor == "blue"


@pytest.mark.parametrize("count", range(1, 21))
@pytest.mark.parametrize("radius", [40.0, 71.5, 100.0])
def test_jotting_is_inside_the_wall_on_the_page_and_never_overlapping(count: int, radius: float) -> None:
    rules = RuleSet.preset("custom", bases_per_side=1, soldiers_per_base=count)
    state, events = _draw(new_page(rules, 1), "blue", radius, 1400 - radius, radius)  # in a corner
    dots = [(s["x"], s["y"]) for s in events[0]["soldiers"]]
    assert len(dots) == count
    for x, y in dots:
        assert math.dist((x, y), (radius, 1400 - radius)) <= radius - 7 + 1e-9  # the whole dot inside
    for a, b in itertools.combinations(dots, 2):
        assert math.dist(a, b) >= 14
    assert state.garrison(state.base("b1")) == count


@pytest.mark.parametrize(
    ("side", "x", "y", "r", "reason"),
    [
        ("blue", 500, 1100, 39.9, "radius_out_of_limits"),
        ("blue", 500, 1100, 100.1, "radius_out_of_limits"),
        ("blue", 50, 1100, 60, "off_page"),
        ("blue", 500, 1380, 60, "off_page"),
        ("blue", 500, 740, 60, "wrong_half"),  # top of the wall at 680 crosses into red's half
        ("blue", 500, 600, 60, "wrong_half"),
    ],
)
def test_draw_base_refusals(side: str, x: float, y: float, r: float, reason: str) -> None:
    state = _blank()
    with pytest.raises(IllegalAction) as refusal:
        _draw(state, side, x, y, r)
    assert refusal.value.code == "illegal_action" and refusal.value.reason == reason
    assert f"{r:g}" in refusal.value.message  # the message names the bad value


def test_a_base_exactly_on_the_half_line_and_page_edge_is_allowed() -> None:
    state, _ = _draw(_blank(), "blue", 60, 760, 60)  # touches y = 700 and x = 0
    state, _ = _draw(state, "red", 940, 640, 60)  # touches y = 700 from above and x = 1000
    assert [b.id for b in state.bases] == ["b1", "b2"]


def test_bases_keep_base_gap_from_every_other_wall_whoever_owns_it() -> None:
    state, _ = _draw(_blank(), "blue", 500, 1100, 80)
    state, _ = _draw(state, "red", 500, 300, 80)
    with pytest.raises(IllegalAction) as refusal:
        _draw(state, "blue", 500 + 80 + 80 + 29.9, 1100, 80)
    assert refusal.value.reason == "too_close_to_base" and "b1" in refusal.value.message
    state, _ = _draw(state, "blue", 500 + 80 + 80 + 30, 1100, 80)  # exactly base_gap apart
    assert [b.id for b in state.bases] == ["b1", "b2", "b3"]


def test_walls_across_the_half_line_need_base_gap_too() -> None:
    state, _ = _draw(_blank(), "blue", 500, 790, 90)
    with pytest.raises(IllegalAction) as refusal:
        _draw(state, "red", 500, 610, 90)  # both touch y = 700: no paper between
    assert refusal.value.reason == "too_close_to_base"


def test_after_the_last_base_the_page_opens_positioning() -> None:
    state = _blank("custom", bases_per_side=1)
    state, _ = _draw(state, "blue", 500, 1100, 80)
    state, events = _draw(state, "red", 500, 300, 80)
    assert types(events) == ["base_drawn", "phase"] and events[1] == {"type": "phase", "phase": "positioning"}
    assert state.phase == "positioning" and state.actor == "blue"
    with pytest.raises(IllegalAction) as refusal:
        _draw(state, "blue", 500, 900, 60)
    assert refusal.value.reason == "wrong_phase"


@pytest.mark.parametrize(
    ("preset", "overrides"),
    [
        ("classic", {}),
        ("quick", {}),
        ("dawood", {}),
        ("custom", {"bases_per_side": 1, "soldiers_per_base": 1}),
        ("custom", {"bases_per_side": 8, "soldiers_per_base": 20}),
    ],
)
def test_quick_setup_draws_a_fair_mirrored_set_for_both_sides(preset: str, overrides: dict[str, int]) -> None:
    state, events = apply(_blank(preset, **overrides), "blue", {"type": "quick_setup"})
    rules = state.rules
    k = rules.bases_per_side
    assert types(events) == ["base_drawn"] * (2 * k) + ["phase"]
    assert state.phase == "positioning"
    assert [b.side for b in state.bases] == ["blue", "red"] * k
    for blue, red in zip(state.bases[0::2], state.bases[1::2], strict=True):
        assert (red.x, red.y, red.r) == pytest.approx((1000 - blue.x, 1400 - blue.y, blue.r))
    blue_dots = sorted((round(s.x, 6), round(s.y, 6)) for s in state.soldiers if s.side == "blue")
    red_dots = sorted((round(1000 - s.x, 6), round(1400 - s.y, 6)) for s in state.soldiers if s.side == "red")
    assert blue_dots == red_dots
    assert len(state.soldiers) == 2 * k * rules.soldiers_per_base


def test_quick_setup_only_before_any_base() -> None:
    state, _ = _draw(_blank(), "blue", 500, 1100, 80)
    state, _ = _draw(state, "red", 500, 300, 80)
    with pytest.raises(IllegalAction) as refusal:
        apply(state, "blue", {"type": "quick_setup"})
    assert refusal.value.reason == "bases_already_drawn"


def _positioning(preset: str = "classic") -> State:
    state, _ = apply(_blank(preset), "blue", {"type": "quick_setup"})
    return state


def _position(
    state: State, side: str, *moves: tuple[str, float, float]
) -> tuple[State, list[dict[str, Any]]]:
    return apply(
        state, side, {"type": "position", "soldiers": [{"id": i, "x": x, "y": y} for i, x, y in moves]}
    )


def test_accepting_the_jotted_positions_is_a_valid_arrangement() -> None:
    state = _positioning()
    state, events = apply(state, "blue", {"type": "ready"})
    assert events[0]["type"] == "positioned" and events[0]["side"] == "blue"
    assert len(events[0]["soldiers"]) == 32 and state.actor == "red"
    state, events = apply(state, "red", {"type": "ready"})
    assert types(events) == ["positioned", "phase", "turn"] and state.phase == "play"


def test_blue_arranges_first_then_red() -> None:
    state = _positioning()
    red = next(s for s in state.soldiers if s.side == "red")
    with pytest.raises(IllegalAction) as refusal:
        _position(state, "red", (red.id, red.x, red.y))
    assert refusal.value.code == "not_your_turn"
    with pytest.raises(IllegalAction) as refusal:
        apply(state, "red", {"type": "ready"})
    assert refusal.value.code == "not_your_turn"


def test_a_soldier_may_stand_inside_or_just_outside_an_own_wall() -> None:
    state = _positioning()
    base = state.bases_of("blue")[0]
    inside = (base.x, base.y + base.r)  # on the wall counts as inside
    margin = (base.x + base.r + 20, base.y)  # exactly outside_margin beyond the wall
    state, events = _position(state, "blue", ("b1s2", *inside), ("b1s3", *margin))
    assert events == [
        {
            "type": "positioned",
            "side": "blue",
            "soldiers": [
                {"id": "b1s2", "x": inside[0], "y": inside[1]},
                {"id": "b1s3", "x": margin[0], "y": margin[1]},
            ],
        }
    ]
    assert state.soldier("b1s3").x == margin[0]


def test_a_soldier_beyond_the_margin_is_refused_and_nothing_moves() -> None:
    state = _positioning()
    base = state.bases_of("blue")[0]
    before = state.to_json()
    with pytest.raises(IllegalAction) as refusal:
        _position(state, "blue", ("b1s2", base.x, base.y + 50), ("b1s3", base.x + base.r + 20.5, base.y))
    assert refusal.value.reason == "outside_own_bases" and "b1s3" in refusal.value.message
    assert state.to_json() == before


def test_a_soldier_in_an_enemy_base_or_of_the_enemy_is_refused() -> None:
    state = _positioning()
    red_base = state.bases_of("red")[0]
    with pytest.raises(IllegalAction) as refusal:
        _position(state, "blue", ("b1s2", red_base.x, red_base.y + 30))
    assert refusal.value.reason == "outside_own_bases"
    red = next(s for s in state.soldiers if s.side == "red")
    with pytest.raises(IllegalAction) as refusal:
        _position(state, "blue", (red.id, red.x, red.y))
    assert refusal.value.reason == "not_your_soldier"


def test_overlapping_dots_are_refused_but_a_batch_is_checked_after_it_is_applied() -> None:
    state = _positioning()
    a, b = state.soldier("b1s2"), state.soldier("b1s3")
    with pytest.raises(IllegalAction) as refusal:
        _position(state, "blue", ("b1s2", b.x + 13.9, b.y))
    assert refusal.value.reason == "overlapping"
    # Swapping two soldiers in one batch is fine, though either move alone would overlap.
    state, _ = _position(state, "blue", ("b1s2", b.x, b.y), ("b1s3", a.x, a.y))
    assert (state.soldier("b1s2").x, state.soldier("b1s2").y) == (b.x, b.y)
    # Exactly two dot radii apart is not overlapping.
    c = state.soldier("b1s1")
    _position(state, "blue", ("b1s4", c.x, c.y - 14))


def test_a_dot_must_lie_wholly_on_the_page() -> None:
    state, _ = _draw(_blank("custom", bases_per_side=1), "blue", 40, 1360, 40)
    state, _ = _draw(state, "red", 500, 300, 80)
    with pytest.raises(IllegalAction) as refusal:
        _position(state, "blue", ("b1s1", 6.9, 1360))
    assert refusal.value.reason == "off_page"
    _position(state, "blue", ("b1s1", 7, 1393))


def test_ready_is_only_for_the_arranging_side_in_positioning() -> None:
    with pytest.raises(IllegalAction) as refusal:
        apply(_blank(), "blue", {"type": "ready"})
    assert refusal.value.reason == "wrong_phase"
