"""What a page is worth to one side: men alive, and what the next flicks are likely to change.

Material counts one per soldier. When the turn has passed to the enemy, the side fears the enemy's
answer: the strong strengths play the enemy's most promising flicks out through the engine (`reply`),
the easy one trusts a formula of snipe chances (`threat.danger`). While the turn is still its own (a
bonus flick, a lunge chain, last stand's second flick), it counts on a share of its own best next flick.
A won page outweighs everything.
"""

from __future__ import annotations

import numpy as np

from dotfight.bot.board import Board, other
from dotfight.bot.reply import best_reply
from dotfight.bot.strength import Strength
from dotfight.bot.threat import danger, shot_table
from dotfight.engine import EngineError, State, apply

WIN = 1000.0
# A flick still in hand is worth a share of the best it could do (it may be spent on a worse one).
FLICK_IN_HAND = 0.7
# A pending lunge chain is worth less than a free flick: the same soldier, a shakier hand.
CHAIN_IN_HAND = 0.5


def flicks_of(board: Board, side: str) -> tuple[int, float]:
    """The flicks a side gets in its next turn, and the factor on its spreads (last stand)."""
    p = board.params
    if 0 < board.count_alive(side) <= p.last_stand_at:
        return p.last_stand_flicks, p.last_stand_steady
    return 1, 1.0


def judge(state: State, board: Board, side: str, strength: Strength, seed: int) -> float:
    """The value of the page `state` (read into `board`) for `side`: higher is better.

    When the turn is still the side's own, the page is judged as if it stopped now (so the enemy's
    answer is always counted) plus a share of what its next flick is likely to add.
    """
    enemy = other(side)
    if board.winner is not None or board.phase != "play":
        return _final(board, side)
    in_hand = 0.0
    if board.actor == side:
        if strength.replies:
            in_hand = best_reply(state, board, side, seed, tries=strength.replies)
        else:
            in_hand = _static_in_hand(board, side)
        in_hand *= CHAIN_IN_HAND if board.turn.chain_soldier else FLICK_IN_HAND
        state = _stopped(state, side)
        board = Board.of(state)
        if board.winner is not None or board.phase != "play":
            return _final(board, side)
    material = float(board.count_alive(side) - board.count_alive(enemy))
    flicks, steady = flicks_of(board, enemy)
    # Standing liabilities on both sides: every man's best chance of being hit by the other side.
    own_flicks, own_steady = flicks_of(board, side)
    spread = danger(board, enemy, flicks=flicks, steady=steady, spread_weight=0.0, per_target=True) - danger(
        board, side, flicks=own_flicks, steady=own_steady, spread_weight=0.0, per_target=True
    )
    if strength.replies:
        reply = best_reply(state, board, enemy, seed, tries=strength.replies) * flicks
    else:
        reply = danger(board, enemy, flicks=flicks, steady=steady, spread_weight=0.0)
    return material + max(0.0, in_hand) - strength.caution * (reply + strength.spread * spread)


def _final(board: Board, side: str) -> float:
    """A page that is over (or not yet in play): won, lost, or just the men standing."""
    material = float(board.count_alive(side) - board.count_alive(other(side)))
    if board.winner == side:
        return WIN + material
    if board.winner is not None:
        return -WIN + material
    return material


def _stopped(state: State, side: str) -> State:
    """The page after the side stops now: its chain dropped and its turn handed over."""
    for _ in range(2):  # a chain's stop may leave flicks; a second stop ends the turn
        if state.actor != side:
            break
        try:
            state, _events = apply(state, side, {"type": "stop"})
        except EngineError:
            break
    return state


def _static_in_hand(board: Board, side: str) -> float:
    """A formula's worth of the side's next flick: a share of its best snipe chance."""
    enemy = other(side)
    steady = board.params.last_stand_steady if board.turn.last_stand else 1.0
    if board.turn.chain_soldier is not None:
        shooter = board.index_of(board.turn.chain_soldier)
        table = shot_table(board, np.array([shooter]), board.living(enemy), steady=steady)
        best = float(table.hit.max()) if table.hit.size else 0.0
        return CHAIN_IN_HAND * best
    table = shot_table(board, board.flickable(side), board.living(enemy), steady=steady)
    best = float(table.hit.max()) if table.hit.size else 0.0
    return FLICK_IN_HAND * best * max(1, board.turn.flicks_left)
