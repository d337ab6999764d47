"""Dawood-bot: a worthy opponent for every phase of a page.

Setup is planned (see `layout`): bases in a zig-zag, and a share of the men standing just outside their
walls, behind and beside them, one as bait. In play, each decision is one action: a send when one is worth
its road, else the flick whose sampled outcomes are worth most to the bot. Candidates (snipes and lunges
alike) are forecast cheaply; the most promising are played through the engine on copies of the page with
the bot's own luck (`state.with_rng`) and judged (`evaluate`) by what a person weighs: men crossed out,
chain credits and where the chain can run, how exposed every man ends, walls thinned, last stand. The
search halves the field round by round, doubling the luck sampled for the survivors, and can stop at any
moment with the best found so far (a wall-clock budget). A pending chain, or flicks left, are weighed
against stopping.
"""

from __future__ import annotations

import math
import time
from typing import Any

import numpy as np

from dotfight.bot.board import Board
from dotfight.bot.candidates import Candidate, flick_candidates, promise
from dotfight.bot.evaluate import judge
from dotfight.bot.layout import arrangement, next_base
from dotfight.bot.luck import derive_seed, private_random
from dotfight.bot.rules import legal, steadiness
from dotfight.bot.sends import choose_send
from dotfight.bot.strength import POLICIES, STRENGTHS, Strength
from dotfight.engine import EngineError, State, apply

Action = dict[str, Any]

# Positions closer than this to the planned spot count as arranged.
ARRANGED = 0.5
# "Flick soft to finish and hard only to gamble": a harder flick must show this much more (men per
# unit of power) in the few sampled outcomes, which cannot tell a sure soft shot from a lucky hard one.
SOFT = 0.1
# Where the bot's bases sit, from the middle line (0) to the back edge of its half (1).
DEPTH = 0.47


class DawoodBot:
    """Chooses one legal PROTOCOL.md action for the side to act; deterministic given its strength, seed,
    policy and the state when no time budget is given.

    >>> from dotfight.engine import RuleSet, apply, new_page
    >>> page, _ = apply(new_page(RuleSet.preset("quick"), seed=3), "blue", {"type": "quick_setup"})
    >>> bot = DawoodBot("easy", seed=1, policy="no-outside")
    >>> bot.choose(page)
    {'type': 'ready'}
    """

    def __init__(self, strength: str = "normal", seed: int = 0, policy: str = "full") -> None:
        if strength not in STRENGTHS:
            raise ValueError(f"unknown strength {strength!r}: choose one of {', '.join(STRENGTHS)}")
        if policy not in POLICIES:
            raise ValueError(f"unknown policy {policy!r}: choose one of {', '.join(POLICIES)}")
        self.strength: Strength = STRENGTHS[strength]
        self.seed = int(seed)
        self.policy = policy

    def choose(self, state: State, budget_s: float | None = None) -> Action:
        """Returns the action Dawood-bot makes for `state.actor` now.

        With `budget_s` (seconds of wall time) the search stops when the budget runs out and the best
        action found so far is played (always a legal one); without, the choice is a pure function of
        (strength, seed, policy, state).
        """
        side = state.actor
        if side is None:
            raise ValueError("the page is over: nobody acts")
        deadline = None if budget_s is None else time.perf_counter() + max(0.0, budget_s)
        board = Board.of(state)
        if board.phase == "bases":
            seed = derive_seed(self.seed, side, "bases") % 2**63
            return next_base(state, board, side, seed, DEPTH)
        if board.phase == "positioning":
            return self._arrange(state, board, side)
        action = self._play(state, board, side, deadline)
        return self._wobbled(action, side, board.version)

    def _wobbled(self, action: Action, side: str, version: int) -> Action:
        """A person's hand: the chosen flick leaves a little off its aim (easy and normal; hard is steady)."""
        wobble = self.strength.wobble
        if action["type"] != "flick" or not wobble:
            return action
        turn = private_random(self.seed, side, version, "hand").gauss(0.0, wobble)
        dx, dy = action["vector"]
        cos, sin = math.cos(turn), math.sin(turn)
        return {**action, "vector": [dx * cos - dy * sin, dx * sin + dy * cos]}

    # --- setup ------------------------------------------------------------------------------------

    def _arrange(self, state: State, board: Board, side: str) -> Action:
        """One `position` batch with the planned arrangement, then `ready`."""
        rng = private_random(self.seed, side, "arrange")
        places = arrangement(state, board, side, rng, outside=self.policy != "no-outside")
        moves = []
        for sid, (x, y) in places.items():
            k = board.index_of(sid)
            if abs(board.xy[k, 0] - x) > ARRANGED or abs(board.xy[k, 1] - y) > ARRANGED:
                moves.append({"id": sid, "x": x, "y": y})
        while moves:
            action: Action = {"type": "position", "soldiers": moves}
            if legal(state, side, action):
                return action
            moves.pop()  # two spots too close for the engine: drop the last planned until it agrees
        return {"type": "ready"}

    # --- play -------------------------------------------------------------------------------------

    def _play(self, state: State, board: Board, side: str, deadline: float | None) -> Action:
        turn = board.turn
        lunges = self.policy != "snipe-only"
        steady = steadiness(state)
        if turn.chain_soldier is not None:
            if not lunges:
                return {"type": "stop"}
            lunger = board.index_of(turn.chain_soldier)
            cands = flick_candidates(
                board, side, self.strength, shooters=np.array([lunger], dtype=np.int64), snipes=False
            )
            scored = [(c, promise(board, c, link=turn.chain_link, steady=steady)) for c in cands]
            return self._search(state, board, side, scored, deadline, may_stop=True)
        if not turn.sent and turn.flicks_left >= 1 and not _past(deadline):
            send = choose_send(state, board, side)
            if send is not None:
                return send
        cands = flick_candidates(board, side, self.strength, lunges=lunges)
        scored = [
            (c, promise(board, c, link=0, steady=steady) if not _past(deadline) else 0.0) for c in cands
        ]
        return self._search(state, board, side, scored, deadline, may_stop=turn.flicked)

    def _search(
        self,
        state: State,
        board: Board,
        side: str,
        scored: list[tuple[Candidate, float]],
        deadline: float | None,
        *,
        may_stop: bool,
    ) -> Action:
        """The candidate (or `stop`) of best mean judged worth over the sampled luck.

        The `width` candidates of best `promise` are each tried on `first` samples of luck; each round
        keeps the better half and doubles their samples (the same luck for all, so they are compared on
        equal dice). With a deadline the search stops early and plays the best found so far.
        """
        strength = self.strength
        rng = private_random(self.seed, side, board.version, "play")
        if strength.noise:  # the easy bot misjudges which flicks look good, too
            scored = [(cand, worth + rng.gauss(0.0, strength.noise)) for cand, worth in scored]
        ranked: list[tuple[Action, float]] = []
        for cand, _worth in sorted(scored, key=lambda pair: -pair[1]):
            action = cand.action(board)
            if legal(state, side, action):  # asked of the engine, nothing resolved
                ranked.append((action, SOFT * cand.power))
            if len(ranked) == strength.width:
                break
        samples = strength.first * 2**strength.rounds
        luck = [rng.getrandbits(127) for _ in range(samples)]
        slips = [rng.gauss(0.0, strength.noise) if strength.noise else 0.0 for _ in ranked]
        if not ranked:
            return {"type": "stop"} if may_stop else _fallback(state, board, side)
        best_action, best_value = ranked[0][0], -math.inf
        if may_stop:
            stop: Action = {"type": "stop"}
            value = self._trial(state, side, stop, luck[0])
            if value is not None:
                best_action, best_value = stop, value
        totals = [0.0] * len(ranked)
        counts = [0] * len(ranked)
        active = list(range(len(ranked)))
        want = strength.first
        spent = 0.0
        for round_ in range(strength.rounds + 1):
            for i in active:
                while counts[i] < want:
                    started = time.perf_counter()
                    if deadline is not None and started + spent > deadline:
                        return _pick(ranked, totals, counts, slips, best_action, best_value)
                    value = self._trial(state, side, ranked[i][0], luck[counts[i]])
                    spent = time.perf_counter() - started
                    if value is None:  # refused after all: never chosen
                        totals[i], counts[i] = -math.inf, want
                        break
                    totals[i] += value
                    counts[i] += 1
            if round_ == strength.rounds or len(active) == 1:
                break
            active.sort(key=lambda i: -(totals[i] / max(1, counts[i]) - ranked[i][1] + slips[i]))
            active = active[: (len(active) + 1) // 2]
            want *= 2
        return _pick(ranked, totals, counts, slips, best_action, best_value, among=active)

    def _trial(self, state: State, side: str, action: Action, seed: int) -> float | None:
        """The judged worth of an action under one sample of luck, or None when the engine refuses it."""
        try:
            after, _events = apply(state.with_rng(seed), side, action)
        except EngineError:
            return None
        return judge(after, Board.of(after), side)


def _past(deadline: float | None) -> bool:
    """Whether a budget was given and has run out."""
    return deadline is not None and time.perf_counter() >= deadline


def _pick(
    ranked: list[tuple[Action, float]],
    totals: list[float],
    counts: list[int],
    slips: list[float],
    best_action: Action,
    best_value: float,
    among: list[int] | None = None,
) -> Action:
    """The tried candidate of best mean worth (stopping's exact worth, when allowed, to beat); among
    the survivors of the last round when the search finished, else among all tried."""
    pool = among if among is not None else range(len(ranked))
    for i in pool:
        if counts[i] == 0:
            continue
        value = totals[i] / counts[i] - ranked[i][1] + slips[i]
        if value > best_value + 1e-9:
            best_action, best_value = ranked[i][0], value
    return best_action


def _fallback(state: State, board: Board, side: str) -> Action:
    """A legal action when no candidate was legal (a safety net: it should not happen)."""
    for soldier in state.flickable(side):  # type: ignore[arg-type]
        action: Action = {"type": "flick", "soldier": soldier, "kind": "snipe", "vector": [0.0, 1.5]}
        if legal(state, side, action):
            return action
    return {"type": "stop"}
