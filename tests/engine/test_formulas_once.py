"""Every formula once (issue 20, item 4): the rule questions the engine's views, its hot paths, the
server and the bot share answer alike wherever they are asked — one `flickable`, the holders of a wall
(one soldier at a time and all at once), a wall's fullness, the flicks a turn grants, the circles a line
meets, and whether an accepted action changes nothing — and the views pages share change no answer."""

from __future__ import annotations

import json
import math
import random

import numpy as np
import pytest

from dotfight.engine import (
    RuleSet,
    State,
    apply,
    changes_nothing,
    flickable,
    interning,
    new_page,
    turn_options,
)
from dotfight.engine.flick import (
    NO_HOLDER,
    NO_WALL,
    SIDE_CODES,
    flicks_granted,
    fullness,
    holder_codes,
    holds,
    steadiness,
    steadiness_in,
    wall_holders,
)
from dotfight.engine.geometry import Circle
from dotfight.engine.guards import standing
from dotfight.engine.views import Arrays
from tests.engine.strategies import PlayedPage, play_page


def played(preset: str, seed: int) -> PlayedPage:
    return play_page(RuleSet.preset(preset), seed, random.Random(seed))


PAGES = [("quick", 1), ("quick", 2), ("classic", 3), ("dawood", 4)]


@pytest.mark.parametrize(("preset", "seed"), PAGES)
def test_the_state_s_flickable_is_the_rule_question_s_in_every_phase_and_turn(preset: str, seed: int) -> None:
    # Before: State.flickable named the side's standing men whoever's turn it was and in any phase,
    # while query.flickable (what apply lets flick) named none out of turn; the bot asked the first.
    page = played(preset, seed)
    out_of_turn = 0
    for state in page.states:
        for side in ("blue", "red"):
            assert state.flickable(side) == flickable(state, side)
            if state.actor != side and any(standing(s, side) for s in state.soldiers):
                assert flickable(state, side) == []
                out_of_turn += 1
    assert out_of_turn > 0


@pytest.mark.parametrize(("preset", "seed"), PAGES)
def test_the_views_holders_are_holds_asked_soldier_by_soldier(preset: str, seed: int) -> None:
    page = played(preset, seed)
    for state in page.states[:: max(1, len(page.states) // 40)]:
        if not state.bases:
            continue
        arrays = state.arrays
        for j, soldier in enumerate(state.soldiers):
            held = [i for i, base in enumerate(state.bases) if holds(soldier, base)]
            assert held == ([arrays.home[j]] if arrays.counted[j] else [])
        assert arrays.garrison == [sum(holds(s, b) for s in state.soldiers) for b in state.bases]
        assert [state.fullness(b) for b in state.bases] == [
            min(1.0, n / b.capacity) for n, b in zip(arrays.garrison, state.bases, strict=True)
        ]


def test_wall_holders_counts_a_man_on_the_wall_as_inside_as_base_contains_does() -> None:
    page, _ = apply(new_page(RuleSet.preset("quick"), seed=7), "blue", {"type": "quick_setup"})
    base = page.base("b3")
    rng = random.Random(5)
    # Points on the wall (as exactly as floats allow), just inside and just outside it, and far away.
    points = []
    for _ in range(200):
        angle = rng.uniform(0, 2 * math.pi)
        for r in (base.r, math.nextafter(base.r, 0), math.nextafter(base.r, math.inf), base.r * 3):
            points.append((base.x + r * math.cos(angle), base.y + r * math.sin(angle)))
    xs = np.array([x for x, _ in points])
    ys = np.array([y for _, y in points])
    codes = np.full(len(points), SIDE_CODES["blue"])
    walls = (np.array([base.x, 0.0]), np.array([base.y, 0.0]), np.array([base.r**2, math.inf]))
    home, held, garrison = wall_holders(xs, ys, codes, *walls, np.array([SIDE_CODES["blue"], NO_WALL]))
    inside = [base.contains(x, y) for x, y in points]
    assert held.tolist() == inside and home.tolist() == [0 if i else 1 for i in inside]
    assert garrison.tolist() == [sum(inside)] and 0 < sum(inside) < len(points)
    red = wall_holders(xs, ys, codes, *walls, np.array([SIDE_CODES["red"], NO_WALL]))
    down = wall_holders(xs, ys, np.full(len(points), NO_HOLDER), *walls, np.array([1, NO_WALL]))
    assert not red[1].any() and not down[1].any()


def test_holder_codes_are_standing_with_the_soldier_s_side() -> None:
    page = played("quick", 2).final
    expected = [SIDE_CODES[s.side] if standing(s, s.side) else NO_HOLDER for s in page.soldiers]
    assert holder_codes(page.soldiers) == expected and NO_HOLDER in expected


def test_fullness_is_one_formula_for_a_number_and_for_arrays() -> None:
    garrisons, capacities = [0, 3, 8, 11], [8, 8, 8, 4]
    scalars = [fullness(n, c) for n, c in zip(garrisons, capacities, strict=True)]
    assert scalars == [0.0, 0.375, 1.0, 1.0]
    assert fullness(np.array(garrisons), np.array(capacities, dtype=float)).tolist() == scalars


@pytest.mark.parametrize(("preset", "seed"), PAGES)
def test_every_turn_grants_flicks_granted_and_draws_at_steadiness_in(preset: str, seed: int) -> None:
    page = played(preset, seed)
    rules = page.rules
    turns = 0
    for state, events in zip(page.states[1:], page.events, strict=True):
        for event in events:
            if event["type"] == "turn":
                assert event["flicks"] == flicks_granted(rules, event["last_stand"])
                turns += 1
        options = turn_options(state)
        if options is not None and state.turn is not None:
            assert steadiness(state) == steadiness_in(rules, state.turn.last_stand) == options["steadiness"]
    assert turns > 2


@pytest.mark.parametrize(("preset", "seed"), PAGES)
def test_the_circles_a_line_meets_are_the_walls_it_crosses_and_the_dots_it_touches(
    preset: str, seed: int
) -> None:
    state = next(s for s in played(preset, seed).states if s.phase == "play")
    arrays = state.arrays
    rng = random.Random(seed)
    for _ in range(30):
        px, py = rng.uniform(0, state.rules.page_width), rng.uniform(0, state.rules.page_height)
        angle = rng.uniform(-math.pi, math.pi)
        ux, uy = math.cos(angle), math.sin(angle)
        side = rng.choice(("blue", "red"))
        met = {i: (near, far) for i, near, far in arrays.crossings(px, py, ux, uy, side)}
        for i, base in enumerate(state.bases):
            # Circle.crossings keeps the crossings ahead of P; the line's are both ways.
            ahead = [t for t in met.get(i, ()) if t > 1e-7]
            assert ahead == Circle(base.x, base.y, base.r).crossings(px, py, ux, uy)
        radius = state.rules.dot_radius
        for j, soldier in enumerate(state.soldiers):
            gap = abs((soldier.x - px) * uy - (soldier.y - py) * ux)  # the line's distance from his centre
            along = (soldier.x - px) * ux + (soldier.y - py) * uy
            if abs(gap - radius) < 1e-6 or abs(along) < radius + 1e-6:
                continue  # too near a boundary to tell by these sums
            enemy = soldier.alive and soldier.side != side
            assert (arrays.n_bases + j in met) == (enemy and gap < radius and along > 0)
            if arrays.n_bases + j in met:
                near, far = met[arrays.n_bases + j]
                assert 0.0 < near <= far and math.isclose(near + far, 2 * along)


def test_changes_nothing_is_asked_of_the_engine_and_the_server_asks_it() -> None:
    from dotfight.server.pages import authority

    page, _ = apply(new_page(RuleSet.preset("quick"), seed=7), "blue", {"type": "quick_setup"})
    man = page.soldier("b3s1")
    assert changes_nothing(page, {"type": "position", "soldiers": []})
    assert changes_nothing(page, {"type": "position", "soldiers": [{"id": man.id, "x": man.x, "y": man.y}]})
    moved = {"type": "position", "soldiers": [{"id": man.id, "x": man.x, "y": man.y + 1}]}
    assert not changes_nothing(page, moved)
    assert not changes_nothing(page, {"type": "position", "soldiers": [{"id": "b9s9", "x": 0, "y": 0}]})
    assert not changes_nothing(page, {"type": "ready"})
    after, _ = apply(page, "blue", moved)
    assert after.soldier(man.id).y == man.y + 1  # what it calls a change is one
    assert authority.changes_nothing is changes_nothing  # the server's rule is the engine's


@pytest.mark.parametrize(("preset", "seed"), [("quick", 3), ("classic", 5)])
def test_shared_views_change_no_answer(preset: str, seed: int) -> None:
    # Pages set up alike share their layout views (interning.py); a page that built every view itself
    # (the shared ones forgotten before each move) plays the same events, options and states.
    page = played(preset, seed)
    state: State = new_page(page.rules, page.seed)
    for entry, events, expected in zip(page.log, page.events, page.states[1:], strict=True):
        interning._shared_views.clear()
        fresh = State.from_json(json.loads(json.dumps(state.to_json())))  # no view carried over
        after, fresh_events = apply(fresh, entry["side"], entry["action"])
        assert fresh_events == events
        assert after == expected and turn_options(after) == turn_options(expected)
        assert Arrays.build(after).garrison == expected.arrays.garrison
        state = expected
