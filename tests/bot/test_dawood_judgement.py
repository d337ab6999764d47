"""How Dawood-bot judges a page: a stranded lunger costs about a man (issue 8)."""

from __future__ import annotations

from typing import Any

import pytest

from dotfight.bot.board import Board
from dotfight.bot.evaluate import judge
from dotfight.engine import RuleSet, State
from tests.bot.test_dawood_choices import setup_done


def _moved(state: State, moves: dict[str, tuple[float, float]], turn: dict[str, Any]) -> State:
    """The same page with some soldiers moved and the turn's fields replaced."""
    data: dict[str, Any] = state.to_json()
    for soldier in data["soldiers"]:
        if soldier["id"] in moves:
            soldier["x"], soldier["y"] = moves[soldier["id"]]
    data["turn"].update(turn)
    data["side_to_act"] = data["turn"]["side"]
    return State.from_json(data)


def _handed_to_red(state: State, moves: dict[str, tuple[float, float]]) -> State:
    """The same page with some soldiers moved and red to flick (blue's turn over)."""
    return _moved(state, moves, {"side": "red", "number": 2})


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


def _in_chain(state: State, man: str, at: tuple[float, float]) -> State:
    """The same page, blue's turn, `man` standing at `at` with a lunge chain pending (one credit): he
    has just crossed a man out and may lunge again."""
    chain = {"soldier": man, "credits": 1, "link": 1}
    return _moved(state, {man: at}, {"chain": chain, "flicks_left": 0, "flicked": True})


@pytest.mark.parametrize("seed", [3, 4, 5])
def test_a_lunger_whose_chain_is_pending_is_not_charged_as_stranded(seed: int) -> None:
    # The same lunger beside a full red garrison, once with his turn over (stranded: about a man) and
    # once with his chain still pending: he may run on or home, so the judge weighs that, not a stop.
    state = setup_done(RuleSet.preset("quick"), seed=seed)
    red_base, blue_base = state.bases_of("red")[0], state.bases_of("blue")[0]
    man = next(s for s in state.living("blue") if blue_base.contains(s.x, s.y))
    spot = (red_base.x, red_base.y + red_base.r + 45)
    home = _handed_to_red(state, {})
    stranded = _handed_to_red(state, {man.id: spot})
    pending = _in_chain(state, man.id, spot)
    assert pending.flickable("blue") == [man.id]
    at_home = judge(home, Board.of(home), "blue")
    cost_stranded = at_home - judge(stranded, Board.of(stranded), "blue")
    cost_pending = at_home - judge(pending, Board.of(pending), "blue")
    # Judged as a stop with a share of his next lunge (the old judge) he still cost 0.34-0.38 of a man.
    assert cost_stranded > 0.75
    assert cost_pending < 0.2, (cost_pending, cost_stranded)
