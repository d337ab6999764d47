"""The enemy's answer, played out: how much a side's best next flick is likely to take.

The strong strengths do not trust a formula for the enemy's reply. For a board the bot is judging, it lets
the enemy pick its few most promising flicks (the same candidates and forecast the bot uses for itself)
and plays each once through the engine with the bot's own luck. The best of them, in men crossed out
(own men lost count against it, a bonus flick or a lunge chain a little for it), is what the enemy
is expected to take.
"""

from __future__ import annotations

from dotfight.bot.board import Board
from dotfight.bot.candidates import flick_candidates, promise
from dotfight.bot.strength import Strength
from dotfight.engine import EngineError, Event, State, apply

# A bonus flick or one more lunge in hand is worth a share of a man (it may come to nothing).
CREDIT_WORTH = 0.35

REPLY = Strength("reply", pairs=6, trials=3, samples=1, rows=True, gamble=False, sends=False,
                 arranges=False, bait=0.0, caution=0.0)


def flick_gain(state: State, side: str, events: list[Event]) -> float:
    """Men of the other side crossed out minus own men lost, plus a share for credits won."""
    gain = 0.0
    for event in events:
        kind = event["type"]
        if kind == "crossed_out":
            gain += -1.0 if state.soldier(event["soldier"]).side == side else 1.0
        elif kind == "bonus":
            gain += CREDIT_WORTH * (1 if event["reason"] == "two_with_one_bullet" else event["credits"])
        elif kind == "game_over":
            gain += 100.0 if event["winner"] == side else -100.0
    return gain


def best_reply(state: State, board: Board, side: str, seed: int, tries: int = REPLY.trials) -> float:
    """The most the side to act (`side`) is expected to gain with its next flick (never below 0)."""
    chain = board.turn.chain_soldier if board.turn.side == side else None
    shooters = None
    if chain is not None:
        import numpy as np

        shooters = np.array([board.index_of(chain)], dtype=np.int64)
    cands = flick_candidates(board, side, REPLY, shooters=shooters, snipes=chain is None)
    steady = board.params.last_stand_steady if _in_last_stand(board, side) else 1.0
    link = board.turn.chain_link if chain is not None else 0
    ranked = sorted(cands, key=lambda c: -promise(board, c, link=link, steady=steady))[:tries]
    lucky = state.with_rng(seed)
    best = 0.0
    for cand in ranked:
        try:
            _after, events = apply(lucky, side, cand.action(board))
        except EngineError:
            continue
        best = max(best, flick_gain(state, side, events))
    return best


def _in_last_stand(board: Board, side: str) -> bool:
    p = board.params
    if board.turn.side == side:
        return board.turn.last_stand
    return 0 < board.count_alive(side) <= p.last_stand_at
