"""The flick's numbers (RULES.md §4): power from the pull, reach from the power, the launch spread."""

from __future__ import annotations

import math

from .rules import RuleSet
from .state import State


def power(rules: RuleSet, dx: float, dy: float) -> float:
    """Returns `t = min(1, |v| / pull_max)`.

    >>> rules = RuleSet.preset("classic")  # pull_max 300
    >>> power(rules, 0.0, -150.0), power(rules, 0.0, -600.0)
    (0.5, 1.0)
    """
    return min(1.0, math.hypot(dx, dy) / rules.pull_max)


def reach(rules: RuleSet, t: float) -> float:
    """Returns `L = D × (reach_min_frac + (1 − reach_min_frac) × t^reach_curve)`.

    >>> rules = RuleSet.preset("classic")  # D ≈ 1720.5, reach_min_frac 0.2, reach_curve 2
    >>> [round(reach(rules, t), 1) for t in (0.0, 0.5, 1.0)]
    [344.1, 688.2, 1720.5]
    """
    curve = math.pow(t, rules.reach_curve)
    return rules.diagonal * (rules.reach_min_frac + (1.0 - rules.reach_min_frac) * curve)


def wild_spread(rules: RuleSet, t: float) -> float:
    """Returns the launch spread of a flick of power t, `σ = wildness × t^reach_curve` (before steadiness).

    >>> rules = RuleSet.preset("classic")  # wildness 0.10 radians
    >>> wild_spread(rules, 1.0), wild_spread(rules, 0.5)
    (0.1, 0.025)
    """
    return rules.wildness * math.pow(t, rules.reach_curve)


def steadiness(state: State) -> float:
    """Returns the factor on every spread drawn this turn: `last_stand_steady` in last stand, else 1."""
    turn = state.turn
    return state.rules.last_stand_steady if turn is not None and turn.last_stand else 1.0
