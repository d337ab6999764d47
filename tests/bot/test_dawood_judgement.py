"""How Dawood-bot judges a page: a stranded lunger costs about a man (issue 8)."""

from __future__ import annotations

from typing import Any

import pytest

from dotfight.bot.board import Board
from dotfight.bot.evaluate import judge
from dotfight.engine import RuleSet, State
from tests.bot.test_dawood_choices import setup_done


def _handed_to_red(state: State, moves: dict[str, tuple[float, float]]) -> State:
    """The same page with some soldiers moved and red to flick (blue's turn over)."""
    data: dict[str, Any] = state.to_json()
    for soldier in data["soldiers"]:
        if soldier["id"] in moves:
            soldier["x"], soldier["y"] = moves[soldier["id"]]
    data["side_to_act"] = data["turn"]["side"] = "red"
    data["turn"]["number"] = 2
    return State.from_json(data)


@pytest.mark.parametrize("seed", [3, 4, 5])
def test_a_stranded_lunger_beside_a_full_enemy_base_costs_about_a_man(seed: int) -> None:
    state = setup_done(RuleSet.preset("quick"), seed=seed)
    red_base, blue_base = state.bases_of("red")[0], state.bases_of("blue")[0]
    man = next(s for s in state.living("blue") if blue_base.contains(s.x, s.y))
    home = _handed_to_red(state, {})
    # He ran out of his base and stopped 45 units in front of a full red garrison: red surely hits him.
    stranded = _handed_to_red(state, {man.id: (red_base.x, red_base.y + red_base.r + 45)})
    cost = judge(home, Board.of(home), "blue") - judge(stranded, Board.of(stranded), "blue")
    assert 0.75 <= cost <= 1.25, cost


def test_a_man_arranged_just_outside_his_wall_is_not_stranded() -> None:
    state = setup_done(RuleSet.preset("quick"), seed=3)
    blue_base = state.bases_of("blue")[0]
    man = next(s for s in state.living("blue") if blue_base.contains(s.x, s.y))
    home = _handed_to_red(state, {})
    # Behind his base (away from red), 12 units outside the wall: inside the outside margin.
    beside = _handed_to_red(state, {man.id: (blue_base.x, blue_base.y + blue_base.r + 12)})
    cost = judge(home, Board.of(home), "blue") - judge(beside, Board.of(beside), "blue")
    assert cost < 0.3, cost
