"""The free send: re-man a thinned base (or shoot an intruder) without walking a convoy into a line.

A send is judged on two boards the bot imagines. While the convoy is on the road (the enemy's next
turn), the source is thinner and the men stand in a row on open paper; after they arrive, the walls are
as the send leaves them. A send is made when the lasting gain (less danger later, an intruding lunger
shot) outweighs the danger of the road by a margin. Only a few candidate sends are weighed: into the
weakest bases, from the fullest, in small groups ("send small, behind a base").
"""

from __future__ import annotations

import math
from dataclasses import replace
from typing import Any

import numpy as np

from dotfight.bot.board import Board, IntArray, locate_homes, other
from dotfight.bot.evaluate import flicks_of
from dotfight.bot.threat import danger

# How many enemy turns the better walls are expected to count for, against one turn on the road.
LASTING = 1.5
# A send must be worth at least this much (expected men) to be made at all.
MARGIN = 0.05


def choose_send(board: Board, side: str) -> dict[str, Any] | None:
    """The best send for `side` now, or None when no send is worth its road."""
    p = board.params
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
            men = np.flatnonzero(board.home == src)
            gap = board.garrison[src] - board.garrison[dst]
            if gap < 2 and intruders[dst] == 0:
                continue
            for count in sorted({1, 2, 3, max(1, gap // 2)}):
                if count > min(p.send_max, len(men), flickable - 1):
                    continue
                # The men nearest the destination walk: the shortest exposure, the rest stay put.
                walkers = men[np.argsort(np.hypot(*(board.xy[men] - board.base_xy[dst]).T))[:count]]
                on_road = _walk(board, walkers, int(src), int(dst), arrived=False)
                arrived = _walk(board, walkers, int(src), int(dst), arrived=True)
                road = danger(on_road, enemy, flicks=flicks, steady=steady)
                later = danger(arrived, enemy, flicks=flicks, steady=steady)
                shot = min(count, intruders[dst]) if board.garrison[dst] == 0 else 0
                gain = LASTING * (now - later) - (road - now) + shot * 0.9
                if gain > MARGIN and (best is None or gain > best[0]):
                    action = {
                        "type": "send",
                        "from": board.base_ids[src],
                        "to": board.base_ids[dst],
                        "soldiers": [board.soldier_ids[w] for w in walkers],
                    }
                    best = (gain, action)
    return None if best is None else best[1]


def _intruders(board: Board, side: str) -> IntArray:
    """For each base, how many enemy soldiers stand inside it (a lunger in an own ring)."""
    enemy = board.flickable(other(side))
    counts = np.zeros(len(board.base_ids), dtype=np.int64)
    if enemy.size == 0:
        return counts
    for b in board.bases_of(side):
        d = np.hypot(*(board.xy[enemy] - board.base_xy[b]).T)
        counts[b] = int((d <= board.base_r[b]).sum())
    return counts


def _walk(board: Board, walkers: IntArray, src: int, dst: int, *, arrived: bool) -> Board:
    """The board with the walkers on the road between two bases, or already arrived."""
    p = board.params
    xy = board.xy.copy()
    on_road = board.on_road.copy()
    a, b = board.base_xy[src], board.base_xy[dst]
    length = max(float(np.hypot(*(b - a))), 1e-6)
    u = (b - a) / length
    n = len(walkers)
    for k, w in enumerate(walkers):
        if arrived:
            # Somewhere inside the ring, spread a little so they do not stand in a row.
            angle = 2.4 * k
            xy[w] = b + 0.4 * board.base_r[dst] * math.sqrt((k + 0.5) / n) * np.array(
                [math.cos(angle), math.sin(angle)]
            )
        else:
            xy[w] = (a + b) / 2 + (k - (n - 1) / 2) * 3 * p.dot_radius * u
            on_road[w] = True
    home, garrison = locate_homes(xy, board.alive, on_road, board.soldier_side, board.base_xy, board.base_r,
                            board.base_side)
    return replace(board, xy=xy, on_road=on_road, home=home, garrison=garrison)
