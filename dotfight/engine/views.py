"""The numpy and list views of one state that the snipe and lunge hot paths read: every circle's centre
and squared radius at once, and who holds which wall (`flick.wall_holders`, patched soldier by soldier
as `flick.holds` asks).

Views are derived, never written after they are made, and cached on the state (`State.arrays`,
`State.base_arrays`); a later state patches its predecessor's rather than rebuilding them.
"""

from __future__ import annotations

import itertools
import math
import operator
from typing import TYPE_CHECKING, cast

import numpy as np
import numpy.typing as npt

from .flick import NO_WALL, SIDE_CODES, holder_codes, wall_holders
from .geometry import circles_near_line, quadratic_roots
from .guards import standing
from .values import Side, Soldier

if TYPE_CHECKING:  # views are made from a state, which caches them
    from .state import State

FloatArray = npt.NDArray[np.float64]
BoolArray = npt.NDArray[np.bool_]


class BaseArrays:
    """Numpy views of the bases, kept while the bases do not change (all through play).

    `x`, `y`, `r2` and `code` end with a "no base" circle that encloses every point and that nobody holds
    (`flick.wall_holders` reads them so), so that the first circle enclosing a soldier's centre is his
    base or, when no wall encloses him, the last one (`n_bases`).
    """

    __slots__ = ("all_r2", "code", "n_bases", "r2", "r2s", "x", "xs", "y", "ys")

    def __init__(self, state: State) -> None:
        bases = state.bases
        self.n_bases = len(bases)
        self.xs: list[float] = [b.x for b in bases]
        self.ys: list[float] = [b.y for b in bases]
        r2 = [b.r * b.r for b in bases]
        # One numpy step for the three rows (a small numpy step costs about 1 µs, whatever its size).
        self.x, self.y, self.r2 = cast(
            "tuple[FloatArray, FloatArray, FloatArray]",
            np.array(([*self.xs, 0.0], [*self.ys, 0.0], [*r2, math.inf]), dtype=np.float64),
        )
        self.code: npt.NDArray[np.int8] = np.array(
            [SIDE_CODES[b.side] for b in bases] + [NO_WALL], dtype=np.int8
        )
        dot_r = state.rules.dot_radius
        self.r2s: list[float] = r2 + [dot_r * dot_r] * len(state.soldiers)
        self.all_r2: FloatArray = np.array(self.r2s, dtype=np.float64)


class Arrays:
    """Numpy and list views of one state for the snipe and lunge hot paths.

    `all_x`, `all_y`, `all_r2` hold every circle at once, bases first, then soldiers' dots. `home[j]` is
    the base whose wall encloses soldier j's centre (bases never overlap), or `n_bases` when no wall
    does; `counted[j]` tells whether he holds that wall (`flick.holds`); `garrison[i]` counts base i's
    holders.
    """

    __slots__ = (
        "all_r2",
        "all_x",
        "all_y",
        "counted",
        "described",
        "garrison",
        "home",
        "n_bases",
        "r2s",
        "xs",
        "ys",
    )

    all_x: FloatArray
    all_y: FloatArray
    all_r2: FloatArray
    xs: list[float]  # the same numbers as Python floats, for the few circles a line comes near
    ys: list[float]
    r2s: list[float]
    n_bases: int
    home: list[int]
    counted: list[bool]
    garrison: list[int]
    described: tuple[Soldier, ...]  # the soldiers these views were computed for

    def crossings(
        self, px: float, py: float, ux: float, uy: float, side: Side
    ) -> list[tuple[int, float, float]]:
        """Returns `(i, near, far)` for every circle a flick of `side` along the line through P along u
        meets: circle i (bases first, then soldiers' dots) between the distances `near` and `far`.

        A wall is met where the line crosses it, either way along the line (either distance may be
        behind P); a line only touching it does not cross it and is left out. A man is met only if he is
        a living enemy not wholly behind P, and `near` is where the line enters his dot (0 when P is
        inside it already); touching his dot meets him.

        The snipe and the lunge ask this for every straight run: numpy narrows every circle at once
        (`circles_near_line`), and the few it finds are solved exactly in Python (`quadratic_roots`).

        A line straight up through blue's centre base b3 (circle 2) and red's b4 (circle 3) from b3s1,
        and the first red men it meets in b4:

        >>> from dotfight.engine import RuleSet, apply, new_page
        >>> page, _ = apply(new_page(RuleSet.preset("quick"), seed=7), "blue", {"type": "quick_setup"})
        >>> page.arrays.crossings(500.0, 1050.0, 0.0, -1.0, "blue")[:4]
        [(2, -70.0, 70.0), (3, 630.0, 770.0), (30, 693.0, 707.0), (31, 637.0, 651.0)]
        """
        xs, ys, r2s, n_bases, soldiers = self.xs, self.ys, self.r2s, self.n_bases, self.described
        met: list[tuple[int, float, float]] = []
        for i in circles_near_line(self.all_x, self.all_y, self.all_r2, px, py, ux, uy):
            if i >= n_bases:
                target = soldiers[i - n_bases]
                if not target.alive or target.side == side:
                    continue  # crossed out already, or his own side's (the flicker's own dot among them)
            ex = px - xs[i]
            ey = py - ys[i]
            roots = quadratic_roots(ux * ex + uy * ey, ex * ex + ey * ey - r2s[i])
            if roots is None:
                continue
            near, far = roots
            if i < n_bases:
                if near == far:
                    continue  # a tangent touches the wall without crossing it
            elif far < 0.0:
                continue  # wholly behind P
            else:
                near = near if near > 0.0 else 0.0
            met.append((i, near, far))
        return met

    @classmethod
    def build(cls, state: State) -> Arrays:
        """Computes the views from scratch (few, larger numpy steps: small ones cost ~1 µs each)."""
        new = cls()
        soldiers = new.described = state.soldiers
        fixed = state.base_arrays
        n_bases = new.n_bases = fixed.n_bases
        xs = new.xs = fixed.xs + [s.x for s in soldiers]
        ys = new.ys = fixed.ys + [s.y for s in soldiers]
        all_x = new.all_x = np.array(xs, dtype=np.float64)
        all_y = new.all_y = np.array(ys, dtype=np.float64)
        new.all_r2 = fixed.all_r2
        new.r2s = fixed.r2s
        codes = np.array(holder_codes(soldiers), dtype=np.int8)
        home, counted, garrison = wall_holders(
            all_x[n_bases:], all_y[n_bases:], codes, fixed.x, fixed.y, fixed.r2, fixed.code
        )
        new.home = home.tolist()
        new.counted = counted.tolist()
        new.garrison = garrison.tolist()
        return new

    def patched(self, state: State) -> Arrays:
        """Returns the views for `state`, a later page with the same bases, re-deriving only the soldiers
        that are not the very same (immutable) objects as the ones these views describe."""
        if state.soldiers is self.described:
            return self
        if len(state.soldiers) != len(self.described):
            return Arrays.build(state)
        # Which soldiers are new objects, compared at C speed (`is not` pairwise, then their positions).
        changed = list(
            itertools.compress(
                range(len(state.soldiers)), map(operator.is_not, self.described, state.soldiers)
            )
        )
        new = Arrays()
        new.described = state.soldiers
        if not changed:  # views are never written after they are made, so they can be shared
            for name in Arrays.__slots__:
                if name != "described":
                    setattr(new, name, getattr(self, name))
            return new
        new.n_bases = n_bases = self.n_bases
        new.all_r2 = self.all_r2
        new.r2s = self.r2s
        new.all_x = self.all_x.copy()
        new.all_y = self.all_y.copy()
        new.xs = list(self.xs)
        new.ys = list(self.ys)
        new.home = list(self.home)
        new.counted = list(self.counted)
        new.garrison = list(self.garrison)
        bases = state.bases
        for j in changed:
            soldier = state.soldiers[j]
            if new.counted[j]:
                new.garrison[new.home[j]] -= 1
            new.all_x[n_bases + j] = new.xs[n_bases + j] = soldier.x
            new.all_y[n_bases + j] = new.ys[n_bases + j] = soldier.y
            new.home[j] = home = enclosing_wall(state, soldier.x, soldier.y)
            # `holds`, for the wall known to enclose him: he stands, for that wall's side.
            new.counted[j] = held = home < n_bases and standing(soldier, bases[home].side)
            if held:
                new.garrison[home] += 1
        return new


def enclosing_wall(state: State, x: float, y: float) -> int:
    """Returns the index of the base whose wall encloses the point (bases never overlap; on the wall
    counts), or the number of bases when none does: `State.base_at`'s answer as an index.

    >>> from dotfight.engine import RuleSet, apply, new_page
    >>> page, _ = apply(new_page(RuleSet.preset("quick"), seed=7), "blue", {"type": "quick_setup"})
    >>> enclosing_wall(page, 500, 1100), enclosing_wall(page, 500, 700) == len(page.bases)
    (2, True)
    """
    for i, base in enumerate(state.bases):
        if base.contains(x, y):
            return i
    return len(state.bases)
