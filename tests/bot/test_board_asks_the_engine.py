"""The bot's board reads the rules from the engine rather than writing them again (issue 20, item 4):
who may flick now, who stands, who holds which wall and how full it is, and what a turn grants."""

from __future__ import annotations

import random

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
        # Who holds which wall: the engine's views, and the same answer worked out afresh from the
        # board's own arrays (as the bot does for a board it imagines, sends._arrive).
        arrays = state.arrays
        homes = [home if held else -1 for home, held in zip(arrays.home, arrays.counted, strict=True)]
        assert board.home.tolist() == homes and board.garrison.tolist() == arrays.garrison
        home, garrison = locate_homes(board.xy, board.stands, board.soldier_side, board.walls)
        assert home.tolist() == homes and garrison.tolist() == arrays.garrison
        assert board.fullness().tolist() == [state.fullness(b) for b in state.bases]


def test_an_imagined_board_s_holders_follow_its_men() -> None:
    state = next(
        s for s in play_page(RuleSet.preset("quick"), 4, random.Random(4)).states if s.phase == "play"
    )
    board = Board.of(state)
    blue_base = int(board.bases_of("blue")[0])
    walker = int(board.standing("blue")[0])
    xy = board.xy.copy()
    xy[walker] = board.base_xy[blue_base]  # he walks to the middle of blue's first base
    home, garrison = locate_homes(xy, board.stands, board.soldier_side, board.walls)
    assert home[walker] == blue_base
    before = board.garrison[blue_base] - (board.home[walker] == blue_base)
    assert garrison[blue_base] == before + 1
