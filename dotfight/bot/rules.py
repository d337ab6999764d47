"""The engine's rule formulas and queries the bot asks, gathered in one import.

The bot never re-derives a rule: reach and its inverse, wall loss and shake, the spreads actually drawn
and every legality question come from `dotfight.engine.flick` and `dotfight.engine.query` (contract C1).
"""

from __future__ import annotations

import math
from functools import lru_cache
from typing import Any

import numpy as np
import numpy.typing as npt

from dotfight.engine import RuleSet, State
from dotfight.engine.flick import (
    flicks_granted,
    fullness,
    in_last_stand,
    link_shake,
    man_loss,
    man_shake,
    power_for_reach,
    reach,
    steadiness,
    steadiness_in,
    wall_loss,
    wall_shake,
    wild_spread,
)
from dotfight.engine.geometry import edge_distance
from dotfight.engine.query import can_stand, refusal

FloatArray = npt.NDArray[np.float64]

__all__ = [
    "Curves",
    "aim",
    "can_stand",
    "curves",
    "edge_distance",
    "flicks_granted",
    "fullness",
    "in_last_stand",
    "legal",
    "link_shake",
    "man_loss",
    "man_shake",
    "page_exit",
    "power_for_reach",
    "reach",
    "refusal",
    "steadiness",
    "steadiness_in",
    "wall_loss",
    "wall_shake",
    "wild_spread",
]


def legal(state: State, side: str, action: Any) -> bool:
    """Whether the engine would accept the action now (asked, not resolved)."""
    return refusal(state, side, action) is None


def page_exit(rules: RuleSet, ox: float, oy: float, ux: float, uy: float) -> float:
    """How far a ray from (ox, oy) runs before it leaves the page (the engine's geometry)."""
    return edge_distance(ox, oy, ux, uy, rules.page_width, rules.page_height)


def aim(rules: RuleSet, angle: float, power: float) -> list[float]:
    """The aim vector `[dx, dy]` for a direction and a power (never shorter than the 1-unit minimum)."""
    length = max(1.5, min(1.0, power) * rules.pull_max)
    return [length * math.cos(angle), length * math.sin(angle)]


class Curves:
    """The engine's inverse reach and launch spread, tabulated once per rule set so the bot can ask them
    for whole arrays of lengths and powers at once (linear interpolation on a fine grid)."""

    GRID = 2049

    def __init__(self, rules: RuleSet) -> None:
        self.diagonal = rules.diagonal
        self._lengths = np.linspace(0.0, rules.diagonal, self.GRID)
        self._powers = np.array([power_for_reach(rules, float(x)) or 0.0 for x in self._lengths])
        self._powers[-1] = 1.0
        self._ts = np.linspace(0.0, 1.0, self.GRID)
        self._spreads = np.array([wild_spread(rules, float(t)) for t in self._ts])

    def power_for(self, lengths: FloatArray) -> FloatArray:
        """The softest power reaching each length; nan where no flick reaches."""
        out = _lookup(self._powers, np.asarray(lengths, dtype=np.float64) / self.diagonal)
        return np.where(lengths <= self.diagonal, out, np.nan)

    def spread(self, powers: FloatArray) -> FloatArray:
        """The launch spread (before steadiness) of flicks of these powers."""
        return _lookup(self._spreads, np.nan_to_num(powers, nan=1.0))


def _lookup(table: FloatArray, share: FloatArray) -> FloatArray:
    """Linear interpolation in a table sampled evenly over [0, 1] (faster than `np.interp`'s search)."""
    at = np.clip(share, 0.0, 1.0) * (len(table) - 1)
    low = np.minimum(at.astype(np.int64), len(table) - 2)
    frac = at - low
    return np.asarray(table[low] * (1.0 - frac) + table[low + 1] * frac, dtype=np.float64)


@lru_cache(maxsize=64)
def curves(rules: RuleSet) -> Curves:
    """The tabulated curves of a rule set (remembered: every judgement asks)."""
    return Curves(rules)
