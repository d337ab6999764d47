"""Setup: where Dawood-bot draws its bases and how it arranges its soldiers.

Bases are spread across the width of the bot's half in a zig-zag (front and back rows when they do not
fit in one), clear of the middle line and of each other, so a convoy between two back bases walks
behind a front one. Soldiers keep the engine's even jotting, behind their walls; now and then one steps
out in front of the front base as bait for a lunger.
"""

from __future__ import annotations

import math
import random
from typing import Any, cast

import numpy as np

from dotfight.bot.board import Board, FloatArray, other
from dotfight.bot.rules import can_stand, legal, refusal
from dotfight.engine import RuleSet, Side, State

# Keeps every proposal this far from an exact boundary, so rounding never decides legality.
SAFETY = 1.0


def base_radius(params: RuleSet) -> float:
    """A ring roomy enough for its soldiers to spread out (about 70 units for 8)."""
    wanted = 70.0 * math.sqrt(max(params.soldiers_per_base, 1) / 8.0)
    return float(min(params.base_radius_max - SAFETY, max(params.base_radius_min + SAFETY, wanted)))


def _half(params: RuleSet, side: str) -> tuple[float, float]:
    """The y-range of a side's half."""
    return (params.half_y, params.page_height) if side == "blue" else (0.0, params.half_y)


def plan_bases(
    params: RuleSet, side: str, rng: random.Random, depth_share: float
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
        y = params.half_y + y_depth if side == "blue" else params.half_y - y_depth
        x = min(max(x + jx, r + SAFETY + 1), width - r - SAFETY - 1)
        plan.append((round(x, 2), round(y, 2), round(r, 2)))
    return plan


def _draw(x: float, y: float, r: float) -> dict[str, Any]:
    return {"type": "draw_base", "x": round(x, 2), "y": round(y, 2), "r": round(r, 2)}


def next_base(state: State, board: Board, side: str, seed: int, depth_share: float) -> dict[str, Any]:
    """The `draw_base` action for the bot's next base: the planned one, or the roomiest free spot."""
    params = board.rules
    drawn = int(board.bases_of(side).size)
    plan = plan_bases(params, side, random.Random(seed), depth_share)
    if drawn < len(plan):
        planned = _draw(*plan[drawn])
        if legal(state, side, planned):
            return planned
    rng = random.Random(seed + drawn + 1)
    lo, hi = _half(params, side)
    best: tuple[float, tuple[float, float, float]] | None = None
    for attempt in range(600):
        r = base_radius(params) if attempt < 300 else params.base_radius_min + SAFETY
        x = rng.uniform(r + SAFETY, params.page_width - r - SAFETY)
        y = rng.uniform(lo + r + SAFETY, hi - r - SAFETY)
        if refusal(state, side, _draw(x, y, r)) is not None:
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
    return _draw(*best[1])


# The share of each base's men that stand just outside its wall, drawn once per page (RULES.md §11: a
# person spreads some men round the back and sides of a base, where its wall still shields them, so one
# lunge into the ring cannot run through the whole garrison).
OUTSIDE_SHARE = (0.05, 0.2)
# How far beyond the wall, as a share of the outside margin.
OUTSIDE_DEPTH = (0.45, 0.9)
# How far round from straight behind an outside man may stand (radians): behind and beside, never in
# front — except the bait.
OUTSIDE_TURN = 1.6
# The chance the front base steps one man out in front as bait, where a lunger aimed at him runs on
# into the full ring and is shot.
BAIT = 1.0


def arrangement(
    state: State, board: Board, side: str, rng: random.Random, *, outside: bool
) -> dict[str, tuple[float, float]]:
    """Where the side's soldiers should stand that differ from where they stand: id -> (x, y).

    With `outside`, a share of each base's men step just outside its wall, behind and beside it (one as
    bait in front of the front base); the rest keep the engine's even jotting. Without it (or once some
    man already stands outside: the arrangement is made in one batch) nobody moves.
    """
    bases = board.bases_of(side)
    mine = board.living(side)
    if not outside or bases.size == 0 or np.any(board.home[mine] < 0):
        return {}
    rules = board.rules
    toward = _enemy_direction(board, side)
    share = rng.uniform(*OUTSIDE_SHARE)
    front = int(bases[np.argmin([board.base_xy[b] @ toward[b] for b in bases])])
    spacing = 2 * rules.dot_radius + 3
    taken: list[FloatArray] = [board.xy[k] for k in mine]
    places: dict[str, tuple[float, float]] = {}
    for b in bases:
        men = [int(k) for k in mine if board.home[k] == b]
        wanted = round(share * len(men)) if len(men) >= 3 else 0
        behind = math.atan2(-toward[b][1], -toward[b][0])
        ahead = math.atan2(toward[b][1], toward[b][0])
        angles = [behind + rng.uniform(-OUTSIDE_TURN, OUTSIDE_TURN) for _ in range(wanted)]
        if b == front and wanted and rng.random() < BAIT:
            angles[0] = ahead + rng.uniform(-0.3, 0.3)
        r = float(board.base_r[b])
        for angle in angles:
            for attempt in range(6):
                turn = angle + (attempt // 2) * 0.25 * (1 if attempt % 2 else -1)
                depth = r + rules.outside_margin * rng.uniform(*OUTSIDE_DEPTH)
                spot = board.base_xy[b] + depth * np.array([math.cos(turn), math.sin(turn)])
                if all(float(np.hypot(*(spot - t))) >= spacing for t in taken) and men:
                    man = min(men, key=lambda k: float(np.hypot(*(board.xy[k] - spot))))
                    x, y = round(float(spot[0]), 2), round(float(spot[1]), 2)
                    if can_stand(state, cast(Side, side), board.soldier_ids[man], x, y):
                        men.remove(man)
                        taken.append(spot)
                        places[board.soldier_ids[man]] = (x, y)
                        break
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
