"""Setup: where Dawood-bot draws its bases and how it arranges its soldiers.

Bases are spread across the width of the bot's half in a zig-zag (front and back rows when they do not
fit in one), clear of the middle line and of each other, so a convoy between two back bases walks
behind a front one. Soldiers keep the engine's even jotting, behind their walls; now and then one steps
out in front of the front base as bait for a lunger.
"""

from __future__ import annotations

import math
import random
from typing import Any

import numpy as np

from dotfight.bot.board import Board, FloatArray, other
from dotfight.bot.params import Params

# Keeps every proposal this far from an exact boundary, so rounding never decides legality.
SAFETY = 1.0


def base_radius(params: Params) -> float:
    """A ring roomy enough for its soldiers to spread out (about 70 units for 8)."""
    wanted = 70.0 * math.sqrt(max(params.soldiers_per_base, 1) / 8.0)
    return float(min(params.base_radius_max - SAFETY, max(params.base_radius_min + SAFETY, wanted)))


def _half(params: Params, side: str) -> tuple[float, float]:
    """The y-range of a side's half."""
    return (params.mid_y, params.page_height) if side == "blue" else (0.0, params.mid_y)


def plan_bases(
    params: Params, side: str, rng: random.Random, depth_share: float
) -> list[tuple[float, float, float]]:
    """The full set of bases the bot means to draw, as (x, y, r), front and back rows in a zig-zag.

    `depth_share` places the rows between the middle line (0) and the back edge of the half (1).
    """
    n = max(1, params.bases_per_side)
    width, gap = params.page_width, params.base_gap
    r = base_radius(params)
    # Shrink the rings until they fit in at most three rows.
    while r > params.base_radius_min + SAFETY and n * (2 * r + gap) > 3 * (width - gap):
        r -= 1.0
    span = width - 2 * (r + SAFETY + 2)
    step = span / (n - 1) if n > 1 else 0.0
    rows = 1
    while rows < n and rows * step < 2 * r + gap + 8:
        rows += 1
    need_dy = math.sqrt(max(0.0, (2 * r + gap + 8) ** 2 - step**2)) if rows > 1 else 0.0
    depth = params.page_height / 2
    # Rows sit in the middle of the half, front row toward the middle line.
    lo = gap + r + SAFETY + 10
    hi = depth - r - SAFETY - 4
    dy = min(need_dy, (hi - lo) / max(rows - 1, 1)) if rows > 1 else 0.0
    wanted = lo + depth_share * (hi - lo)
    centre = min(max(wanted, lo + dy * (rows - 1) / 2), hi - dy * (rows - 1) / 2)
    plan = []
    for k in range(n):
        row = k % rows
        x = (r + SAFETY + 2 + step * k) if n > 1 else width / 2
        off = centre + (row - (rows - 1) / 2) * dy
        jx = rng.uniform(-1, 1) * max(0.0, min(15.0, (step - 2 * r - gap) / 2 - 2)) if n > 1 else 0.0
        jy = rng.uniform(-15, 15) if rows == 1 else 0.0
        y_depth = min(max(off + jy, lo), hi)
        y = params.mid_y + y_depth if side == "blue" else params.mid_y - y_depth
        x = min(max(x + jx, r + SAFETY + 1), width - r - SAFETY - 1)
        plan.append((round(x, 2), round(y, 2), round(r, 2)))
    return plan


def base_fits(params: Params, board: Board, side: str, x: float, y: float, r: float) -> bool:
    """Whether a base at (x, y, r) is legal now (in the half, on the page, clear of every wall)."""
    lo, hi = _half(params, side)
    if not (params.base_radius_min <= r <= params.base_radius_max):
        return False
    if not (r + SAFETY <= x <= params.page_width - r - SAFETY and lo + r + SAFETY <= y <= hi - r - SAFETY):
        return False
    if len(board.base_xy) == 0:
        return True
    d = np.hypot(board.base_xy[:, 0] - x, board.base_xy[:, 1] - y)
    return bool(np.all(d >= board.base_r + r + params.base_gap + SAFETY))


def next_base(board: Board, side: str, seed: int, depth_share: float) -> dict[str, Any]:
    """The `draw_base` action for the bot's next base: the planned one, or the roomiest free spot."""
    params = board.params
    drawn = int(board.bases_of(side).size)
    plan = plan_bases(params, side, random.Random(seed), depth_share)
    if drawn < len(plan):
        x, y, r = plan[drawn]
        if base_fits(params, board, side, x, y, r):
            return {"type": "draw_base", "x": x, "y": y, "r": r}
    rng = random.Random(seed + drawn + 1)
    lo, hi = _half(params, side)
    best: tuple[float, tuple[float, float, float]] | None = None
    for attempt in range(600):
        r = base_radius(params) if attempt < 300 else params.base_radius_min + SAFETY
        x = rng.uniform(r + SAFETY, params.page_width - r - SAFETY)
        y = rng.uniform(lo + r + SAFETY, hi - r - SAFETY)
        if not base_fits(params, board, side, x, y, r):
            continue
        room = (
            float(np.min(np.hypot(board.base_xy[:, 0] - x, board.base_xy[:, 1] - y) - board.base_r - r))
            if len(board.base_xy)
            else 1e9
        )
        if best is None or room > best[0]:
            best = (room, (x, y, r))
    if best is None:
        raise RuntimeError(f"no room for another base of {side}")
    x, y, r = best[1]
    return {"type": "draw_base", "x": round(x, 2), "y": round(y, 2), "r": round(r, 2)}


def arrangement(
    board: Board, side: str, rng: random.Random, *, bait: float
) -> dict[str, tuple[float, float]]:
    """Where the side's soldiers should stand that differ from where they stand: id -> (x, y).

    The jotted even pattern keeps every man behind his wall (a scatter to the back of the ring away
    from enemy rows was tried and played no better); now and then one man steps out as bait.
    """
    places: dict[str, tuple[float, float]] = {}
    bases = board.bases_of(side)
    if bases.size and rng.random() < bait:
        toward = _enemy_direction(board, side)
        front = int(bases[np.argmin([board.base_xy[b] @ toward[b] for b in bases])])
        _step_out_bait(board, side, front, toward[front], places)
    return places


def _enemy_direction(board: Board, side: str) -> FloatArray:
    """For every base, the unit vector toward the enemy's soldiers (straight across when none)."""
    enemy = board.xy[board.living(other(side))]
    across = np.array([0.0, -1.0 if side == "blue" else 1.0])
    out = np.tile(across, (len(board.base_ids), 1))
    if len(enemy) == 0:
        return out
    centroid = enemy.mean(axis=0)
    for b in range(len(board.base_ids)):
        v = centroid - board.base_xy[b]
        norm = float(np.hypot(*v))
        if norm > 1e-6:
            out[b] = v / norm
    return out


def _step_out_bait(
    board: Board, side: str, base: int, toward: FloatArray, places: dict[str, tuple[float, float]]
) -> None:
    """Moves one man of the front base just outside its wall, toward the enemy, if there is room."""
    params = board.params
    men = [int(k) for k in np.flatnonzero(board.home == base)]
    if len(men) < 3:
        return
    # The man nearest the front steps out.
    bait = min(men, key=lambda k: -float(board.xy[k] @ toward))
    r = float(board.base_r[base])
    spot = board.base_xy[base] + toward * (r + params.outside_margin * 0.6)
    x, y = float(spot[0]), float(spot[1])
    if not (params.dot_radius + SAFETY <= x <= params.page_width - params.dot_radius - SAFETY):
        return
    if not (params.dot_radius + SAFETY <= y <= params.page_height - params.dot_radius - SAFETY):
        return
    others = [(float(px), float(py)) for k, (px, py) in enumerate(board.xy) if k != bait and board.alive[k]]
    if all(math.hypot(x - ox, y - oy) >= 2 * params.dot_radius + 3 for ox, oy in others):
        places[board.soldier_ids[bait]] = (round(x, 2), round(y, 2))
