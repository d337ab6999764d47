"""Dawood-bot's choices in set situations: it takes sure kills, re-mans thin bases, spares exposed roads."""

from __future__ import annotations

import math
from typing import Any

import pytest

from dotfight.bot import DawoodBot
from dotfight.engine import RuleSet, State, apply, new_page


def setup_done(rules: RuleSet, seed: int = 1, strength: str = "normal") -> State:
    """A page whose bases are drawn and soldiers arranged by two bots: blue to flick first."""
    bots = {"blue": DawoodBot(strength, seed=2 * seed), "red": DawoodBot(strength, seed=2 * seed + 1)}
    state = new_page(rules, seed)
    while state.phase != "play":
        side = state.actor
        assert side is not None
        state, _ = apply(state, side, bots[side].choose(state))
    return state


def edited(state: State, moves: dict[str, tuple[float, float]], dead: tuple[str, ...] = ()) -> State:
    """The same page with some soldiers moved or crossed out (through the exact JSON round trip)."""
    data: dict[str, Any] = state.to_json()
    for soldier in data["soldiers"]:
        if soldier["id"] in moves:
            soldier["x"], soldier["y"] = moves[soldier["id"]]
        if soldier["id"] in dead:
            soldier["alive"] = False
            soldier["cross"] = {"by": "garrison", "cause": "shot", "side": "blue"}
    return State.from_json(data)


def test_bases_are_drawn_in_the_own_half_and_spread_across_it() -> None:
    for preset in ("classic", "quick", "dawood"):
        rules = RuleSet.preset(preset)
        state = setup_done(rules)
        for side in ("blue", "red"):
            bases = state.bases_of(side)
            assert len(bases) == rules.bases_per_side
            for b in bases:
                assert (b.y - b.r >= rules.half_y) if side == "blue" else (b.y + b.r <= rules.half_y)
            xs = sorted(b.x for b in bases)
            assert xs[-1] - xs[0] >= 0.5 * rules.page_width


def test_a_man_on_open_paper_within_easy_reach_is_crossed_out() -> None:
    rules = RuleSet.preset("custom", bases_per_side=2, soldiers_per_base=6)
    state = setup_done(rules)
    blue_base = state.bases_of("blue")[0]
    victim = next(s for s in state.living("red"))
    # A red man wandered onto open paper 200 units in front of a blue base.
    state = edited(state, {victim.id: (blue_base.x, blue_base.y - blue_base.r - 200)})
    action = DawoodBot("hard", seed=5).choose(state)  # a steady hand: the choice, not the wobble, is tested
    assert action["type"] == "flick"
    crossed = 0
    for luck in range(20):
        _, events = apply(state.with_rng(luck), "blue", action)
        crossed += any(e["type"] == "crossed_out" and e["soldier"] == victim.id for e in events)
    assert crossed >= 14  # it may add power for a chance at a second man beyond


def _two_bases_one_thin(seed: int) -> tuple[State, list[Any]]:
    rules = RuleSet.preset("custom", bases_per_side=2, soldiers_per_base=8)
    state = setup_done(rules, seed=seed)
    thin = state.bases_of("blue")[1]
    inside = [s.id for s in state.living("blue") if thin.contains(s.x, s.y)]
    # The second blue base has lost all but one man.
    return edited(state, {}, dead=tuple(inside[1:])), state.bases_of("blue")


def test_a_thinned_base_is_manned_again_when_the_road_is_safe() -> None:
    state, bases = _two_bases_one_thin(seed=7)
    action = DawoodBot("normal", seed=1).choose(state)
    assert action["type"] == "send"
    assert action["to"] == bases[1].id
    assert 1 <= len(action["soldiers"]) <= 3  # send small


def test_no_convoy_walks_past_an_enemy_standing_by_the_road() -> None:
    state, bases = _two_bases_one_thin(seed=7)
    a, b = bases
    mid = ((a.x + b.x) / 2, (a.y + b.y) / 2)
    # Red men stand just off the middle of the road, looking along it.
    reds = [s.id for s in state.living("red")][:2]
    along = math.atan2(b.y - a.y, b.x - a.x)
    spots = {
        reds[0]: (mid[0] - 260 * math.cos(along) + 10, mid[1] - 260 * math.sin(along) - 60),
        reds[1]: (mid[0], mid[1] - 120),
    }
    state = edited(state, spots)
    action = DawoodBot("normal", seed=1).choose(state)
    assert action["type"] != "send"


def first_chain(rules: RuleSet, seed: int) -> State | None:
    """The first state of an easy-bot page in which a lunge chain is pending, if any arises."""
    bots = {"blue": DawoodBot("easy", seed=seed), "red": DawoodBot("easy", seed=seed + 1)}
    state = new_page(rules, seed)
    while state.actor is not None:
        if state.turn is not None and state.turn.chain is not None:
            return state
        state, _ = apply(state, state.actor, bots[state.actor].choose(state))
    return None


@pytest.mark.parametrize("strength", ["easy", "normal", "hard"])
def test_a_pending_chain_is_lunged_by_its_own_soldier_or_stopped(strength: str) -> None:
    rules = RuleSet.preset("quick")
    state = next(s for s in (first_chain(rules, seed) for seed in range(1, 30)) if s is not None)
    assert state.turn is not None and state.turn.chain is not None and state.actor is not None
    chosen = DawoodBot(strength, seed=4).choose(state)
    assert chosen["type"] in ("flick", "stop")
    if chosen["type"] == "flick":
        assert chosen["soldier"] == state.turn.chain.soldier
        assert chosen["kind"] == "lunge"
    apply(state, state.actor, chosen)  # accepted
