"""The rule book's formulas (RULES.md §4–§6, §9), each written once: power and reach and their inverses,
the launch spread, who holds a wall and how full it is, what a wall or a man takes from a snipe and how
far it shakes a lunger, when a side is in its last stand and what its turn grants. The engine resolves
flicks with these, and the bot, the lab and the server ask them rather than re-derive a rule.

The spreads returned are the ones actually drawn (after `shake_sigmas`), before `steadiness`. Fullness,
wall loss and wall shake accept numpy arrays as well as one number; `wall_holders` is `holds` for every
soldier and wall at once (the engine's views and the bot's board both ask it).
"""

from __future__ import annotations

import math
from collections.abc import Iterable
from typing import TYPE_CHECKING, Any, TypeVar, overload

import numpy as np
import numpy.typing as npt

from .guards import standing
from .rules import RuleSet
from .values import Base, Soldier

if TYPE_CHECKING:  # only read: the state's own views ask `holds` and `wall_holders`
    from .state import State

Fullness = TypeVar("Fullness", float, npt.NDArray[np.float64])
IntArray = npt.NDArray[np.int64]
BoolArray = npt.NDArray[np.bool_]
FloatArray = npt.NDArray[np.float64]

# A side's code in `wall_holders`' arrays; a soldier who cannot hold a wall (crossed out, on the road)
# has `NO_HOLDER`, and the "no wall" circle `NO_WALL`: the two match nobody.
SIDE_CODES = {"blue": 1, "red": 2}
NO_HOLDER, NO_WALL = 3, 0


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


def holds(soldier: Soldier, base: Base) -> bool:
    """Tells whether the soldier is one of the base's garrison (RULES.md §5): the owner's, standing
    (living, off the road), his centre inside the wall (on the wall counts).

    >>> from dotfight.engine import RuleSet, apply, new_page
    >>> page, _ = apply(new_page(RuleSet.preset("quick"), seed=7), "blue", {"type": "quick_setup"})
    >>> holds(page.soldier("b3s1"), page.base("b3")), holds(page.soldier("b3s1"), page.base("b1"))
    (True, False)
    """
    return standing(soldier, base.side) and base.contains(soldier.x, soldier.y)


def holder_codes(soldiers: Iterable[Soldier]) -> list[int]:
    """Returns the code `wall_holders` reads for each soldier: his side's (`SIDE_CODES`) while he stands,
    else `NO_HOLDER` (`holds`' standing part, asked once per soldier).

    >>> from dotfight.engine import Soldier
    >>> holder_codes([Soldier("b1s1", "blue", 0, 0), Soldier("b2s1", "red", 0, 0, alive=False)])
    [1, 3]
    """
    codes = SIDE_CODES
    return [codes[s.side] if standing(s, s.side) else NO_HOLDER for s in soldiers]


def wall_holders(
    x: FloatArray,
    y: FloatArray,
    codes: npt.NDArray[Any],
    wall_x: FloatArray,
    wall_y: FloatArray,
    wall_r2: FloatArray,
    wall_codes: npt.NDArray[Any],
) -> tuple[IntArray, BoolArray, IntArray]:
    """`holds` for every soldier and wall at once: returns `home` (the first wall enclosing each
    soldier's centre, by the same sums as `Base.contains`), whether he holds it, and each wall's garrison.

    The soldiers' `codes` are `holder_codes`'; the walls' are their sides' (`SIDE_CODES`), and the walls
    end with a "no wall" circle enclosing every point (`wall_r2` inf, code `NO_WALL`): `home` is its index
    (the number of bases) for a soldier no wall encloses. Few, larger numpy steps: a small one costs ~1 µs.

    >>> inf = float("inf")
    >>> walls = np.array([0.0, 100.0, 0.0]), np.array([0.0, 0.0, 0.0]), np.array([100.0, 100.0, inf])
    >>> home, held, garrison = wall_holders(
    ...     np.array([0.0, 5.0, 100.0, 50.0]), np.zeros(4), np.array([1, NO_HOLDER, 1, 1]), *walls,
    ...     np.array([1, 2, NO_WALL]))
    >>> home.tolist(), held.tolist(), garrison.tolist()  # only the blue man standing in blue's wall holds
    ([0, 0, 1, 2], [True, False, False, False], [1, 0])
    """
    dx = x[:, None] - wall_x
    dy = y[:, None] - wall_y
    dx *= dx
    dy *= dy
    dx += dy
    # argmax finds the first enclosing circle in each row: his wall, or the "no wall" circle last.
    home: IntArray = (dx <= wall_r2).argmax(axis=1)
    held: BoolArray = codes == wall_codes[home]
    garrison: IntArray = np.bincount(home[held], minlength=len(wall_x) - 1)
    return home, held, garrison


@overload
def fullness(garrison: float, capacity: float) -> float: ...


@overload
def fullness(garrison: npt.NDArray[Any], capacity: npt.NDArray[Any]) -> FloatArray: ...


def fullness(garrison: Any, capacity: Any) -> Any:
    """Returns a wall's fullness `f = min(1, n / capacity)` for a garrison of n men (RULES.md §5); for
    numpy arrays of garrisons and capacities, every wall's.

    >>> fullness(6, 8), fullness(9, 8)
    (0.75, 1.0)
    >>> fullness(np.array([4, 8]), np.array([8.0, 4.0])).tolist()
    [0.5, 1.0]
    """
    if isinstance(garrison, np.ndarray):
        return np.minimum(1.0, garrison / capacity)
    return min(1.0, garrison / capacity)


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


def man_loss(rules: RuleSet) -> float:
    """Returns the share of what is left of a snipe that crossing a man out takes: `man_loss`.

    >>> man_loss(RuleSet.preset("classic"))  # 5 %
    0.05
    """
    return rules.man_loss


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


def flicks_granted(rules: RuleSet, last_stand: bool) -> int:
    """Returns the flicks a turn grants its side: `last_stand_flicks` in last stand, else 1 (RULES.md §9).

    >>> rules = RuleSet.preset("classic")  # two flicks in last stand
    >>> flicks_granted(rules, False), flicks_granted(rules, True)
    (1, 2)
    """
    return rules.last_stand_flicks if last_stand else 1


def steadiness_in(rules: RuleSet, last_stand: bool) -> float:
    """Returns the factor on every spread a side draws in its turn: `last_stand_steady` in last stand,
    else 1 (RULES.md §9).

    >>> rules = RuleSet.preset("classic")
    >>> steadiness_in(rules, False), steadiness_in(rules, True) == rules.last_stand_steady
    (1.0, True)
    """
    return rules.last_stand_steady if last_stand else 1.0


def steadiness(state: State) -> float:
    """Returns the factor on every spread drawn this turn (`steadiness_in` the turn in play; 1 outside
    play).

    >>> from dotfight.engine import RuleSet, new_page
    >>> steadiness(new_page(RuleSet.preset("quick"), seed=7))
    1.0
    """
    turn = state.turn
    return steadiness_in(state.rules, turn is not None and turn.last_stand)
