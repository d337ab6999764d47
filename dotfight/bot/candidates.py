"""Candidate flicks: which soldier, snipe or lunge, which way and how hard.

Candidates come from (shooter, target) pairs ranked by the snipe table: aim at the man, with the softest
power that reaches him (soft flicks are sure) and a little more to carry through, or full power when no
snipe reaches him; also the bisector of two men in a row (two with one
bullet). Lunges aim at the man too, with a run that stops just past him or past the far wall of his
base, never off the page.
A soldier stranded on open paper also considers running home.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

import numpy as np

from dotfight.bot.board import Board, IntArray, other
from dotfight.bot.predict import forecast
from dotfight.bot.rules import aim, page_exit, power_for_reach, reach
from dotfight.bot.strength import Strength
from dotfight.bot.threat import shot_table


@dataclass(frozen=True)
class Candidate:
    """One flick the bot may make."""

    shooter: int  # soldier index on the board
    kind: str  # "snipe" | "lunge"
    angle: float
    power: float

    def action(self, board: Board) -> dict[str, Any]:
        """The PROTOCOL.md `flick` action."""
        return {
            "type": "flick",
            "soldier": board.soldier_ids[self.shooter],
            "kind": self.kind,
            "vector": aim(board.rules, self.angle, self.power),
        }

    def key(self) -> tuple[int, str, int, int]:
        """Identity up to rounding, to drop near-duplicates."""
        return (self.shooter, self.kind, round(self.angle * 500), round(self.power * 50))


def flick_candidates(
    board: Board,
    side: str,
    strength: Strength,
    shooters: IntArray | None = None,
    *,
    lunges: bool = True,
    snipes: bool = True,
) -> list[Candidate]:
    """Candidate flicks for `side` (only by `shooters` when given, e.g. the soldier of a lunge chain)."""
    rules = board.rules
    own = board.flickable(side) if shooters is None else shooters
    targets = board.living(other(side))
    if own.size == 0:
        return []
    out: dict[tuple[int, str, int, int], Candidate] = {}

    def add(c: Candidate) -> None:
        out.setdefault(c.key(), c)

    if targets.size:
        table = shot_table(board, own, targets)
        score = np.nan_to_num(table.hit, nan=0.0)
        # Prefer the sure shots; among equals, the nearer.
        order = np.argsort(-(score - 1e-4 * table.distance), axis=None)
        angles = np.arctan2(
            board.xy[targets][None, :, 1] - board.xy[own][:, None, 1],
            board.xy[targets][None, :, 0] - board.xy[own][:, None, 0],
        )
        for flat in order[: strength.pairs]:
            i, j = divmod(int(flat), len(targets))
            shooter, angle = int(own[i]), float(angles[i, j])
            need = table.power[i, j]
            dist = float(table.distance[i, j])
            if snipes:
                if math.isnan(need):
                    add(Candidate(shooter, "snipe", angle, 1.0))
                else:
                    add(Candidate(shooter, "snipe", angle, min(1.0, float(need) + 0.02)))
                    add(Candidate(shooter, "snipe", angle, min(1.0, float(need) + 0.2)))
                for row in _row_aims(board, shooter, targets, angles[i], table.distance[i], j):
                    power = max(float(np.nan_to_num(table.power[i, k], nan=1.0)) for k in row[1])
                    add(Candidate(shooter, "snipe", row[0], min(1.0, power + 0.03)))
            if lunges:
                for run in _lunge_runs(board, shooter, angle, dist, int(targets[j])):
                    add(Candidate(shooter, "lunge", angle, power_for_reach(rules, run) or 0.0))
    if lunges:
        for c in _homeward(board, side, own):
            add(c)
    if not out:
        # Nothing to aim at: a soft snipe toward the enemy half keeps the page moving.
        shooter = int(own[0])
        angle = -math.pi / 2 if side == "blue" else math.pi / 2
        add(Candidate(shooter, "snipe", angle, 0.0))
    return list(out.values())


def _row_aims(
    board: Board, shooter: int, targets: IntArray, angles: Any, dists: Any, j: int
) -> list[tuple[float, list[int]]]:
    """Aims that pass over target j and another enemy at once: two with one bullet."""
    r = board.rules.dot_radius
    widths = np.arcsin(np.minimum(1.0, r / np.maximum(dists, 1e-6)))
    gap = np.angle(np.exp(1j * (angles - angles[j])))
    aims = []
    for k in np.flatnonzero((np.abs(gap) < (widths + widths[j]) * 0.95) & (np.arange(len(targets)) != j)):
        # The bisector of the two overlap edges passes over both dots.
        lo = max(-widths[j], gap[k] - widths[k])
        hi = min(widths[j], gap[k] + widths[k])
        aims.append((float(angles[j] + (lo + hi) / 2), [j, int(k)]))
    return aims[:2]


def _lunge_runs(board: Board, shooter: int, angle: float, dist: float, target: int) -> list[float]:
    """Run lengths for a lunge at a man: just past him, and past the far wall of his base."""
    rules = board.rules
    ox, oy = board.xy[shooter]
    ux, uy = math.cos(angle), math.sin(angle)
    edge = page_exit(rules, float(ox), float(oy), ux, uy)
    runs = [dist + 2.5 * rules.dot_radius]
    home = int(board.home[target])
    if home >= 0:
        cx, cy = board.base_xy[home, 0] - ox, board.base_xy[home, 1] - oy
        proj = cx * ux + cy * uy
        disc = proj * proj - (cx * cx + cy * cy - board.base_r[home] ** 2)
        if disc > 0:
            runs.append(proj + math.sqrt(disc) + 2 * rules.dot_radius)
    shortest = reach(rules, 0.0)
    safe = edge - 2 * rules.dot_radius
    return [max(run, shortest) for run in runs if max(run, shortest) < safe]


def _homeward(board: Board, side: str, own: IntArray) -> list[Candidate]:
    """A stranded soldier (on open paper) runs back into the nearest own base he can land in."""
    rules = board.rules
    bases = board.bases_of(side)
    out: list[Candidate] = []
    if bases.size == 0:
        return out
    for s in own:
        if board.home[s] >= 0:
            continue
        d = np.hypot(board.base_xy[bases, 0] - board.xy[s, 0], board.base_xy[bases, 1] - board.xy[s, 1])
        for k in np.argsort(d)[:2]:
            # Only bases far enough for the softest run to stop inside them.
            if d[k] + board.base_r[bases[k]] * 0.5 >= reach(rules, 0.0):
                angle = math.atan2(
                    board.base_xy[bases[k], 1] - board.xy[s, 1], board.base_xy[bases[k], 0] - board.xy[s, 0]
                )
                out.append(Candidate(int(s), "lunge", angle, power_for_reach(rules, float(d[k])) or 0.0))
    return out


def promise(board: Board, cand: Candidate, *, link: int, steady: float) -> float:
    """A cheap forecast of a candidate's worth, to choose which ones to try through the engine."""
    f = forecast(board, cand.shooter, cand.kind, cand.angle, cand.power, link=link, steady=steady)
    value = f.kills - f.lost
    if cand.kind == "snipe":
        value += 0.5 * f.multi
    else:
        value += 0.3 * f.kills  # each kill is one more lunge
    return value
