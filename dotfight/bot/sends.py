"""The free send: re-man a thinned base (or shoot an intruder) without walking a convoy into a line.

A send is judged on two boards the bot imagines. While the convoy is on the road (the enemy's next
turn), the source is thinner and the men stand in a row on open paper; after they arrive, the walls are
as the send leaves them. Only a few sends are weighed: into a nearly empty base or an empty ring with
an enemy lunger standing in it, from a full base, in small groups ("send small, behind a base"). A send
is made only when its road adds next to no danger (no enemy line lies along it) and the lasting gain
(less danger later, an intruding lunger shot) clears a margin: in lab play, freer sends lost pages.
"""

from __future__ import annotations

import math
from dataclasses import replace
from typing import Any

import numpy as np

from dotfight.bot.board import Board, IntArray, locate_homes, other
from dotfight.bot.evaluate import flicks_of
from dotfight.bot.rules import refusal
from dotfight.bot.threat import danger, shot_table
from dotfight.engine import State, apply

# How many enemy turns the better walls are expected to count for, against one turn on the road.
LASTING = 1.5
# A send must be worth at least this much (expected men) to be made at all.
MARGIN = 0.1
# The most men one enemy line may be expected to take from the convoy: beyond it the road is exposed.
ROAD_RISK = 0.75
# A base this thin (fullness: half its men gone, "before it falls") is worth re-manning, from a base at
# least this full.
THIN, FULL = 0.5, 0.6
# "Send small": at most this many men walk, unless an intruder is to be shot.
SMALL = 3
# A base holding at least this many men shoots any lunger landing in it for turns to come; bringing a
# thinned base back up to it is worth this much (expected men) beyond what the danger formula sees.
HOLD, HOLD_WORTH = 3, 0.6


def choose_send(state: State, board: Board, side: str) -> dict[str, Any] | None:
    """The best send for `side` now, or None when no send is worth its road."""
    rules = board.rules
    bases = board.bases_of(side)
    if bases.size < 2 or board.turn.sent or board.turn.chain_soldier is not None:
        return None
    enemy = other(side)
    flicks, steady = flicks_of(board, enemy)
    now = danger(board, enemy, flicks=flicks, steady=steady)
    fullness = board.fullness()
    flickable = board.flickable(side).size
    intruders = _intruders(board, side)
    dests = sorted(bases, key=lambda b: (-intruders[b], fullness[b]))[:2]
    sources = sorted(bases, key=lambda b: -board.garrison[b])[:2]
    best: tuple[float, dict[str, Any]] | None = None
    for dst in dests:
        for src in sources:
            if src == dst or board.garrison[src] < 1:
                continue
            hunt = intruders[dst] > 0 and board.garrison[dst] == 0
            if not hunt and (fullness[dst] > THIN or fullness[src] < FULL):
                continue
            men = np.flatnonzero(board.home == src)
            gap = board.garrison[src] - board.garrison[dst]
            for count in sorted({1, 2, 3, max(1, gap // 2)}):
                if count > min(rules.send_max, len(men), flickable - 1) or (count > SMALL and not hunt):
                    continue
                # The men nearest the destination walk: the shortest exposure, the rest stay put.
                walkers = men[np.argsort(np.hypot(*(board.xy[men] - board.base_xy[dst]).T))[:count]]
                action = {
                    "type": "send",
                    "from": board.base_ids[src],
                    "to": board.base_ids[dst],
                    "soldiers": [board.soldier_ids[w] for w in walkers],
                }
                if refusal(state, side, action) is not None:
                    continue
                # The engine puts the convoy on its road; the arrival is imagined (its spots are drawn then).
                on_road = Board.of(apply(state, side, action)[0])
                arrived = _arrive(board, walkers, int(dst))
                if road_risk(on_road, walkers, enemy) > ROAD_RISK:
                    continue
                road = danger(on_road, enemy, flicks=flicks, steady=steady)
                later = danger(arrived, enemy, flicks=flicks, steady=steady)
                shot = min(count, intruders[dst]) if board.garrison[dst] == 0 else 0
                held = HOLD_WORTH if board.garrison[dst] < HOLD <= board.garrison[dst] + count else 0.0
                gain = LASTING * (now - later) - (road - now) + shot * 0.9 + held
                if gain > MARGIN and (best is None or gain > best[0]):
                    best = (gain, action)
    return None if best is None else best[1]


def road_risk(on_road: Board, walkers: IntArray, enemy: str) -> float:
    """The most convoy men one enemy snipe is expected to cross out: its chance to hit the man it aims
    at, times how many of the convoy stand in a row along that line (the walls on the way count)."""
    r = on_road.rules.dot_radius
    table = shot_table(on_road, on_road.standing(enemy), walkers)
    if table.hit.size == 0:
        return 0.0
    men = on_road.xy[walkers]
    worst = 0.0
    for i, shooter in enumerate(table.shooters):
        origin = on_road.xy[shooter]
        for m in range(len(walkers)):
            chance = float(table.hit[i, m])
            if chance * len(walkers) <= worst:
                continue
            u = (men[m] - origin) / max(float(table.distance[i, m]), 1e-6)
            rel = men - origin
            along = rel @ u
            across = np.abs(rel[:, 0] * u[1] - rel[:, 1] * u[0])
            in_row = int(np.count_nonzero((along > 0) & (across <= r)))
            worst = max(worst, chance * max(1, in_row))
    return worst


def _intruders(board: Board, side: str) -> IntArray:
    """For each base, how many enemy soldiers stand inside it (a lunger in an own ring)."""
    enemy = board.standing(other(side))
    counts = np.zeros(len(board.base_ids), dtype=np.int64)
    if enemy.size == 0:
        return counts
    for b in board.bases_of(side):
        d = np.hypot(*(board.xy[enemy] - board.base_xy[b]).T)
        counts[b] = int((d <= board.base_r[b]).sum())
    return counts


def _arrive(board: Board, walkers: IntArray, dst: int) -> Board:
    """The board with the walkers arrived inside the destination, spread so they do not stand in a row."""
    xy = board.xy.copy()
    n = len(walkers)
    for k, w in enumerate(walkers):
        angle = 2.4 * k
        xy[w] = board.base_xy[dst] + 0.4 * board.base_r[dst] * math.sqrt((k + 0.5) / n) * np.array(
            [math.cos(angle), math.sin(angle)]
        )
    home, garrison = locate_homes(xy, board.stands, board.soldier_side, board.walls)
    return replace(board, xy=xy, home=home, garrison=garrison)
