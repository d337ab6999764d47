"""What a page is worth to one side: men alive, and what the next flicks are likely to change.

Material counts one per soldier. The side fears the enemy's best shots in its next turn (two steady
ones in last stand) and, more lightly, every man's standing exposure on both sides (`threat`); a man
stranded on open paper is charged his chance to be hit, so a lunger the enemy surely hits costs about a
man, and his own shots count only as far as he is likely to live to flick them. While the turn is still
its own, the page is judged as if it stopped now, plus a share of its own best next shot (a bonus flick,
last stand's second flick) — except a pending lunge chain, which is worth the better of stopping and
running on: the lunger's few most promising next links are played through the engine with the page's
own (imagined) luck and judged in turn, a few links deep. So a lunger who has just crossed a man out is
not charged as stranded while he may still run on through another man or run home. A won page
outweighs everything.

Playing the enemy's answers out through the engine (a second ply) was tried and played worse than
this formula at several times the cost: the few sampled answers are too noisy to steer by.
"""

from __future__ import annotations

import math

import numpy as np

from dotfight.bot.board import Board, FloatArray, other
from dotfight.bot.candidates import flick_candidates, promise
from dotfight.bot.rules import flicks_granted, in_last_stand, legal, steadiness, steadiness_in
from dotfight.bot.strength import Strength
from dotfight.bot.threat import ShotTable, assess
from dotfight.engine import EngineError, State, apply

WIN = 1000.0
# The weight of the enemy's best flicks in its next turn: a man left where the enemy surely hits him
# (a stranded lunger beside its men) costs most of a man.
CAUTION = 0.3
# The weight of every man's standing exposure, both sides (a line of men, a thinned wall).
SPREAD = 0.09
# A flick still in hand is worth a share of the best it could do (it may be spent on a worse one).
FLICK_IN_HAND = 0.7
# A pending lunge chain past the links played out (`RUN_ON_LINKS`) is worth less than a free flick:
# the same soldier, a shakier hand.
CHAIN_IN_HAND = 0.5
# A pending chain is judged by playing the lunger's next link through the engine: this many links deep,
# the `width` best-forecast lunges at each (on the imagined page's own luck), every strength alike, so
# that a deeper search cannot find lunges that only look bad because the judgement strands their lunger
# mid-chain. One link of the best-forecast lunge: two links of the two best cost five to six times the
# decision time (hard on 5 x 10 at a 330 ms median) and played no better in the lab (docs/BOT.md).
RUN_ON_LINKS = 1
RUN_ON = Strength("run-on", pairs=4, width=1, first=1, rounds=0)
# "A stranded lunger costs about a man" (issue 8): an own man standing on open paper beyond the outside
# margin (a lunger who ran out, never one of the men arranged just outside the walls) is charged this
# share of the enemy's chance to hit him on top of SPREAD, so one the enemy surely hits costs about a
# man (0.91), whether or not he is also its best shot (CAUTION's term).
STRANDED = 0.82


def flicks_of(board: Board, side: str) -> tuple[int, float]:
    """The flicks a side gets in its next turn, and the factor on its spreads (last stand): the engine's
    `flicks_granted` and `steadiness_in` for the men it has left (none left: no last stand to count)."""
    rules = board.rules
    living = board.count_alive(side)
    last_stand = living > 0 and in_last_stand(rules, living)
    return flicks_granted(rules, last_stand), steadiness_in(rules, last_stand)


def judge(state: State, board: Board, side: str, *, links: int = RUN_ON_LINKS) -> float:
    """The value of the page `state` (read into `board`) for `side`: higher is better.

    When the turn is still the side's own, the page is judged as if it stopped now (so the enemy's
    answer is always counted) plus a share of what its next flick is likely to add; a pending lunge
    chain is worth the better of stopping and its best next link, played through the engine up to
    `links` links deep (`run_on`).

    >>> from dotfight.engine import RuleSet, new_page
    >>> page, _ = apply(new_page(RuleSet.preset("quick"), seed=3), "blue", {"type": "quick_setup"})
    >>> judge(page, Board.of(page), "blue")  # not yet in play: only the men standing count
    0.0
    """
    if board.winner is not None or board.phase != "play":
        return _final(board, side)
    if board.actor != side:
        return _standing(board, side, in_hand=0.0)
    chain, flicks_left = board.turn.chain_soldier, board.turn.flicks_left
    stopped = _stopped(state, side)
    after = Board.of(stopped)
    if after.winner is not None or after.phase != "play":
        return _final(after, side)
    if chain is None:
        return _standing(after, side, in_hand=FLICK_IN_HAND * max(1, flicks_left))
    if links <= 0:
        return _standing(after, side, chain=chain)
    value = _standing(after, side, in_hand=0.0)
    return max(value, run_on(state, board, side, links))


def run_on(state: State, board: Board, side: str, links: int) -> float:
    """The worth of the side's best next link of its pending lunge chain: the `RUN_ON.width` most
    promising lunges of the chain's soldier (through another man, past his base, or home) played through
    the engine on `state` as it stands (its own luck: the bot judges imagined pages only) and judged with
    one link fewer left to look ahead; minus infinity when none is legal."""
    chain = board.turn.chain_soldier
    if chain is None:
        return -math.inf
    lunger = np.array([board.index_of(chain)], dtype=np.int64)
    steady = steadiness(state)
    cands = flick_candidates(board, side, RUN_ON, shooters=lunger, snipes=False)
    ranked = sorted(cands, key=lambda c: -promise(board, c, link=board.turn.chain_link, steady=steady))
    best, tried = -math.inf, 0
    for cand in ranked:
        action = cand.action(board)
        if not legal(state, side, action):
            continue
        try:
            after, _events = apply(state, side, action)
        except EngineError:
            continue
        best = max(best, judge(after, Board.of(after), side, links=links - 1))
        tried += 1
        if tried == RUN_ON.width:
            break
    return best


def _standing(board: Board, side: str, *, in_hand: float = 0.0, chain: str | None = None) -> float:
    """The page as it stands with the enemy to flick next: material, the enemy's threat, both sides'
    exposure, the stranded charge; plus `in_hand` times the side's best snipe chance (flicks still its
    own) or, for a `chain` not played out, a share of its lunger's best chance to run through a man."""
    enemy = other(side)
    material = float(board.count_alive(side) - board.count_alive(enemy))
    flicks, steady = flicks_of(board, enemy)
    # Standing liabilities on both sides: every man's best chance of being hit by the other side.
    own_flicks, own_steady = flicks_of(board, side)
    theirs = assess(board, enemy, flicks=flicks, steady=steady)
    at_risk = _stranded_risk(board, side, theirs.table)  # per own man
    # A stranded man is counted as a shooter only as far as he is likely to live to flick again.
    survival = 1.0 - at_risk[np.searchsorted(theirs.table.targets, board.standing(side))]
    ours = assess(board, side, flicks=own_flicks, steady=own_steady, survival=survival)
    spread = theirs.exposure - ours.exposure
    hand = _in_hand(board, ours.table, chain, in_hand)
    stranded = STRANDED * float(at_risk.sum())
    return material + hand - CAUTION * theirs.best - SPREAD * spread - stranded


def _stranded_risk(board: Board, side: str, table: ShotTable) -> FloatArray:
    """For each of the side's living men (`table.targets`, the enemy's shots at them): the enemy's best
    chance to hit him if he is stranded — off the road, inside no own base and further than the outside
    margin from every own wall — else 0."""
    targets = table.targets
    risk = np.zeros(len(targets))
    if table.hit.size == 0:
        return risk
    loose = (board.home[targets] < 0) & ~board.on_road[targets]
    own = board.bases_of(side)
    if loose.any() and own.size:
        xy = board.xy[targets]
        gap = np.hypot(*(xy[:, None, :] - board.base_xy[None, own, :]).transpose(2, 0, 1))
        margin = board.rules.outside_margin + board.rules.dot_radius
        loose &= ~(gap - board.base_r[None, own] <= margin).any(axis=1)
    if loose.any():
        risk[loose] = np.maximum(table.hit, table.lunge).max(axis=0)[loose]
    return risk


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


def _in_hand(board: Board, table: ShotTable, chain: str | None, share: float) -> float:
    """What the side's next flicks in this turn are worth, read from its shots at every enemy (the page
    as if it stopped now: the same men where they stand): `share` of its best snipe chance, or for a
    pending chain not played out, `CHAIN_IN_HAND` of the lunger's best chance of running through a man."""
    if table.hit.size == 0:
        return 0.0
    if chain is not None:
        rows = np.flatnonzero(table.shooters == board.index_of(chain))
        return CHAIN_IN_HAND * float(table.lunge[rows].max()) if rows.size else 0.0
    return share * float(table.hit.max())
