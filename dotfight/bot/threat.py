"""How likely each soldier is to be crossed out by a snipe from each enemy: the bot's sense of danger.

For every (shooter, target) pair the bot works out the softest snipe that still reaches the target
through the walls on the way (a wall of fullness f keeps only `1 - q(f)` of the reach left), and from
that power the wildness, and from the wildness the chance the line passes within a dot of the target.
One matrix answers "what is my best shot?" and "what is the enemy's best shot at me?" alike.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from dotfight.bot.board import Board, FloatArray, IntArray

_SQRT2 = math.sqrt(2.0)


def erf(values: FloatArray) -> FloatArray:
    """The error function, element-wise, to about 1e-7 (Abramowitz and Stegun 7.1.26; numpy has none)."""
    x = np.asarray(values, dtype=np.float64)
    sign = np.sign(x)
    x = np.abs(x)
    k = 1.0 / (1.0 + 0.3275911 * x)
    poly = k * (0.254829592 + k * (-0.284496736 + k * (1.421413741 + k * (-1.453152027 + k * 1.061405429))))
    return np.asarray(sign * (1.0 - poly * np.exp(-x * x)), dtype=np.float64)


@dataclass(frozen=True)
class ShotTable:
    """For shooters x targets: the power of the softest snipe that reaches, and its chance to hit."""

    shooters: IntArray
    targets: IntArray
    power: FloatArray  # (m, n); nan where no snipe reaches
    hit: FloatArray  # (m, n) in [0, 1]
    distance: FloatArray  # (m, n)

    def best_per_target(self) -> FloatArray:
        """Each target's best chance of being hit by any one shooter."""
        if self.hit.size == 0:
            return np.zeros(len(self.targets))
        return np.asarray(self.hit.max(axis=0), dtype=np.float64)


def shot_table(
    board: Board,
    shooters: IntArray,
    targets: IntArray,
    *,
    steady: float = 1.0,
    fullness: FloatArray | None = None,
    margin: float = 4.0,
) -> ShotTable:
    """Builds the snipe table for the given shooter and target soldier indices.

    `steady` scales the spread (last stand); `fullness` overrides the walls' fullness (to judge a board
    after a send arrives); `margin` is reach kept in hand past the target's near edge.
    """
    p = board.params
    m, n = len(shooters), len(targets)
    if m == 0 or n == 0:
        empty = np.zeros((m, n))
        return ShotTable(shooters, targets, np.full((m, n), np.nan), empty, empty)
    a = board.xy[shooters]  # (m, 2)
    t = board.xy[targets]  # (n, 2)
    delta = t[None, :, :] - a[:, None, :]
    dist = np.maximum(np.hypot(delta[..., 0], delta[..., 1]), 1e-6)
    ux, uy = delta[..., 0] / dist, delta[..., 1] / dist
    hit_at = np.maximum(dist - p.dot_radius, 0.0)  # where the line first touches the target's dot

    keep_log = np.zeros((m, n))
    first_wall = hit_at.copy()
    if len(board.base_xy):
        full = board.fullness() if fullness is None else fullness
        loss = np.clip(p.wall_loss_empty + (p.wall_loss_full - p.wall_loss_empty) * full, 0.0, 0.999)
        log_keep = np.log1p(-loss)  # (B,)
        oc = board.base_xy[None, :, :] - a[:, None, :]  # (m, B, 2)
        cc = (oc**2).sum(axis=2) - board.base_r[None, :] ** 2  # (m, B): < 0 when the shooter stands inside
        proj = ux[:, :, None] * oc[:, None, :, 0] + uy[:, :, None] * oc[:, None, :, 1]  # (m, n, B)
        disc = proj**2 - cc[:, None, :]
        root = np.sqrt(np.maximum(disc, 0.0))
        crosses = disc > 0
        t_in, t_out = proj - root, proj + root
        limit = hit_at[:, :, None]
        enter = crosses & (t_in > 0) & (t_in < limit)
        # Leaving the base he stands in costs nothing ("the wall at your back").
        leave = crosses & (t_out > 0) & (t_out < limit) & (cc[:, None, :] >= 0)
        count = enter.astype(np.float64) + leave.astype(np.float64)
        keep_log = (count * log_keep[None, None, :]).sum(axis=2)
        near = np.where(enter, t_in, np.inf)
        near = np.minimum(near, np.where(leave, t_out, np.inf))
        first_wall = np.minimum(first_wall, near.min(axis=2))
    keep = np.exp(keep_log)
    need = first_wall + (hit_at + margin - first_wall) / keep
    frac = need / p.diagonal
    share = np.clip((frac - p.reach_min_frac) / (1 - p.reach_min_frac), 0.0, 1.0)
    power = share ** (1 / p.reach_curve)
    reachable = frac <= 1.0
    sigma = p.wildness * power**p.reach_curve * steady
    half_angle = np.arcsin(np.minimum(1.0, p.dot_radius / dist))
    with np.errstate(divide="ignore", invalid="ignore"):
        ratio = np.where(sigma > 1e-9, half_angle / (np.maximum(sigma, 1e-12) * _SQRT2), 50.0)
    hit = np.where(reachable, erf(np.minimum(ratio, 50.0)), 0.0)
    power = np.where(reachable, power, np.nan)
    return ShotTable(shooters, targets, power, hit, dist)


def danger(board: Board, attacker: str, *, flicks: int = 1, steady: float = 1.0,
           fullness: FloatArray | None = None, spread_weight: float = 0.15, per_target: bool = False) -> float:
    """Expected losses the defender should fear from the attacker's next turn.

    The sum of the `flicks` best single-target chances, plus `spread_weight` times every target's best
    chance, so that a side cares about all its exposed men and not only the most exposed one. With
    `per_target`, only that sum over every target (the side's standing liabilities).
    """
    defender = "red" if attacker == "blue" else "blue"
    table = shot_table(board, board.flickable(attacker), board.living(defender), steady=steady,
                       fullness=fullness)
    best = table.best_per_target()
    if best.size == 0:
        return 0.0
    if per_target:
        return float(best.sum())
    top = np.sort(best)[::-1][: max(1, flicks)]
    return float(top.sum() + spread_weight * best.sum())
