"""Dawood-bot only ever sends legal actions, through every phase of pages of every preset."""

from __future__ import annotations

import pytest

from dotfight.bot import STRENGTHS, DawoodBot
from dotfight.engine import RuleSet, apply, new_page
from tests.bot.botpages import play_bots


@pytest.mark.parametrize("preset", ["classic", "quick", "dawood"])
@pytest.mark.parametrize("seed", [1, 2, 3])
def test_easy_bots_play_whole_pages_of_every_preset_legally(preset: str, seed: int) -> None:
    page = play_bots(RuleSet.preset(preset), seed, "easy", "easy")
    assert page.final.phase == "over"
    assert page.final.winner in ("blue", "red")
    kinds = {action["type"] for _, action in page.log}
    assert {"draw_base", "ready", "flick"} <= kinds


@pytest.mark.parametrize(("bases", "soldiers"), [(1, 1), (1, 4), (2, 3), (8, 2), (3, 20)])
def test_bots_play_custom_sizes_legally(bases: int, soldiers: int) -> None:
    rules = RuleSet.preset("custom", bases_per_side=bases, soldiers_per_base=soldiers)
    page = play_bots(rules, 11 * bases + soldiers, "normal", "easy", max_turns=80)
    drawn = [a for _, a in page.log if a["type"] == "draw_base"]
    assert len(drawn) == 2 * bases
    assert page.final.phase in ("play", "over")


@pytest.mark.parametrize(("blue", "red", "seed"), [("normal", "normal", 4), ("hard", "normal", 5)])
def test_stronger_bots_play_a_quick_page_legally(blue: str, red: str, seed: int) -> None:
    page = play_bots(RuleSet.preset("quick"), seed, blue, red)
    assert page.final.phase == "over"
    flicks = [a for _, a in page.log if a["type"] == "flick"]
    assert "snipe" in {a["kind"] for a in flicks}


def test_bots_play_under_overridden_rules() -> None:
    rules = RuleSet.preset("quick", wall_loss_full=0.3, shake_full=0.2, last_stand_at=8, send_max=2)
    page = play_bots(rules, 21, "normal", "easy", max_turns=120)
    sends = [a for _, a in page.log if a["type"] == "send"]
    assert all(len(a["soldiers"]) <= 2 for a in sends)


@pytest.mark.parametrize("strength", list(STRENGTHS))
def test_the_same_seed_and_state_give_the_same_action(strength: str) -> None:
    page = play_bots(RuleSet.preset("quick"), 8, "easy", "easy", max_turns=6)
    state = page.final
    first = DawoodBot(strength, seed=99).choose(state)
    again = DawoodBot(strength, seed=99).choose(state)
    assert first == again
    # Its luck is its own: the page's generator (the server's future dice) changes nothing.
    assert DawoodBot(strength, seed=99).choose(state.with_rng(123456789)) == first


def test_the_bot_does_not_change_the_state_it_is_given() -> None:
    page = play_bots(RuleSet.preset("quick"), 9, "easy", "easy", max_turns=5)
    before = page.final.to_json()
    DawoodBot("hard", seed=3).choose(page.final)
    assert page.final.to_json() == before


def test_an_unknown_strength_is_refused() -> None:
    with pytest.raises(ValueError, match="unknown strength"):
        DawoodBot("grandmaster")


def test_a_finished_page_has_no_move() -> None:
    state = new_page(RuleSet.preset("quick"), 1)
    state, _ = apply(state, "blue", {"type": "resign"})
    with pytest.raises(ValueError, match="over"):
        DawoodBot().choose(state)
