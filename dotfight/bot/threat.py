"""How likely each soldier is to be crossed out by a snipe from each enemy: the bot's sense of danger.

For every (shooter, target) pair the bot works out the softest snipe that still reaches the target
through the walls on the way (a wall of fullness f keeps only `1 - q(f)` of the reach left), and from
that power the wildness, and from the wildness the chance the line passes within a dot of the target.
One matrix answers "what is my best shot?" and "what is the enemy's best shot at me?" alike.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, replace

import numpy as np

from dotfight.bot.board import Board, FloatArray, IntArray, other
from dotfight.bot.rules import curves, wall_loss, wall_shake

_SQRT2 = math.sqrt(2.0)
# Reach kept in hand past the target's near edge: a snipe that only just touches him is no sure shot.
REACH_MARGIN = 4.0


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
    """For shooters x targets: the power of the softest snipe that reaches, and its chance to hit;
    and the chance a lunge aimed at the target runs through him (walls shake it, they do not stop it)."""

    shooters: IntArray
    targets: IntArray
    power: FloatArray  # (m, n); nan where no snipe reaches
    hit: FloatArray  # (m, n) in [0, 1]
    distance: FloatArray  # (m, n)
    lunge: FloatArray  # (m, n) in [0, 1]


def shot_table(
    board: Board,
    shooters: IntArray,
    targets: IntArray,
    *,
    steady: float = 1.0,
) -> ShotTable:
    """Builds the snipe table for the given shooter and target soldier indices.

    `steady` scales the spread (last stand).
    """
    rules = board.rules
    radius = rules.dot_radius
    m, n = len(shooters), len(targets)
    if m == 0 or n == 0:
        empty = np.zeros((m, n))
        return ShotTable(shooters, targets, np.full((m, n), np.nan), empty, empty, empty)
    a = board.xy[shooters]  # (m, 2)
    t = board.xy[targets]  # (n, 2)
    delta = t[None, :, :] - a[:, None, :]
    dist = np.maximum(np.hypot(delta[..., 0], delta[..., 1]), 1e-6)
    ux, uy = delta[..., 0] / dist, delta[..., 1] / dist
    hit_at = np.maximum(dist - radius, 0.0)  # where the line first touches the target's dot

    keep_log = np.zeros((m, n))
    first_wall = hit_at.copy()
    wander2 = np.zeros((m, n))  # a lunge's sideways wander at the target, squared, from wall shakes
    if len(board.base_xy):
        full = board.fullness()
        loss = np.clip(wall_loss(rules, full), 0.0, 0.999)
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
        shake = wall_shake(rules, full)[None, None, :] * steady
        lever_in = np.where(enter, shake * (limit - t_in), 0.0)
        lever_out = np.where(leave, shake * (limit - t_out), 0.0)
        wander2 = (lever_in**2).sum(axis=2) + (lever_out**2).sum(axis=2)
    keep = np.exp(keep_log)
    need = first_wall + (hit_at + REACH_MARGIN - first_wall) / keep
    curve = curves(rules)
    power = curve.power_for(need)
    reachable = ~np.isnan(power)
    sigma = curve.spread(power) * steady
    half_angle = np.arcsin(np.minimum(1.0, radius / dist))
    with np.errstate(divide="ignore", invalid="ignore"):
        ratio = np.where(sigma > 1e-9, half_angle / (np.maximum(sigma, 1e-12) * _SQRT2), 50.0)
    hit = np.where(reachable, erf(np.minimum(ratio, 50.0)), 0.0)
    power = np.where(reachable, power, np.nan)
    # A lunge keeps its full length: the softest that reaches, then the shakes bend it off the man.
    run_power = curve.power_for(hit_at + REACH_MARGIN)
    launch = curve.spread(run_power) * steady
    wander = np.sqrt((launch * hit_at) ** 2 + wander2)
    with np.errstate(divide="ignore", invalid="ignore"):
        lunge_ratio = np.where(wander > 1e-9, radius / (np.maximum(wander, 1e-12) * _SQRT2), 50.0)
    lunge = np.where(~np.isnan(run_power), erf(np.minimum(lunge_ratio, 50.0)), 0.0)
    return ShotTable(shooters, targets, power, hit, dist, lunge)


# Each man a lunge crosses out earns another lunge: its kills are worth a little more than a snipe's.
LUNGE_CHAIN = 1.2
# How much every exposed man's own danger counts in `danger`, beyond the attacker's best flicks.
EXPOSURE = 0.15


@dataclass(frozen=True)
class Threat:
    """What one side's next turn threatens the other with, in expected men."""

    best: float  # the attacker's best flicks (as many as it has), summed
    exposure: float  # every defender's own best chance of being hit, summed (standing liabilities)
    table: ShotTable  # the attacker's shots at every defender, for further questions


def assess(
    board: Board,
    attacker: str,
    *,
    flicks: int = 1,
    steady: float = 1.0,
    survival: FloatArray | None = None,
) -> Threat:
    """The threat of the attacker's next turn to the other side's men.

    A flick's worth is a snipe's chance to hit one man, or a lunge's expected kills (a lunge aimed into
    a base is shaken at its wall and may run through any man inside, so its kills are summed over the
    garrison, a little more for the chain they earn); the `flicks` best are summed. `survival` (one per
    attacker's standing man) scales each shooter's chances: a man likely crossed out before his turn
    comes threatens little. The returned `table` is unscaled.
    """
    targets = board.living(other(attacker))
    table = shot_table(board, board.standing(attacker), targets, steady=steady)
    if table.hit.size == 0:
        return Threat(0.0, 0.0, table)
    if survival is not None:
        scaled = ShotTable(
            table.shooters,
            table.targets,
            table.power,
            table.hit * survival[:, None],
            table.distance,
            table.lunge * survival[:, None],
        )
        return replace(_assessed(scaled, board, flicks), table=table)
    return _assessed(table, board, flicks)


def _assessed(table: ShotTable, board: Board, flicks: int) -> Threat:
    """`assess` on a table already built."""
    targets = table.targets
    per_man = np.maximum(table.hit, table.lunge).max(axis=0)
    # Men of one garrison are hit together by a lunge into their base; a man outside stands alone.
    home = board.home[targets]
    together = (home[:, None] == home[None, :]) & (home[:, None] >= 0)
    np.fill_diagonal(together, True)
    lunge_kills = table.lunge @ together.astype(np.float64)  # (m, n): aimed at target j
    best = np.maximum(table.hit.max(axis=0), LUNGE_CHAIN * lunge_kills.max(axis=0))
    top = np.sort(best)[::-1][: max(1, flicks)]
    return Threat(float(top.sum()), float(per_man.sum()), table)


def danger(board: Board, attacker: str, *, flicks: int = 1, steady: float = 1.0) -> float:
    """Expected losses the defender should fear from the attacker's next turn: its best flicks plus
    `EXPOSURE` times every man's exposure, so a side cares about all its exposed men."""
    threat = assess(board, attacker, flicks=flicks, steady=steady)
    return threat.best + EXPOSURE * threat.exposure
