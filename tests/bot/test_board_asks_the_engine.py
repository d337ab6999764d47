"""The bot's board reads the rules from the engine rather than writing them again (issue 20, item 4):
who may flick now, who stands, who holds which wall and how full it is, and what a turn grants."""

from __future__ import annotations

import random

import numpy as np
import pytest

from dotfight.bot.board import Board, locate_homes
from dotfight.bot.evaluate import flicks_of
from dotfight.engine import RuleSet, flickable
from dotfight.engine.flick import flicks_granted, in_last_stand, steadiness_in
from dotfight.engine.guards import standing
from tests.engine.strategies import play_page


@pytest.mark.parametrize(("preset", "seed"), [("quick", 1), ("classic", 2), ("dawood", 3)])
def test_the_board_answers_as_the_engine_on_every_state_of_a_page(preset: str, seed: int) -> None:
    page = play_page(RuleSet.preset(preset), seed, random.Random(seed))
    for state in page.states[:: max(1, len(page.states) // 50)]:
        board = Board.of(state)
        index = state.soldier_index
        for side in ("blue", "red"):
            # Who may flick now: the engine's one answer (none out of turn, the lunger in a chain).
            assert board.flickable(side).tolist() == [index[s] for s in flickable(state, side)]
            # Who will flick in the side's turn, and who may hold its walls: the engine's `standing`.
            assert board.standing(side).tolist() == [
                j for j, s in enumerate(state.soldiers) if standing(s, side)
            ]
            living = board.count_alive(side)
            last_stand = living > 0 and in_last_stand(state.rules, living)
            expected = (flicks_granted(state.rules, last_stand), steadiness_in(state.rules, last_stand))
            assert flicks_of(board, side) == expected
        if not state.bases:
            continue
        arrays = state.arrays
        homes = [home if held else -1 for home, held in zip(arrays.home, arrays.counted, strict=True)]
        assert board.home.tolist() == homes
        assert board.garrison.tolist() == arrays.garrison
        assert board.fullness().tolist() == [state.fullness(b) for b in state.bases]


def test_locate_homes_with_nobody_or_no_base_holds_nothing() -> None:
    empty = np.zeros((0, 2))
    home, garrison = locate_homes(
        empty, np.zeros(0, dtype=bool), np.zeros(0, dtype=np.int64), np.array([[0.0, 0.0]]),
        np.array([10.0]), np.array([0]),
    )  # fmt: skip
    assert home.tolist() == [] and garrison.tolist() == [0]
    home, garrison = locate_homes(
        np.array([[0.0, 0.0]]), np.array([True]), np.array([0]), np.zeros((0, 2)), np.zeros(0),
        np.zeros(0, dtype=np.int64),
    )  # fmt: skip
    assert home.tolist() == [-1] and garrison.tolist() == []
