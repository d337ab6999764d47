"""The flick's shortcuts (issue 22 item 3, fifth round): a resolution handed the counted turn gives what
resolving in a state of that turn gives, `apply` leaves the given state as it was while it sets the new
state's version in place, and the coarse line test's own-side mask drops only the flicker's own men."""

from __future__ import annotations

import random

import pytest

from dotfight.engine import RuleSet, State, apply, new_page, resolve_lunge, resolve_snipe
from dotfight.engine.geometry import circles_near_line
from dotfight.engine.state import evolve
from dotfight.engine.values import Turn
from tests.engine.conftest import Page, flick
from tests.engine.strategies import play_page


def _states_in_play(seed: int) -> list[State]:
    """Every state of one random page while a turn is in play."""
    rules = RuleSet.preset("quick")
    page = play_page(rules, seed, random.Random(seed))
    state, states = new_page(rules, seed), []
    for entry in page.log:
        if state.phase == "play" and state.turn is not None:
            states.append(state)
        state, _ = apply(state, entry["side"], entry["action"])
    return states


@pytest.mark.parametrize("seed", [1, 2, 3])
def test_a_counted_turn_handed_over_resolves_as_a_state_of_it(seed: int) -> None:
    chooser = random.Random(seed)
    checked = 0
    for state in _states_in_play(seed):
        turn = state.turn
        assert turn is not None
        if turn.chain is not None:
            continue
        counted = Turn(turn.side, turn.number, turn.flicks_left - 1, None, turn.sent, turn.last_stand, True)
        mine = [s.id for s in state.soldiers if s.side == turn.side and s.alive and not s.on_road]
        if not mine:
            continue
        soldier = chooser.choice(mine)
        vector = (chooser.uniform(-300, 300), chooser.uniform(-300, 300))
        for resolve in (resolve_snipe, resolve_lunge):
            handed = resolve(state, soldier, vector, counted_turn=counted)
            made = resolve(evolve(state, turn=counted), soldier, vector)
            assert handed[1] == made[1]
            assert handed[0] == made[0] and handed[0].turn == made[0].turn
            checked += 1
    assert checked > 20


def test_apply_leaves_the_given_state_as_it_was() -> None:
    for state in _states_in_play(4)[:60]:
        before = state.to_json()
        side = state.actor
        assert side is not None
        soldier = next(s.id for s in state.soldiers if s.side == side and s.alive and not s.on_road)
        action = {"type": "flick", "soldier": soldier, "kind": "snipe", "vector": [0.0, 40.0]}
        after, _ = apply(state, side, action)
        assert state.to_json() == before and after is not state
        assert after.version == state.version + 1


@pytest.mark.parametrize("side", ["blue", "red"])
def test_the_coarse_test_leaves_out_only_the_flickers_own_men(side: str) -> None:
    state = _states_in_play(5)[10]
    arrays, fixed = state.arrays, state.base_arrays
    chooser = random.Random(side)
    own = {fixed.n_bases + j for j, s in enumerate(state.soldiers) if s.side == side}
    for _ in range(200):
        px, py = chooser.uniform(0, 1000), chooser.uniform(0, 1400)
        ux, uy = chooser.uniform(-1, 1), chooser.uniform(-1, 1)
        norm = (ux * ux + uy * uy) ** 0.5
        ux, uy = ux / norm, uy / norm
        every = circles_near_line(arrays.centres, fixed.near2, px, py, ux, uy)
        masked = circles_near_line(arrays.centres, fixed.near2_against[side], px, py, ux, uy)
        assert masked == [i for i in every if i not in own]


def test_pages_with_the_same_bases_but_other_men_do_not_share_the_own_side_mask() -> None:
    # Built by hand, two pages may hold the same bases (here none) and as many men, on other sides: the
    # bases' views they share would leave the wrong men out of the coarse test.
    def snipe_on(men: list[tuple[str, int, int, str]]) -> list[dict[str, object]]:
        page = Page()
        for side, x, y, name in men:
            page.man(side, x, y, name)
        _, events = flick(page.build(), "blue", "gun", "snipe", (0, -150))
        return events

    events = snipe_on(
        [
            ("blue", 500, 1300, "gun"),
            ("blue", 500, 1200, "friend"),
            ("red", 100, 100, "far"),
            ("red", 900, 100, "farther"),
        ]
    )
    assert [e["type"] for e in events] == ["ink", "turn"]  # his friend is passed freely
    events = snipe_on(
        [
            ("blue", 500, 1300, "gun"),
            ("red", 500, 1200, "foe"),
            ("blue", 100, 100, "far"),
            ("red", 900, 100, "farther"),
        ]
    )
    assert [e["type"] for e in events] == ["ink", "crossed_out", "turn"]
    assert events[1]["soldier"] == "foe"
