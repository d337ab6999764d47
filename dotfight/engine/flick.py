"""The rule book's formulas (RULES.md §4–§6, §9), each written once: power and reach and their inverses,
the launch spread, what a wall or a man takes from a snipe and how far it shakes a lunger, and when a side
is in its last stand. The engine resolves flicks with these, and the bot, the lab and the server ask them
rather than re-derive a rule.

The spreads returned are the ones actually drawn (after `shake_sigmas`), before `steadiness`. Wall loss
and wall shake accept a numpy array of fullnesses as well as one number.
"""

from __future__ import annotations

import math
from typing import TypeVar

import numpy as np
import numpy.typing as npt

from .rules import RuleSet
from .state import State

Fullness = TypeVar("Fullness", float, npt.NDArray[np.float64])


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


def power_for_reach(rules: RuleSet, length: float) -> float | None:
    """Returns the smallest power whose reach is at least `length` (0 for anything the softest flick
    reaches), or None when even a full-power flick falls short.

    >>> rules = RuleSet.preset("classic")
    >>> round(power_for_reach(rules, reach(rules, 0.5)), 9)
    0.5
    >>> power_for_reach(rules, 100.0), power_for_reach(rules, 2000.0)
    (0.0, None)
    """
    frac = length / rules.diagonal
    if frac > 1.0 + 1e-9:
        return None
    share = (frac - rules.reach_min_frac) / (1.0 - rules.reach_min_frac) if rules.reach_min_frac < 1 else 0.0
    if share <= 0.0:
        return 0.0
    return min(1.0, math.pow(share, 1.0 / rules.reach_curve))


def pull_for_reach(rules: RuleSet, length: float) -> float | None:
    """Returns how long a pull reaches `length` (`power_for_reach × pull_max`), or None when none does.

    >>> rules = RuleSet.preset("classic")  # pull_max 300
    >>> round(pull_for_reach(rules, reach(rules, 0.5)), 6)
    150.0
    """
    t = power_for_reach(rules, length)
    return None if t is None else t * rules.pull_max


def wild_spread(rules: RuleSet, t: float) -> float:
    """Returns the launch spread of a flick of power t (before steadiness):
    `σ = wildness_soft + (wildness − wildness_soft) × t^wildness_curve`.

    >>> rules = RuleSet.preset("classic")  # wildness 0.06 radians, curve 3, no spread at the softest power
    >>> wild_spread(rules, 1.0), wild_spread(rules, 0.5), wild_spread(rules, 0.0)
    (0.06, 0.0075, 0.0)
    >>> wild_spread(rules.replace(wildness_soft=0.03, wildness_curve=1), 0.5)
    0.045
    """
    shape = math.pow(t, rules.wildness_curve)
    if shape >= 1.0:
        return rules.wildness  # exactly, where rounding the sum could miss it by a hair
    soft = rules.wildness_soft
    return min(rules.wildness, soft + (rules.wildness - soft) * shape)


def wall_loss(rules: RuleSet, fullness: Fullness) -> Fullness:
    """Returns the share of what is left of a snipe that a wall of the given fullness (men inside over
    capacity, at most 1) takes: `wall_loss_empty + (wall_loss_full − wall_loss_empty) × f`.

    >>> rules = RuleSet.preset("classic")  # 3 % empty, 85 % full
    >>> wall_loss(rules, 0.0), wall_loss(rules, 1.0), round(wall_loss(rules, 0.5), 3)
    (0.03, 0.85, 0.44)
    """
    span = rules.wall_loss_full - rules.wall_loss_empty
    return rules.wall_loss_empty + span * fullness


def wall_shake(rules: RuleSet, fullness: Fullness) -> Fullness:
    """Returns the spread (radians) a wall of the given fullness turns a lunger by (before steadiness):
    `(shake_empty + (shake_full − shake_empty) × f) / shake_sigmas`.

    >>> rules = RuleSet.preset("classic", shake_sigmas=1)  # 1° empty, 57° full, read as one spread
    >>> wall_shake(rules, 0.0), wall_shake(rules, 1.0)
    (0.0175, 0.995)
    >>> round(wall_shake(rules.replace(shake_sigmas=3), 1.0), 4)  # 57° as the largest deflection
    0.3317
    """
    span = rules.shake_full - rules.shake_empty
    return (rules.shake_empty + span * fullness) / rules.shake_sigmas


def man_shake(rules: RuleSet) -> float:
    """Returns the spread (radians) crossing out a man turns a lunger by (before steadiness):
    `shake_man / shake_sigmas`.

    >>> man_shake(RuleSet.preset("classic", shake_sigmas=1))  # 2.3° read as one spread
    0.04
    """
    return rules.shake_man / rules.shake_sigmas


def link_shake(rules: RuleSet, link: int) -> float:
    """Returns the spread (radians) a chain's link `link` adds to the lunge's launch spread (the first
    lunge is link 0): `lunge_link_shake × link`.

    >>> link_shake(RuleSet.preset("classic"), 2)
    0.1
    """
    return rules.lunge_link_shake * link


def in_last_stand(rules: RuleSet, living: int) -> bool:
    """Tells whether a side with `living` soldiers left fights its last stand (RULES.md §9).

    >>> rules = RuleSet.preset("classic")  # last stand at 4
    >>> in_last_stand(rules, 4), in_last_stand(rules, 5)
    (True, False)
    """
    return living <= rules.last_stand_at


def steadiness(state: State) -> float:
    """Returns the factor on every spread drawn this turn: `last_stand_steady` in last stand, else 1.

    >>> from dotfight.engine import RuleSet, new_page
    >>> steadiness(new_page(RuleSet.preset("quick"), seed=7))
    1.0
    """
    turn = state.turn
    return state.rules.last_stand_steady if turn is not None and turn.last_stand else 1.0
