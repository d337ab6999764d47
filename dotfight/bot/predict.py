"""A quick, luck-free forecast of one flick, used to pick which candidates are worth real trials.

It walks the aimed line as RULES.md §5–6 do (walls, men, power loss, page edge, landing) and turns the
luck into chances: the line's sideways wander at a distance is the launch spread (plus, for a lunge,
every shake so far) times the distance still to run, and a man is crossed out with the chance that the
wandering line passes within a dot of him. The engine, with sampled luck, has the last word.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from dotfight.bot.board import SIDES, Board, other
from dotfight.bot.rules import (
    fullness,
    link_shake,
    man_loss,
    man_shake,
    page_exit,
    reach,
    wall_loss,
    wall_shake,
    wild_spread,
)
from dotfight.bot.threat import erf

_SQRT2 = math.sqrt(2.0)


@dataclass(frozen=True)
class Forecast:
    """What a flick is expected to do."""

    kills: float  # expected enemy soldiers crossed out
    lost: float  # chance the flicker himself is crossed out (shot on landing, off the page)
    end: tuple[float, float]  # where the ink is expected to end (where a lunger stands)
    multi: float  # chance of crossing out two or more (a snipe's bonus flick)


def _chance_within(offset: float, radius: float, wander: float) -> float:
    """Chance that a line aimed `offset` off a centre passes within `radius`, given a normal wander."""
    if wander < 1e-9:
        return 1.0 if abs(offset) <= radius else 0.0
    scale = wander * _SQRT2
    lo, hi = (radius - offset) / scale, (radius + offset) / scale
    return float(0.5 * (erf(np.array([lo, hi])).sum()))


def forecast(
    board: Board,
    shooter: int,
    kind: str,
    angle: float,
    power: float,
    *,
    link: int = 0,
    steady: float = 1.0,
) -> Forecast:
    """Forecasts one flick of soldier index `shooter` (a snipe or a lunge) along `angle` at `power`."""
    rules = board.rules
    radius = rules.dot_radius
    side = SIDES[int(board.soldier_side[shooter])]
    ox, oy = float(board.xy[shooter, 0]), float(board.xy[shooter, 1])
    ux, uy = math.cos(angle), math.sin(angle)
    length = reach(rules, power)
    launch = wild_spread(rules, power) * steady
    if kind == "lunge":
        launch += link_shake(rules, link) * steady
    edge = page_exit(rules, ox, oy, ux, uy)

    events: list[tuple[float, int, int, float]] = []  # (distance, 0 wall / 1 man, index, offset)
    enemies = board.living(other(side))
    if enemies.size:
        rel = board.xy[enemies] - (ox, oy)
        along = rel[:, 0] * ux + rel[:, 1] * uy
        offs = rel[:, 0] * -uy + rel[:, 1] * ux
        # Men a little off the line are kept: the wander may still bring the line over them.
        near = (np.abs(offs) <= radius * 3) & (along > 0)
        for k in np.flatnonzero(near):
            half_chord = math.sqrt(max(radius**2 - min(float(offs[k]) ** 2, radius**2), 0.0))
            entry = float(along[k]) - half_chord
            events.append((max(entry, 0.0), 1, int(enemies[k]), float(offs[k])))
    for b in range(len(board.base_ids)):
        cx, cy = board.base_xy[b, 0] - ox, board.base_xy[b, 1] - oy
        proj = cx * ux + cy * uy
        cc = cx * cx + cy * cy - board.base_r[b] ** 2
        disc = proj * proj - cc
        if disc <= 0:
            continue
        root = math.sqrt(disc)
        if proj - root > 0:
            events.append((proj - root, 0, b, 0.0))
        if proj + root > 0 and cc >= 0:  # leaving the base he stands in is free
            events.append((proj + root, 0, b, 0.0))
    events.sort()

    garrison = board.garrison.astype(np.float64).copy()
    shakes: list[tuple[float, float]] = [(0.0, launch)]
    left = length
    travelled = 0.0
    kills = 0.0
    probs: list[float] = []
    for dist, what, index, off in events:
        if dist > edge:
            break
        if kind == "snipe":
            left -= dist - travelled
            if left < 0:
                break
        elif dist > length:
            break
        travelled = dist
        if what == 0:
            full = fullness(float(garrison[index]), float(board.base_cap[index]))
            if kind == "snipe":
                left *= 1.0 - wall_loss(rules, full)
            else:
                shakes.append((dist, wall_shake(rules, full) * steady))
            continue
        wander = math.sqrt(sum((s * (dist - at)) ** 2 for at, s in shakes))
        chance = _chance_within(off, radius, wander)
        if chance < 1e-3:
            continue
        kills += chance
        probs.append(chance)
        home = int(board.home[index])
        if home >= 0:
            garrison[home] -= chance
        if kind == "snipe":
            left *= 1.0 - man_loss(rules) * chance  # the expected share: the loss times his chance
        else:
            shakes.append((dist, man_shake(rules) * steady))

    multi = _at_least_two(probs)
    if kind == "snipe":
        end_at = min(edge, travelled + max(left, 0.0)) if events else min(edge, length)
        return Forecast(kills, 0.0, (ox + ux * end_at, oy + uy * end_at), multi)
    if length > edge:
        return Forecast(kills, 1.0, (ox + ux * edge, oy + uy * edge), multi)
    ex, ey = ox + ux * length, oy + uy * length
    lost = 0.0
    enemy_bases = board.bases_of(other(side))
    if enemy_bases.size:
        d = np.hypot(board.base_xy[enemy_bases, 0] - ex, board.base_xy[enemy_bases, 1] - ey)
        for k in np.flatnonzero(d <= board.base_r[enemy_bases]):
            if garrison[enemy_bases[k]] > 0.5:
                lost = 1.0
    # A long, shaken run may stray: treat its landing as less certain either way.
    wander = math.sqrt(sum((s * (length - at)) ** 2 for at, s in shakes))
    if wander > 60.0 and lost > 0:
        lost = 0.6
    return Forecast(kills, lost, (ex, ey), multi)


def _at_least_two(probs: list[float]) -> float:
    """The chance that two or more independent events with these chances happen."""
    none = 1.0
    exactly_one = 0.0
    for q in probs:
        exactly_one = exactly_one * (1 - q) + none * q
        none *= 1 - q
    return max(0.0, 1.0 - none - exactly_one)
