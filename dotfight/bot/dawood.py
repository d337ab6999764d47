"""Dawood-bot: a worthy opponent for every phase of a page.

Setup is planned (see `layout`). In play, each decision is one action: a send when one is worth its road,
else the flick whose sampled outcomes are worth most to the bot — candidates are forecast cheaply, the
most promising are played through the engine on copies of the page with the bot's own luck
(`state.with_rng`), and every outcome is judged by men crossed out against what the enemy's next turn is
likely to take. A pending lunge chain, or flicks left over, are weighed against stopping.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from dotfight.bot.board import Board
from dotfight.bot.candidates import Candidate, flick_candidates, promise
from dotfight.bot.evaluate import judge
from dotfight.bot.layout import arrangement, next_base
from dotfight.bot.luck import derive_seed, private_random
from dotfight.bot.sends import choose_send
from dotfight.bot.strength import STRENGTHS, Strength
from dotfight.engine import EngineError, State, apply
from dotfight.engine.flick import steadiness

Action = dict[str, Any]

# Positions closer than this to the planned spot count as arranged.
ARRANGED = 0.5
# "Flick soft to finish and hard only to gamble": a harder flick must show this much more (men per
# unit of power) in the few sampled outcomes, which cannot tell a sure soft shot from a lucky hard one.
SOFT = 0.1


class DawoodBot:
    """Chooses one legal PROTOCOL.md action for the side to act; deterministic given seed and state."""

    def __init__(self, strength: str = "normal", seed: int = 0) -> None:
        if strength not in STRENGTHS:
            raise ValueError(f"unknown strength {strength!r}: choose one of {', '.join(STRENGTHS)}")
        self.strength: Strength = STRENGTHS[strength]
        self.seed = int(seed)

    def choose(self, state: State) -> Action:
        """Returns the action Dawood-bot makes for `state.actor` now."""
        side = state.actor
        if side is None:
            raise ValueError("the page is over: nobody acts")
        board = Board.of(state)
        if board.phase == "bases":
            seed = derive_seed(self.seed, side, "bases") % 2**63
            return next_base(board, side, seed, self.strength.depth)
        if board.phase == "positioning":
            return self._arrange(state, board, side)
        return self._play(state, board, side)

    # --- setup ------------------------------------------------------------------------------------

    def _arrange(self, state: State, board: Board, side: str) -> Action:
        """A `position` toward the planned arrangement, then `ready` once the soldiers stand there."""
        rng = private_random(self.seed, side, "arrange")
        places = arrangement(board, side, rng, bait=self.strength.bait)
        moves = []
        for sid, (x, y) in places.items():
            k = board.index_of(sid)
            if abs(board.xy[k, 0] - x) > ARRANGED or abs(board.xy[k, 1] - y) > ARRANGED:
                moves.append({"id": sid, "x": x, "y": y})
        if not moves:
            return {"type": "ready"}
        action: Action = {"type": "position", "soldiers": moves}
        return action if _legal(state, side, action) else {"type": "ready"}

    # --- play -------------------------------------------------------------------------------------

    def _play(self, state: State, board: Board, side: str) -> Action:
        turn = board.turn
        rng = private_random(self.seed, side, board.version, "play")
        luck = [rng.getrandbits(127) for _ in range(self.strength.samples)]
        steady = steadiness(state)
        if turn.chain_soldier is not None:
            lunger = board.index_of(turn.chain_soldier)
            cands = flick_candidates(
                board, side, self.strength, shooters=np.array([lunger], dtype=np.int64), snipes=False
            )
            scored = [(c, promise(board, c, link=turn.chain_link, steady=steady)) for c in cands]
            return self._best(state, board, side, scored, luck, may_stop=True)
        if self.strength.sends and not turn.sent and turn.flicks_left >= 1:
            send = choose_send(board, side)
            if send is not None and _legal(state, side, send):
                return send
        cands = flick_candidates(board, side, self.strength)
        scored = [(c, promise(board, c, link=0, steady=steady)) for c in cands]
        bar = self.strength.lunge_bar
        kept = [(c, worth) for c, worth in scored if c.kind == "snipe" or worth >= bar]
        return self._best(state, board, side, kept or scored, luck, may_stop=turn.flicked)

    def _best(
        self,
        state: State,
        board: Board,
        side: str,
        scored: list[tuple[Candidate, float]],
        luck: list[int],
        *,
        may_stop: bool,
    ) -> Action:
        """The candidate (or `stop`) with the best mean value over the sampled luck; only the candidates
        of best `promise` (given with each) are tried, as many as the strength allows."""
        ranked = [c for c, _ in sorted(scored, key=lambda pair: -pair[1])][: self.strength.trials]
        best_action: Action | None = None
        best_value = float("-inf")
        if may_stop:
            stop: Action = {"type": "stop"}
            value = self._trial(state, side, stop, luck[:1])
            if value is not None:
                best_action, best_value = stop, value
        for cand in ranked:
            action = cand.action(board)
            value = self._trial(state, side, action, luck)
            if value is not None:
                value -= SOFT * cand.power
            if value is not None and value > best_value + 1e-9:
                best_action, best_value = action, value
        if best_action is None:
            return _fallback(state, board, side, [c for c, _ in scored])
        return best_action

    def _trial(self, state: State, side: str, action: Action, luck: list[int]) -> float | None:
        """The mean value of an action over the sampled luck, or None when the engine refuses it."""
        total = 0.0
        for seed in luck:
            try:
                after, _events = apply(state.with_rng(seed), side, action)
            except EngineError:
                return None
            total += judge(after, Board.of(after), side, self.strength)
        return total / max(1, len(luck))


def _fallback(state: State, board: Board, side: str, cands: list[Candidate]) -> Action:
    """A legal action when every trial was refused (a safety net: it should not happen)."""
    for cand in cands:
        if _legal(state, side, cand.action(board)):
            return cand.action(board)
    for soldier in state.flickable(side):  # type: ignore[arg-type]
        action: Action = {"type": "flick", "soldier": soldier, "kind": "snipe", "vector": [0.0, 1.5]}
        if _legal(state, side, action):
            return action
    return {"type": "stop"}


def _legal(state: State, side: str, action: Action) -> bool:
    """Whether the engine accepts the action now (tried on a copy with other luck)."""
    try:
        apply(state.with_rng(0), side, action)
    except EngineError:
        return False
    return True
