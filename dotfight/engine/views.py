"""The numpy and byte views of one state that the snipe and lunge hot paths read: every circle's centre
and squared radius at once, and who holds which wall (`flick.wall_holders`, patched soldier by soldier
as `flick.holds` asks); and the roster the turn's options read (who stands, how many live).

Views are derived, never written after they are made, and cached on the state (`State.arrays`,
`State.base_arrays`, `State.roster`); a later state patches its predecessor's rather than rebuilding them.
"""

from __future__ import annotations

import itertools
import math
import operator
from array import array
from typing import TYPE_CHECKING, cast

import numpy as np
import numpy.typing as npt

from .flick import NO_WALL, SIDE_CODES, holder_codes, wall_holders
from .geometry import NEAR_SLACK, circles_near_line, quadratic_roots
from .guards import standing
from .values import SIDES, Side, Soldier, side_index

if TYPE_CHECKING:  # views are made from a state, which caches them
    from .state import State

FloatArray = npt.NDArray[np.float64]
BoolArray = npt.NDArray[np.bool_]


class BaseArrays:
    """Numpy views of the bases, kept while the bases do not change (all through play).

    `x`, `y`, `r2` and `code` end with a "no base" circle that encloses every point and that nobody holds
    (`flick.wall_holders` reads them so), so that the first circle enclosing a soldier's centre is his
    base or, when no wall encloses him, the last one (`n_bases`). `near2` is every circle's (bases',
    then soldiers' dots') squared radius and the coarse line test's slack. `own[side]` lists the side's walls
    and `routes[i]` the ids of the other walls of wall i's side (where a send from it may walk).
    """

    __slots__ = (
        "all_r2",
        "code",
        "n_bases",
        "near2",
        "near2_against",
        "own",
        "r2",
        "r2s",
        "routes",
        "x",
        "xs",
        "y",
        "ys",
    )

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
        self.near2: FloatArray = self.all_r2 + NEAR_SLACK
        # The coarse test a flick of each side makes: its own men's dots left out (-1, below any squared
        # distance), since the ink passes through them; they are then never solved in Python only to be
        # dropped. A soldier's side never changes, and these views live only while the soldiers' ids do.
        self.near2_against: dict[str, FloatArray] = {}
        for side in SIDES:
            near2 = self.near2.copy()
            near2[self.n_bases :][np.array([s.side == side for s in state.soldiers], dtype=bool)] = -1.0
            self.near2_against[side] = near2
        self.own: dict[str, tuple[int, ...]] = {
            side: tuple(i for i, b in enumerate(bases) if b.side == side) for side in SIDES
        }
        self.routes: tuple[tuple[str, ...], ...] = tuple(
            tuple(other.id for other in bases if other.side == b.side and other is not b) for b in bases
        )


class Arrays:
    """Numpy and byte views of one state for the snipe and lunge hot paths.

    `centres` holds every circle's centre as a row (x, y, 1), bases first, then soldiers' dots (`all_x`
    and `all_y` are its columns; their squared radii are the bases' views', `all_r2`). `home[j]` is the
    base whose wall encloses soldier j's centre (bases never overlap), or `n_bases` when no wall does;
    `counted[j]` (0 or 1) tells whether he holds that wall (`flick.holds`); `garrison[i]` counts base
    i's holders. `home` and `counted` are arrays of bytes (`array("B")`: a page in memory holds one byte
    a soldier for each, not a list's eight; they index, iterate and convert to numpy like lists).
    """

    __slots__ = ("centres", "counted", "described", "fixed", "garrison", "home", "men", "n_bases")

    centres: FloatArray  # shape (circles, 3): x, y and 1 (`geometry.circles_near_line`'s rows)
    n_bases: int
    home: array[int]
    counted: array[int]
    garrison: list[int]
    described: tuple[Soldier, ...]  # the soldiers these views were computed for
    fixed: BaseArrays  # the bases' views they were computed with
    men: tuple[tuple[str, ...], ...] | None  # `men_holding`, once asked

    @property
    def all_x(self) -> FloatArray:
        """Every circle's centre x (bases, then soldiers): a column of `centres`."""
        return self.centres[:, 0]

    @property
    def all_y(self) -> FloatArray:
        """Every circle's centre y (bases, then soldiers): a column of `centres`."""
        return self.centres[:, 1]

    @property
    def all_r2(self) -> FloatArray:
        """Every circle's squared radius: the bases', then the soldiers' dots'."""
        return self.fixed.all_r2

    @property
    def xs(self) -> list[float]:
        """Every circle's centre x as Python floats (bases, then soldiers)."""
        return self.fixed.xs + [s.x for s in self.described]

    @property
    def ys(self) -> list[float]:
        """Every circle's centre y as Python floats (bases, then soldiers)."""
        return self.fixed.ys + [s.y for s in self.described]

    def men_holding(self) -> tuple[tuple[str, ...], ...]:
        """Returns, for every wall, the ids of the soldiers holding it, in page order (a send's walkers).
        Worked out on first ask and kept with the views, which a page shares while its soldiers stay."""
        men = self.men
        if men is None:
            holding: list[list[str]] = [[] for _ in range(self.fixed.n_bases)]
            home, soldiers = self.home, self.described
            for j in itertools.compress(range(len(soldiers)), self.counted):
                holding[home[j]].append(soldiers[j].id)
            men = self.men = tuple(map(tuple, holding))
        return men

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
        fixed, soldiers = self.fixed, self.described
        n_bases, r2s = fixed.n_bases, fixed.r2s
        met: list[tuple[int, float, float]] = []
        # The coarse test leaves the flicker's own side out (`near2_against`): his own dot among them.
        for i in circles_near_line(self.centres, fixed.near2_against[side], px, py, ux, uy):
            if i >= n_bases:
                target = soldiers[i - n_bases]
                if not target.alive:
                    continue  # crossed out already
                ex = px - target.x
                ey = py - target.y
            else:
                ex = px - fixed.xs[i]
                ey = py - fixed.ys[i]
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
        fixed = new.fixed = state.base_arrays
        n_bases = new.n_bases = fixed.n_bases
        rows = (
            fixed.xs + [s.x for s in soldiers],
            fixed.ys + [s.y for s in soldiers],
            [1.0] * (n_bases + len(soldiers)),
        )
        new.centres = centres = np.array(rows, dtype=np.float64).T.copy()  # a row (x, y, 1) a circle
        home, counted, garrison = wall_holders(
            centres[n_bases:, 0],
            centres[n_bases:, 1],
            np.array(holder_codes(soldiers), dtype=np.int8),
            fixed.x,
            fixed.y,
            fixed.r2,
            fixed.code,
        )
        new.home = array("B", home.astype(np.uint8).tobytes())  # at most 16 bases (RuleSet's limits)
        new.counted = array("B", counted.tobytes())
        new.garrison = garrison.tolist()
        new.men = None
        return new

    def patched(self, state: State) -> Arrays:
        """Returns the views for `state`, a later page with the same bases, re-deriving only the soldiers
        that are not the very same (immutable) objects as the ones these views describe."""
        if state.soldiers is self.described:
            return self
        if len(state.soldiers) != len(self.described) or state.base_arrays is not self.fixed:
            return Arrays.build(state)
        # Which soldiers are new objects, compared at C speed (`is not` pairwise, then their positions).
        changed = list(
            itertools.compress(
                range(len(state.soldiers)), map(operator.is_not, self.described, state.soldiers)
            )
        )
        new = Arrays()
        new.described = state.soldiers
        new.fixed = fixed = self.fixed
        if not changed:  # views are never written after they are made, so they can be shared
            new.centres, new.home, new.counted = self.centres, self.home, self.counted
            new.n_bases, new.garrison, new.men = self.n_bases, self.garrison, self.men
            return new
        n_bases = new.n_bases = fixed.n_bases
        new.centres = centres = self.centres.copy()
        home = new.home = array("B", self.home)
        counted = new.counted = array("B", self.counted)
        garrison = new.garrison = list(self.garrison)
        bases = state.bases
        for j in changed:
            soldier = state.soldiers[j]
            if counted[j]:
                garrison[home[j]] -= 1
            centres[n_bases + j] = soldier.x, soldier.y, 1.0
            home[j] = wall = enclosing_wall(state, soldier.x, soldier.y)
            # `holds`, for the wall known to enclose him: he stands, for that wall's side.
            held = wall < n_bases and standing(soldier, bases[wall].side)
            counted[j] = held
            if held:
                garrison[wall] += 1
        new.men = None
        return new


class Roster:
    """Who stands and how many live on each side, in page order: what the turn's start and its options
    ask of every state. Derived from the soldiers alone and worked out per side on first ask, so a state
    keeps its predecessor's while the soldiers stay (`State.roster`) and pays only for the sides asked.
    """

    __slots__ = ("_living", "_standing", "soldiers")

    def __init__(self, soldiers: tuple[Soldier, ...]) -> None:
        self.soldiers = soldiers
        self._standing: list[tuple[str, ...] | None] = [None, None]  # blue's, red's, once asked
        self._living: list[int | None] = [None, None]

    def standing(self, side: Side) -> tuple[str, ...]:
        """The ids of the side's men `guards.standing` accepts (who may flick in its turn)."""
        k = side_index(side)
        ids = self._standing[k]
        if ids is None:
            # The other side's men are passed over before `standing` is asked (it would refuse them).
            ids = self._standing[k] = tuple(
                [s.id for s in self.soldiers if s.side == side and standing(s, side)]
            )
        return ids

    def anyone_standing(self, side: Side) -> bool:
        """Tells whether any man of the side stands: `standing`'s answer when known, else the first
        standing man found (a turn's end asks it of a state whose soldiers just changed)."""
        ids = self._standing[side_index(side)]
        if ids is not None:
            return bool(ids)
        return any(s.side == side and standing(s, side) for s in self.soldiers)

    def living(self, side: Side) -> int:
        """How many of the side's men live (on the road included)."""
        k = side_index(side)
        count = self._living[k]
        if count is None:
            count = self._living[k] = len([1 for s in self.soldiers if s.alive and s.side == side])
        return count


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
